"""JUnit XML of real stored runs, read back with junitparser (a JUnit consumer), not by eye."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite

from polygon_voice.api import RunOptions, load_suite, run_suite
from polygon_voice.report.junit import transcript_excerpt, write_junit, xml_text
from polygon_voice.store import Store, new_run_id

GOLDEN = Path(__file__).parent / "golden"
# A hostile caller line: controls XML 1.0 cannot hold, a lone surrogate, CDATA's end and markup.
HOSTILE = 'A\x00B\x1b[31mC\x07 \ud800 ]]> <script>alert(1)</script> & "q" \x7f\u2028end'


@dataclass(frozen=True)
class Runs:
    store: Store
    flawed: str
    robust: str
    reports: dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    folder = tmp_path_factory.mktemp("junit")
    store = Store(f"sqlite:///{folder / 'results.db'}")
    loaded = load_suite("three-layer")
    ids, reports = {}, {}
    for agent in ("reference:flawed", "reference:robust"):
        out = folder / agent.split(":")[1]
        result = run_suite(loaded, RunOptions(agent=agent, out=out), store=store)
        ids[agent] = result.run_id
        reports[result.run_id] = json.loads((out / "report.json").read_text(encoding="utf-8"))
    yield Runs(store, ids["reference:flawed"], ids["reference:robust"], reports)
    store.close()


def _suites(path: Path) -> list[TestSuite]:
    return list(JUnitXml.fromfile(str(path)))


def _cases(suite: TestSuite) -> list[TestCase]:
    return list(suite)


def _outcome(case: TestCase) -> str:
    kinds = {type(result) for result in case.result}
    for kind, name in ((Error, "error"), (Skipped, "skipped"), (Failure, "failure")):
        if kind in kinds:
            return name
    return "passed"


def _expected_outcome(entry: dict[str, Any], case: dict[str, Any] | None) -> str:
    """What report.json says a conversation's testcase must be."""
    if entry["failures"]:
        return "error"
    if entry["not_exercised"] is not None:
        return "skipped"
    verdict = entry.get("judgement", {}).get("verdict")
    not_met = entry.get("expect") is not None and not entry["expect"]["met"]
    not_e2e = case is not None and case["not_exercised"] is None and not case["e2e"]
    return "failure" if verdict in ("fail", "unscored") or not_met or not_e2e else "passed"


def test_counts_equal_the_runs_report_json(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.flawed, runs.robust], tmp_path / "junit.xml")
    suites = _suites(path)
    assert [s.name for s in suites] == [
        f"three-layer reference:flawed {runs.flawed}",
        f"three-layer reference:robust {runs.robust}",
    ]
    for suite, run_id in zip(suites, (runs.flawed, runs.robust), strict=True):
        report = runs.reports[run_id]
        summary = report["summary"]
        gate_failed = sum(not check["passed"] for check in report["release_gate"]["checks"])
        not_e2e = report["e2e_integrity"]["total"] - report["e2e_integrity"]["passed"]
        entries = report["conversations"]
        errors = sum(bool(entry["failures"]) for entry in entries)
        assert suite.tests == summary["conversations"] + len(report["release_gate"]["checks"])
        # A call a model failed for is an error, even when it was not exercised either.
        assert suite.errors == errors
        assert suite.skipped == summary["not_exercised"] - sum(
            bool(entry["failures"]) and entry["not_exercised"] is not None for entry in entries
        )
        # Every three-layer call has an expectation: its failures are those not end-to-end.
        assert suite.failures == not_e2e + gate_failed
        assert suite.failures == summary["expectations"]["not_met"] + gate_failed
    assert suites[0].failures > 0
    assert suites[1].failures == 0


def test_each_testcase_follows_its_report_entry(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.flawed], tmp_path / "junit.xml")
    report = runs.reports[runs.flawed]
    cases = {c["id"]: c for c in report["cases"]}
    testcases = {c.name: c for c in _cases(_suites(path)[0])}
    for entry in report["conversations"]:
        testcase = testcases[entry["id"]]
        assert testcase.classname == f"polygon.three-layer.{entry['scenario_id']}"
        assert _outcome(testcase) == _expected_outcome(entry, cases.get(entry["scenario_id"]))


def test_a_failure_names_verdict_gates_and_root_cause(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.flawed], tmp_path / "junit.xml")
    corr04 = next(c for c in _cases(_suites(path)[0]) if c.name == "corr-04")
    (failure,) = corr04.result
    assert isinstance(failure, Failure)
    assert failure.message is not None
    assert "verdict fail" in failure.message
    assert "gates failed: expected_outcome" in failure.message
    assert "root cause: stale_tool_args (execution layer)" in failure.message
    assert failure.text is not None
    assert "axis stale_write_prevented:" in failure.text
    assert corr04.system_out is not None
    assert corr04.system_out.startswith("turn 0 [t=0.00s] agent: Hello")


def test_one_testcase_per_release_gate_check(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.flawed, runs.robust], tmp_path / "junit.xml")
    for suite, run_id in zip(_suites(path), (runs.flawed, runs.robust), strict=True):
        checks = runs.reports[run_id]["release_gate"]["checks"]
        gate = [c for c in _cases(suite) if c.classname == "polygon.three-layer.release_gate"]
        assert [c.name for c in gate] == [check["id"] for check in checks]
        for testcase, check in zip(gate, checks, strict=True):
            assert (_outcome(testcase) == "passed") == check["passed"]
            if not check["passed"]:
                assert testcase.result[0].message.startswith(f"{check['id']} {check['name']}")


