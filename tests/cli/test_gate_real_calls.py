"""`polygon gate` on real calls (IMP-2): not applicable, said, exit 0; never a pass or a fail."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Polygon
from tests.replay.conftest import ORDERS


def _import(polygon: Polygon) -> str:
    code, out, err = polygon("import", str(ORDERS), "--json")
    assert code == 0, err
    run_id: str = json.loads(out)["run_id"]
    return run_id


def test_the_gate_of_an_imported_run_is_not_applicable(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    run_id = _import(polygon)
    code, out, err = polygon("gate", run_id)
    assert code == 0, err
    assert "not applicable: real calls have no three-layer cases" in out
    assert "passes" not in out
    assert "fails" not in out
    code, out, err = polygon("gate", run_id[:8], "--json")
    assert code == 0, err
    document = json.loads(out)
    assert document["run_id"] == run_id
    assert (document["applicable"], document["passed"], document["kind"]) == (
        False,
        None,
        "imported",
    )
    assert document["checks"] == []


def test_the_gate_of_a_replay_run_is_not_applicable(tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    run_id = _import(polygon)
    code, out, err = polygon("replay", run_id, "--agent", "reference:robust", "--json")
    assert code == 0, err
    replay_id = json.loads(out)["run_id"]
    code, out, err = polygon("gate", replay_id, "--json")
    assert code == 0, err
    assert json.loads(out)["kind"] == "replay"
    assert json.loads(out)["applicable"] is False
