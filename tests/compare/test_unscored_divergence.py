"""CMP-3 for calls without a score: an imported run and its replay part at a turn even when
no call is scored (IMP-2), while CMP-5 keeps such scenarios out of the matrix."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from polygon_voice.compare.build import RunData, matrix, turn_scenarios
from polygon_voice.store import RunRecord, Store
from tests.cli.conftest import Polygon
from tests.replay.conftest import ORDERS, import_judged


def _run(run_id: str, composites: dict[str, list[float]], called: list[str]) -> RunData:
    record = RunRecord(
        id=run_id, suite="s", suite_path="s.yaml", suite_hash="h", agent="a", seed=0,
        started_at=datetime.now(UTC),
    )  # fmt: skip
    data = RunData(record, rubric="v3", composites=composites)
    data.first_call = {scenario: f"{run_id}-{scenario}" for scenario in called}
    return data


def test_turns_are_compared_for_every_scenario_called_in_every_run() -> None:
    a = _run("A", {"s1": [50.0], "s2": [90.0], "quiet": []}, ["s1", "s2", "quiet", "only_a"])
    b = _run("B", {"s1": [70.0], "s2": [90.0]}, ["s1", "s2", "quiet"])
    rows, incomparable = matrix([a, b])
    scored = [row["scenario"] for row in rows]
    assert scored == ["s1", "s2"]
    assert incomparable == ["only_a", "quiet"]  # CMP-5 unchanged
    # The matrix's order first, then the unscored ones; never a scenario one run lacks.
    assert turn_scenarios([a, b], scored) == ["s1", "s2", "quiet"]


@pytest.fixture
def replayed(tmp_path: Path) -> tuple[Polygon, str, str]:
    """orders.jsonl imported with no expectation (every call unscored) and replayed."""
    polygon = Polygon(tmp_path)
    store = Store(f"sqlite:///{polygon.db}")
    try:
        imported = import_judged(store, ORDERS, expect=None)
    finally:
        store.close()
    code, out, err = polygon("replay", imported, "--agent", "reference:robust", "--json")
    assert code == 0, err
    return polygon, imported, json.loads(out)["run_id"]


def test_an_unscored_import_and_its_replay_have_divergence_points(
    replayed: tuple[Polygon, str, str],
) -> None:
    polygon, imported, replay = replayed
    code, out, err = polygon("compare", imported, replay, "--json", "--quiet")
    assert code == 0, err
    result = json.loads(out)
    assert result["matrix"] == []
    assert set(result["incomparable"]) >= {"order-call-1", "order-call-2"}
    rows = {row["scenario"]: row for row in result["divergence"]}
    assert set(rows) == {"order-call-1", "order-call-2"}
    assert all(row["scored"] is False for row in rows.values())
    assert all((row["a"], row["b"]) == (imported, replay) for row in rows.values())
    # The replay plays the recorded caller lines against another agent: they part somewhere.
    assert any(row["turn"] is not None for row in rows.values())
    assert "their turns are compared all the same" in result["analysis"]
    code, out, err = polygon("compare", imported, replay, "--quiet")
    assert code == 0, err
    assert "order-call-1 (unscored)" in out


def test_the_comparison_screen_shows_unscored_divergences(
    replayed: tuple[Polygon, str, str],
) -> None:
    from polygon_voice.report.html import render_html_report
    from polygon_voice.report.views import comparison_view

    polygon, imported, replay = replayed
    with Store(f"sqlite:///{polygon.db}") as store:
        view = comparison_view(store, [imported, replay])
        html = render_html_report(store, [imported, replay])
    sides = {side["scenario"]: side for side in view["side_by_side"]}
    assert set(sides) == {"order-call-1", "order-call-2"}
    for side in sides.values():
        assert side["scored"] is False
        assert [r["index"] for r in side["rows"] if r["divergence"]] in ([side["turn"]], [])
    assert html.count('data-scored="false"') == 2
    assert html.count('data-testid="turns-only"') == 2


def test_the_app_comparison_screen_shows_unscored_divergences(
    replayed: tuple[Polygon, str, str],
) -> None:
    from fastapi.testclient import TestClient

    from polygon_voice.web.app import create_app
    from polygon_voice.web.settings import WebSettings
    from tests.web.conftest import BASE_URL
    from tests.web.dom import parse

    polygon, imported, replay = replayed
    app = create_app(WebSettings(db_url=f"sqlite:///{polygon.db}"))
    with TestClient(app, base_url=BASE_URL) as client:
        response = client.get(f"/compare?run={imported}&run={replay}")
    assert response.status_code == 200, response.text[:500]
    doc = parse(response.text)
    sides = doc.all(data_testid="side-by-side")
    assert sorted(side.attrs["data-scenario"] for side in sides) == [
        "order-call-1",
        "order-call-2",
    ]
    assert all(side.attrs["data-scored"] == "false" for side in sides)
    assert len(doc.all(data_testid="turns-only")) == 2
