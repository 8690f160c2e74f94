"""Imported and simulated runs told apart: `kind` in `runs --json` and report.json's header,
the mark in `polygon runs`, and `polygon show` of a tool call that has no state version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE_SUITE, Polygon

CHAT = {"id": "real-1", "messages": [
    {"role": "user", "content": "Move me to Friday."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
     "function": {"name": "reschedule", "arguments": "{\"day\": \"fri\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"},
    {"role": "assistant", "content": "Done, Friday it is."},
]}  # fmt: skip


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[Polygon, str, str]:
    """A database with a simulated run and an imported one: (command, simulated, imported)."""
    polygon = Polygon(tmp_path_factory.mktemp("kinds"))
    code, _out, err = polygon("run", str(EXAMPLE_SUITE), "--out", "sim", "-q")
    assert code == 0, err
    calls = polygon.workdir / "calls.json"
    calls.write_text(json.dumps(CHAT))
    code, out, err = polygon("import", str(calls), "--name", "october", "--json")
    assert code == 0, err
    imported_id = json.loads(out)["run_id"]
    simulated = json.loads((polygon.workdir / "sim" / "report.json").read_text())["run_id"]
    return polygon, simulated, imported_id


def test_runs_json_says_the_kind_of_every_run(both: tuple[Polygon, str, str]) -> None:
    polygon, simulated, imported_id = both
    code, out, err = polygon("runs", "--json")
    assert code == 0, err
    kinds = {run["run_id"]: run["kind"] for run in json.loads(out)["runs"]}
    assert kinds == {simulated: "simulated", imported_id: "imported"}


def test_report_json_header_says_the_kind(both: tuple[Polygon, str, str], tmp_path: Path) -> None:
    polygon, _simulated, imported_id = both
    assert json.loads((polygon.workdir / "sim" / "report.json").read_text())["kind"] == (
        "simulated"
    )
    code, _out, err = polygon("rejudge", imported_id, "--out", str(tmp_path / "rj"), "-q")
    assert code == 0, err
    assert json.loads((tmp_path / "rj" / "report.json").read_text())["kind"] == "imported"
    code, out, err = polygon("show", imported_id, "--json")
    assert code == 0, err
    assert json.loads(out)["kind"] == "imported"


def test_runs_marks_an_imported_run(both: tuple[Polygon, str, str]) -> None:
    polygon, simulated, imported_id = both
    code, out, err = polygon("runs")
    assert code == 0, err
    lines = {line.split()[1]: line for line in out.splitlines() if line.count("│") > 2}
    assert "october (imported)" in lines[imported_id]
    assert "(imported)" not in lines[simulated]


def test_show_prints_a_dash_for_what_an_imported_tool_call_has_not_got(
    both: tuple[Polygon, str, str],
) -> None:
    polygon, simulated, imported_id = both
    code, out, err = polygon("show", imported_id, "--conversation", "real-1")
    assert code == 0, err
    assert "(state —, key —)" in out
    assert "None" not in out
    code, out, err = polygon("show", simulated, "--conversation", "change-quantity")
    assert code == 0, err
    assert "(state v" in out  # a simulated call's version is still shown


def test_the_run_list_names_the_kind_the_import_writes() -> None:
    from polygon_voice.imports.run import RUN_KIND
    from polygon_voice.report.run_list import IMPORTED

    assert IMPORTED == RUN_KIND


@pytest.mark.parametrize(
    ("config", "kind"),
    [
        ({"kind": "imported"}, "imported"),
        ({"kind": "replay", "replay_of": "abc"}, "replay"),
        ({}, "simulated"),
        ({"kind": "something else"}, "simulated"),  # an unknown kind is never taken for real calls
    ],
)
def test_the_kind_of_a_run_is_read_from_its_config(config: dict[str, str], kind: str) -> None:
    from datetime import UTC, datetime

    from polygon_voice.report.run_list import run_kind
    from polygon_voice.store import RunRecord

    run = RunRecord(
        id="r1", suite="s", suite_path="s", suite_hash="h", agent="a", seed=0,
        started_at=datetime.now(UTC), config=config,
    )  # fmt: skip
    assert run_kind(run) == kind
