"""Which scenario an imported call stands for (`--scenario-key`, the expect file's
`scenario`), and an imported run compared beside a synthetic one: `polygon compare` and the
app's comparison screen."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from polygon_voice.compare.build import load_run
from polygon_voice.store import Store
from polygon_voice.web.app import create_app
from polygon_voice.web.settings import WebSettings
from tests.cli.conftest import Polygon
from tests.imports.test_judging import (
    MOVED_TO_FRIDAY,
    chat,
    imported,
    shown,
    write_calls,
    write_expect,
)

FIXTURES = Path(__file__).parent / "fixtures"


def test_a_scenario_key_names_the_scenario_and_missing_keys_are_counted(
    polygon: Polygon,
) -> None:
    summary = imported(polygon, str(FIXTURES / "vapi"), "--scenario-key", "customer.number")
    assert summary["imported"] == 3
    assert summary["scenario_key_missing"] == 2
    scenarios = {c["id"]: c["scenario_id"] for c in shown(polygon, summary["run_id"]).values()}
    assert scenarios["vapi-rich-1"] == "+15550100"
    assert scenarios["vapi-min-1"] == "vapi-min-1"  # no such field: its call id
    code, _out, err = polygon("import", str(FIXTURES / "vapi"), "--scenario-key", "customer.number")
    assert code == 0, err
    assert "2 call(s) have no --scenario-key value" in err


def test_a_scenario_key_that_is_no_path_is_refused(polygon: Polygon) -> None:
    code, _out, err = polygon("import", str(FIXTURES / "vapi"), "--scenario-key", "a..b")
    assert code == 2
    assert "dotted path" in err


def test_the_expect_files_scenario_wins_over_the_key(polygon: Polygon, tmp_path: Path) -> None:
    path = write_expect(tmp_path, {"vapi-rich-1": {"scenario": "reschedule"}})
    summary = imported(
        polygon,
        str(FIXTURES / "vapi"),
        "--scenario-key",
        "customer.number",
        "--expect",
        str(path),
    )
    scenarios = {c["id"]: c["scenario_id"] for c in shown(polygon, summary["run_id"]).values()}
    assert scenarios["vapi-rich-1"] == "reschedule"
    assert summary["scenario_key_missing"] == 2


def _matched_import(polygon: Polygon, tmp_path: Path) -> str:
    """Two real calls of the example suite's `change-quantity` and one of no such scenario."""
    calls = write_calls(
        tmp_path, chat("kept", "friday"), chat("broken", "monday"), chat("other", "friday")
    )
    expect = write_expect(
        tmp_path,
        {
            "kept": {"scenario": "change-quantity", "expect": MOVED_TO_FRIDAY},
            "broken": {"scenario": "change-quantity", "expect": MOVED_TO_FRIDAY},
            "other": {"scenario": "not-in-the-suite", "expect": MOVED_TO_FRIDAY},
        },
    )
    run_id: str = imported(polygon, str(calls), "--expect", str(expect))["run_id"]
    return run_id


def _synthetic(polygon: Polygon) -> str:
    code, out, _err = polygon("runs", "--json")
    assert code == 0
    [run] = [r for r in json.loads(out)["runs"] if r["kind"] == "simulated"]
    run_id: str = run["run_id"]
    return run_id


def test_several_calls_of_one_scenario_are_one_row_of_the_comparison(
    played: Polygon, tmp_path: Path
) -> None:
    imported_id = _matched_import(played, tmp_path)
    with Store(f"sqlite:///{played.db}") as store:
        data = load_run(store, imported_id)
    both = data.composites["change-quantity"]
    assert len(both) == 2
    assert both[0] != both[1]
    assert data.first_call["change-quantity"] == "kept"
    synthetic = _synthetic(played)
    code, out, err = played("compare", synthetic, imported_id, "--json")
    assert code == 0, err
    comparison = json.loads(out)
    [row] = comparison["matrix"]
    assert row["scenario"] == "change-quantity"
    assert row["composites"][imported_id] == round(sum(both) / 2, 2)
    assert [d["scenario"] for d in comparison["divergence"]] == ["change-quantity"]
    assert "not-in-the-suite" in comparison["incomparable"]


def test_the_comparison_screen_shows_an_imported_run_beside_a_synthetic_one(
    played: Polygon, tmp_path: Path
) -> None:
    imported_id = _matched_import(played, tmp_path)
    synthetic = _synthetic(played)
    settings = WebSettings(db_url=f"sqlite:///{played.db}")
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        response = client.get(f"/compare?run={synthetic}&run={imported_id}")
    assert response.status_code == 200, response.text[:500]
    assert imported_id in response.text
    assert synthetic in response.text
    assert "change-quantity" in response.text
    assert 'data-testid="compare-refused"' not in response.text