def test_the_suite_carries_the_run_identity(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.robust], tmp_path / "junit.xml")
    (suite,) = _suites(path)
    properties = {p.name: p.value for p in suite.properties()}
    run = runs.store.get_run(runs.robust)
    assert properties["run_id"] == runs.robust
    assert properties["agent"] == "reference:robust"
    assert properties["seed"] == "0"
    assert properties["rubric_version"] == run.config["rubric"] == "v3"
    assert properties["judge"] == "deterministic"
    assert properties["polygon_version"] == run.polygon_version


def _hostile_run(store: Store, source_id: str) -> str:
    """A copy of three calls of a stored run, every caller line of them HOSTILE."""
    run = store.get_run(source_id).model_copy(update={"id": new_run_id()})
    store.create_run(run)
    for index, played in enumerate(store.iter_conversations(source_id)):
        if index == 3:
            break
        turns = [
            t.model_copy(update={"text": HOSTILE, "heard": HOSTILE}) if t.speaker == "caller" else t
            for t in played.turns
        ]
        store.add_conversation(run.id, index, played.model_copy(update={"turns": turns}))
    return run.id


def test_hostile_transcripts_still_make_xml_that_parses(runs: Runs, tmp_path: Path) -> None:
    run_id = _hostile_run(runs.store, runs.flawed)
    path = write_junit(runs.store, [run_id], tmp_path / "junit.xml")
    raw = path.read_bytes()
    assert b"\x1b" not in raw
    assert b"\x00" not in raw
    assert b"<script>" not in raw
    (suite,) = _suites(path)
    outs = [c.system_out or "" for c in _cases(suite)]
    # The text comes back as it was stored, minus what XML cannot hold (the store keeps
    # U+FFFD for NUL and the lone surrogate).
    stored = next(runs.store.iter_conversations(run_id))
    caller = next(t for t in stored.turns if t.speaker == "caller")
    expected = xml_text(" ".join(caller.text.split()))
    assert any(expected in out for out in outs)
    assert ']]> <script>alert(1)</script> & "q"' in expected


def test_xml_text_removes_only_what_xml_forbids() -> None:
    assert xml_text(HOSTILE) == 'AB[31mC  ]]> <script>alert(1)</script> & "q" \x7f\u2028end'
    assert xml_text("tab\tnew\nline\r\U0001f600 \ufffe\uffff") == "tab\tnew\nline\r\U0001f600 "


def test_long_transcripts_are_cut_and_say_so(runs: Runs) -> None:
    played = next(runs.store.iter_conversations(runs.flawed))
    excerpt = transcript_excerpt(played, limit=120)
    assert excerpt.count("\n") < len(played.turns)
    assert f"more turns; polygon show RUN --conversation {played.id}]" in excerpt
    whole = transcript_excerpt(played)
    assert "[cut:" not in whole
    assert whole.count("\nturn ") + 1 == len(played.turns)


def test_an_unknown_run_is_a_store_error(runs: Runs, tmp_path: Path) -> None:
    from polygon_voice.store import StoreError

    with pytest.raises(StoreError):
        write_junit(runs.store, ["no-such-run"], tmp_path / "junit.xml")
    assert not (tmp_path / "junit.xml").exists()


def _normalised(text: str, runs: Runs) -> str:
    text = text.replace(runs.flawed, "RUN_ID")
    text = re.sub(r'timestamp="[^"]*"', 'timestamp="TIMESTAMP"', text)
    return re.sub(r'(name="polygon_version" value=)"[^"]*"', r'\1"VERSION"', text)


def test_golden_file_of_the_flawed_run(runs: Runs, tmp_path: Path) -> None:
    path = write_junit(runs.store, [runs.flawed], tmp_path / "junit.xml")
    actual = _normalised(path.read_text(encoding="utf-8"), runs)
    golden = GOLDEN / "junit_three_layer_flawed.xml"
    if os.environ.get("POLYGON_UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8"), (
        "the JUnit output changed: check the difference, then regenerate the golden file with "
        "POLYGON_UPDATE_GOLDEN=1"
    )


def test_a_model_failure_is_an_error_and_an_unexercised_call_is_skipped(runs: Runs) -> None:
    from polygon_voice.report.files import iter_conversation_entries
    from polygon_voice.report.junit import conversation_case

    run = runs.store.get_run(runs.flawed)
    played, entry = next(iter_conversation_entries(runs.store, runs.flawed))
    failed = {**entry, "failures": {"judge": "judge call to http://m/v1 failed: HTTP 500"}}
    testcase = conversation_case(run, played, {**failed, "not_exercised": "caller failed"})
    (error,) = testcase.result
    assert isinstance(error, Error)
    assert error.message == "the judge model failed for this call"
    assert error.text == "judge: judge call to http://m/v1 failed: HTTP 500"
    unexercised = {**entry, "not_exercised": "the caller hung up before saying anything"}
    (skipped,) = conversation_case(run, played, unexercised).result
    assert isinstance(skipped, Skipped)
    assert skipped.message == "not exercised: the caller hung up before saying anything"
    passed = {**entry, "judgement": {**entry["judgement"], "verdict": "warn"}}
    passed["expect"] = {**entry["expect"], "met": True}
    assert conversation_case(run, played, passed).result == []
    unscored = {**passed, "judgement": {**passed["judgement"], "verdict": "unscored"}}
    (failure,) = conversation_case(run, played, unscored).result
    assert isinstance(failure, Failure)
    assert failure.message.startswith("verdict unscored")
