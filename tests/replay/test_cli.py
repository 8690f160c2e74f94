"""`polygon replay`: the summary, the compare command, errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.store import Store
from tests.cli.conftest import Polygon
from tests.replay.conftest import ORDERS, import_judged


@pytest.fixture
def polygon(tmp_path: Path) -> Polygon:
    return Polygon(tmp_path)


def imported(polygon: Polygon) -> str:
    store = Store(f"sqlite:///{polygon.db}")
    try:
        return import_judged(store, ORDERS)
    finally:
        store.close()


def test_replay_prints_what_it_did_and_the_compare_command(polygon: Polygon) -> None:
    run_id = imported(polygon)
    code, out, err = polygon("replay", run_id, "--agent", "reference:robust", "--quiet")
    assert code == 0, err
    assert "2 calls replayed, 1 skipped" in out
    assert "call empty-caller skipped: the recorded call has no caller lines to play" in err
    replay_id = out.split("Replay ")[1].split()[0]
    assert f"polygon compare {run_id} {replay_id}" in out
    code, out, err = polygon("compare", run_id, replay_id, "--json", "--quiet")
    assert code == 0, err
    assert {row["scenario"] for row in json.loads(out)["divergence"]} == {
        "order-call-1",
        "order-call-2",
    }


def test_replay_json_carries_the_replay_figures(polygon: Polygon) -> None:
    run_id = imported(polygon)
    code, out, err = polygon("replay", run_id, "--agent", "reference:robust", "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["replay_of"] == run_id
    assert (document["replayed"], document["mismatches"], document["exit_code"]) == (2, 0, 0)
    assert document["compare"].startswith(f"polygon compare {run_id} ")


def test_a_run_that_is_not_an_import_is_a_clear_error(polygon: Polygon) -> None:
    run_id = imported(polygon)
    code, out, _ = polygon("replay", run_id, "--agent", "reference:robust", "--json")
    replay_id = json.loads(out)["run_id"]
    code, _, err = polygon("replay", replay_id, "--agent", "reference:robust")
    assert code == 2
    assert f"run {replay_id} is not an imported run; replay takes the calls of" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["no-such-run", "--agent", "reference:robust"], "no-such-run"),
        (["RUN", "--agent", "no_such_module:Agent"], "no_such_module"),
        (["RUN", "--agent", "reference:robust", "--on-mismatch", "maybe"], "maybe"),
    ],
)
def test_bad_input_exits_2(polygon: Polygon, args: list[str], expected: str) -> None:
    run_id = imported(polygon)
    code, _, err = polygon("replay", *[run_id if a == "RUN" else a for a in args])
    assert code == 2
    assert expected in err
    assert "Traceback" not in err


def test_llm_without_a_caller_model_exits_2_before_a_call_runs(
    polygon: Polygon, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("POLYGON_CALLER_MODEL", "POLYGON_MODEL", "POLYGON_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    run_id = imported(polygon)
    code, _, err = polygon("replay", run_id, "--agent", "reference:robust", "--on-mismatch", "llm")
    assert code == 2
    assert "caller" in err
    assert "POLYGON_CALLER_MODEL" in err
    code, out, _ = polygon("runs", "--json")
    assert code == 0
    assert len(json.loads(out)) == 1  # only the import: the replay never started


def test_html_reports_the_import_and_the_replay_together(polygon: Polygon) -> None:
    run_id = imported(polygon)
    page = polygon.workdir / "replay.html"
    code, out, err = polygon(
        "replay", run_id, "--agent", "reference:robust", "--quiet", "--html", str(page)
    )
    assert code == 0, err
    text = page.read_text(encoding="utf-8")
    replay_id = out.split("Replay ")[1].split()[0]
    assert run_id in text
    assert replay_id in text


def test_a_run_with_no_call_to_replay_exits_2(polygon: Polygon) -> None:
    lonely = polygon.workdir / "lonely.jsonl"
    lonely.write_text(
        '{"id": "only-agent", "messages": [{"role": "assistant", "content": "Hello?"}]}\n',
        encoding="utf-8",
    )
    store = Store(f"sqlite:///{polygon.db}")
    try:
        run_id = import_judged(store, lonely, expect=None)
    finally:
        store.close()
    code, _, err = polygon("replay", run_id, "--agent", "reference:robust")
    assert code == 2
    assert "call only-agent skipped: the recorded call has no caller lines to play" in err
    assert f"run {run_id} has no call to replay" in err
