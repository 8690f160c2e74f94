"""Chart specs are Vega-Lite v6 with their data inline, and their rows are the run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from polygon_voice.report import charts
from polygon_voice.report.views import comparison_view, run_view
from polygon_voice.store import Store
from tests.report.report_store import open_store, run


@pytest.fixture(scope="module")
def store_and_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str]:
    store = open_store(tmp_path_factory.mktemp("charts"))
    return store, run(store, "reference:flawed")


def layers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return spec.get("layer", [spec])


def fields(spec: dict[str, Any]) -> set[str]:
    """Every field an encoding of the spec reads."""
    found = set()
    for layer in layers(spec):
        for channel in layer["encoding"].values():
            items = channel if isinstance(channel, list) else [channel]
            found |= {item["field"] for item in items if "field" in item}
    return found


def check_shape(spec: dict[str, Any]) -> list[dict[str, Any]]:
    assert spec["$schema"] == "https://vega.github.io/schema/vega-lite/v6.json"
    for layer in layers(spec):
        assert isinstance(layer["mark"], dict)
        assert layer["mark"]["type"]
        assert layer["encoding"]
    rows = spec["data"]["values"]
    assert "url" not in spec["data"]  # nothing to fetch
    for row in rows:
        assert fields(spec) <= set(row), "every encoded field is in every row"
        assert not any("." in key for key in row)  # Vega would read a dot as a path
    return rows


def test_run_charts_hold_the_runs_rows(store_and_run: tuple[Store, str]) -> None:
    store, run_id = store_and_run
    view = run_view(store, run_id)
    made = view["charts"]
    assert set(made) == {"composite", "criteria", "probes", "repeats"}
    composite = check_shape(made["composite"])
    scored = [c for c in view["conversations"] if c["composite"] is not None]
    assert sorted((r["conversation"], r["composite"]) for r in composite) == sorted(
        (c["id"], c["composite"]) for c in scored
    )
    criteria = check_shape(made["criteria"])
    assert {(r["criterion"], r["mean"]) for r in criteria} == {
        (c["name"], c["mean"]) for c in view["criteria"]
    }
    assert all(0 <= r["mean"] <= 5 for r in criteria)
    probes = check_shape(made["probes"])
    known = [p for p in view["probes"] if p["compliance"] is not None]
    assert {(r["probe"], r["compliance"], r["ci_low"], r["ci_high"]) for r in probes} == {
        (p["id"], p["compliance"], p["ci_low"], p["ci_high"]) for p in known
    }
    assert all(r["ci_low"] <= r["compliance"] <= r["ci_high"] for r in probes)
    repeats = check_shape(made["repeats"])
    assert {r["scenario"] for r in repeats} == {c["scenario_id"] for c in scored}
    label = f"reference:flawed · {run_id[: charts.SHORT_ID]}"
    assert all(r["run"] == label for r in composite + criteria + probes + repeats)


def test_a_comparison_labels_each_run_by_its_agent_and_id(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    ids = [run(store, "reference:flawed"), run(store, "reference:robust", noise=0.3)]
    ids.append(run(store, "reference:robust"))  # the same agent twice
    view = comparison_view(store, ids)
    agents = {ids[0]: "reference:flawed", ids[1]: "reference:robust", ids[2]: "reference:robust"}
    expected = {f"{agents[i]} · {i[: charts.SHORT_ID]}" for i in ids}
    for name, spec in view["charts"].items():
        assert {r["run"] for r in spec["data"]["values"]} == expected, name


def test_run_labels_stay_unique_when_ids_start_alike() -> None:
    labels = charts.run_labels(
        [("abcdef123456", "agent.py:Bot"), ("abcdef129999", "agent.py:Bot"), ("0f0f0f0f0f0f", "x")]
    )
    assert labels == {
        "abcdef123456": "agent.py:Bot · abcdef123",
        "abcdef129999": "agent.py:Bot · abcdef129",
        "0f0f0f0f0f0f": "x · 0f0f0f0f0",
    }
    assert charts.run_labels([("short", "a")]) == {"short": "a · short"}


def test_probe_whiskers_span_the_interval() -> None:
    spec = charts.probes_chart(
        [
            {"run": "a", "probe": "p", "compliance": 0.5, "ci_low": 0.2, "ci_high": 0.8},
            {"run": "a", "probe": "never", "compliance": None, "ci_low": None, "ci_high": None},
        ]
    )
    rule, point = spec["layer"]
    assert rule["mark"]["type"] == "rule"
    assert (rule["encoding"]["x"]["field"], rule["encoding"]["x2"]["field"]) == (
        "ci_low",
        "ci_high",
    )
    assert point["encoding"]["x"]["field"] == "compliance"
    assert [r["probe"] for r in spec["data"]["values"]] == ["p"]  # never applicable: no dot


def test_criteria_bars_stand_side_by_side_per_run() -> None:
    rows = [
        {"run": "a", "criterion": "x", "mean": 4.0},
        {"run": "b", "criterion": "x", "mean": 2.5},
    ]
    spec = charts.criteria_chart(rows)
    check_shape(spec)
    assert spec["encoding"]["xOffset"]["field"] == "run"
    assert spec["encoding"]["y"]["scale"]["domain"] == [0, 5]
    assert spec["data"]["values"] == rows


def test_composite_chart_is_the_same_every_time() -> None:
    rows = [{"run": "a", "conversation": f"c{i}", "scenario": "s", "composite": float(i)}
            for i in range(12)]  # fmt: skip
    rows.append({"run": "a", "conversation": "x", "scenario": "s", "composite": None})
    spec = charts.composite_chart(rows)
    assert spec == charts.composite_chart(rows)
    assert len(spec["data"]["values"]) == 12  # an unscored call is not a zero
    assert {layer["mark"]["type"] for layer in spec["layer"]} == {"boxplot", "point"}


def test_repeats_are_sorted_by_their_spread() -> None:
    rows = [
        {"run": "a", "scenario": "steady", "conversation": "s1", "composite": 70.0},
        {"run": "a", "scenario": "steady", "conversation": "s2", "composite": 72.0},
        {"run": "a", "scenario": "wild", "conversation": "w1", "composite": 10.0},
        {"run": "a", "scenario": "wild", "conversation": "w2", "composite": 90.0},
    ]
    spec = charts.repeats_chart(rows)
    check_shape(spec)
    spreads = {(r["scenario"], r["spread"]) for r in spec["data"]["values"]}
    assert spreads == {("steady", 2.0), ("wild", 80.0)}
    rule, points = spec["layer"]
    assert rule["encoding"]["x"]["aggregate"] == "min"
    assert rule["encoding"]["x2"]["aggregate"] == "max"
    assert points["encoding"]["y"]["sort"] == {
        "field": "spread", "op": "max", "order": "descending"
    }  # fmt: skip
    assert "spread" not in rows[0]  # the caller's rows are left as they were
