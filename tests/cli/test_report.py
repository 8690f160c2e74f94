"""`polygon report`, `polygon run --html/--junit` and the demo's report, over real stored runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from junitparser import JUnitXml

from polygon_voice.store import Store
from tests.cli.conftest import Polygon


def _run(polygon: Polygon, agent: str, *extra: str) -> str:
    code, _out, err = polygon("run", "three-layer", "--agent", agent, "--out", agent, *extra, "-q")
    assert code in (0, 1), err
    with Store(f"sqlite:///{polygon.db}") as store:
        return store.list_runs()[0].id


def _report(polygon: Polygon, folder: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((polygon.workdir / folder / "report.json").read_text())
    return data


def test_report_writes_junit_of_several_runs(polygon: Polygon) -> None:
    flawed = _run(polygon, "reference:flawed")
    robust = _run(polygon, "reference:robust")
    code, out, err = polygon("report", flawed[:6], robust, "--junit", "ci/junit.xml")
    assert code == 0, err
    assert "JUnit XML: ci/junit.xml" in out
    suites = list(JUnitXml.fromfile(str(polygon.workdir / "ci" / "junit.xml")))
    assert [s.name.split()[-1] for s in suites] == [flawed, robust]
    for suite, folder in zip(suites, ("reference:flawed", "reference:robust"), strict=True):
        summary = _report(polygon, folder)["summary"]
        assert suite.tests == summary["conversations"] + 4  # and the four gate checks
        assert suite.skipped == summary["not_exercised"]


def test_report_needs_a_file_to_write(polygon: Polygon) -> None:
    run_id = _run(polygon, "reference:robust")
    code, _, err = polygon("report", run_id)
    assert code == 2
    assert "say which file to write: --html FILE, --junit FILE or both" in err
    assert "Traceback" not in err


def test_report_of_an_unknown_run_is_a_clear_error(polygon: Polygon) -> None:
    _run(polygon, "reference:robust")
    code, _, err = polygon("report", "nosuchrun", "--junit", "junit.xml")
    assert code == 2
    assert "nosuchrun" in err
    assert "Traceback" not in err
    assert not (polygon.workdir / "junit.xml").exists()


def test_report_of_an_unknown_judgement_set(polygon: Polygon) -> None:
    run_id = _run(polygon, "reference:robust")
    code, _, err = polygon("report", run_id, "--junit", "j.xml", "--judgement-set", "nope")
    assert code == 2
    assert "no judgement set 'nope'" in " ".join(err.split())
    assert not (polygon.workdir / "j.xml").exists()


def test_report_to_a_folder_that_cannot_be_written(polygon: Polygon) -> None:
    run_id = _run(polygon, "reference:robust")
    (polygon.workdir / "taken").write_text("a file, not a folder")
    code, _, err = polygon("report", run_id, "--junit", "taken/junit.xml")
    assert code == 2
    assert "cannot write the report" in err


def test_run_writes_junit_after_the_run(polygon: Polygon) -> None:
    code, out, err = polygon(
        "run", "three-layer", "--agent", "reference:flawed", "--out", "o", "--junit", "j.xml"
    )
    assert code == 0, err
    assert "JUnit XML: j.xml" in out
    (suite,) = JUnitXml.fromfile(str(polygon.workdir / "j.xml"))
    report = _report(polygon, "o")
    assert suite.name.endswith(str(report["run_id"]))
    summary = report["summary"]
    failed_checks = sum(not c["passed"] for c in report["release_gate"]["checks"])
    assert suite.failures == summary["expectations"]["not_met"] + failed_checks


def test_run_json_keeps_stdout_for_the_json(polygon: Polygon) -> None:
    code, out, err = polygon(
        "run", "three-layer", "--agent", "reference:robust", "--json", "--junit", "j.xml"
    )
    assert code == 0, err
    document = json.loads(out)  # nothing but the JSON document on stdout
    assert "JUnit XML: j.xml" in err
    (suite,) = JUnitXml.fromfile(str(polygon.workdir / "j.xml"))
    assert suite.name.endswith(document["run_id"])


# The HTML report itself is tested with the report; here only that the commands write it.
def test_run_and_report_write_the_html_report(polygon: Polygon) -> None:
    code, out, err = polygon(
        "run", "three-layer", "--agent", "reference:robust", "--out", "o",
        "--html", "r.html", "--junit", "j.xml",
    )  # fmt: skip
    assert code == 0, err
    assert "HTML report: r.html" in out
    assert "JUnit XML: j.xml" in out
    run_id = str(_report(polygon, "o")["run_id"])
    page = (polygon.workdir / "r.html").read_text(encoding="utf-8")
    assert page.lstrip().lower().startswith("<!doctype html")
    assert run_id in page
    other = _run(polygon, "reference:flawed")
    code, out, err = polygon("report", run_id, other, "--html", "both.html")
    assert code == 0, err
    both = (polygon.workdir / "both.html").read_text(encoding="utf-8")
    assert run_id in both
    assert other in both
    assert 'data-testid="comparison"' in both


def test_demo_writes_the_report_and_the_personas(polygon: Polygon) -> None:
    result = polygon.subprocess("demo", "--out", "demo", "--quiet")
    assert result.returncode == 0, result.stderr
    folder = polygon.workdir / "demo"
    assert f"Open in a browser: {Path('demo') / 'report.html'}" in result.stdout
    page = (folder / "report.html").read_text(encoding="utf-8")
    with Store(f"sqlite:///{polygon.db}") as store:
        runs = store.list_runs()
        by_suite = {run.suite: run for run in runs}
        three_layer = [run.id for run in runs if run.suite == "three-layer"]
        personas = store.list_personas()
    assert len(three_layer) == 2
    assert all(run_id in page for run_id in three_layer)
    assert 'data-testid="comparison"' in page
    # The order line's prompt, a few personas made from it, and a run they played.
    assert (folder / "prompt.md").read_text(encoding="utf-8").startswith("# Order line agent")
    assert len(personas) == 3
    assert {p.prompt_path for p in personas} == {str((folder / "prompt.md").resolve())}
    played = by_suite["demo-personas"]
    assert [link["persona"] for link in played.config["personas"]] == [p.id for p in personas]


def test_demo_again_keeps_an_edited_prompt_and_reuses_its_personas(polygon: Polygon) -> None:
    code, _, err = polygon("demo", "--out", "demo", "--quiet")
    assert code == 0, err
    prompt = polygon.workdir / "demo" / "prompt.md"
    with Store(f"sqlite:///{polygon.db}") as store:
        first = [p.id for p in store.list_personas()]
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nAlways be polite.\n")
    code, _out, err = polygon("demo", "--out", "demo", "--quiet")
    assert code == 0, err
    assert prompt.read_text(encoding="utf-8").endswith("Always be polite.\n")
    with Store(f"sqlite:///{polygon.db}") as store:
        assert [p.id for p in store.list_personas()] == first
        played = [run for run in store.list_runs() if run.suite == "demo-personas"]
    assert len(played) == 2
    assert [link["persona"] for link in played[0].config["personas"]] == first
    # The personas are now stale: the prompt editor and `personas list` say so.
    _, listed, _ = polygon("personas", "list")
    assert listed.count("STALE") == 3
