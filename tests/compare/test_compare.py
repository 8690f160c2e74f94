"""CMP-1, -2, -5, RUB-6 on hand-made run data, and `polygon compare` end to end."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from polygon_voice.compare.build import CompareError, RunData, check_rubrics, config_row, matrix
from polygon_voice.compare.stats import mean_interval
from polygon_voice.store import RunRecord, Store, resolve_db_url
from tests.cli.conftest import Polygon


def run(run_id: str, composites: dict[str, list[float]], rubric: str = "v2") -> RunData:
    record = RunRecord(
        id=run_id,
        suite="s",
        suite_path="s.yaml",
        suite_hash="h",
        agent="a",
        seed=0,
        started_at=datetime.now(UTC),
    )
    data = RunData(record, rubric=rubric, composites=composites)
    data.first_call = {scenario: f"{run_id}-{scenario}" for scenario in composites}
    return data


def test_matrix_is_sorted_by_spread_largest_first() -> None:
    a = run("A", {"s1": [50.0], "s2": [90.0, 70.0], "s3": [60.0]})
    b = run("B", {"s1": [55.0], "s2": [40.0], "s3": [60.0]})
    rows, incomparable = matrix([a, b])
    assert [r["scenario"] for r in rows] == ["s2", "s1", "s3"]
    assert rows[0] == {"scenario": "s2", "composites": {"A": 80.0, "B": 40.0}, "spread": 40.0}
    assert incomparable == []


def test_missing_scenarios_are_incomparable_never_zero() -> None:
    a = run("A", {"s1": [50.0], "only_a": [90.0], "unscored": []})
    b = run("B", {"s1": [70.0], "unscored": [80.0]})
    rows, incomparable = matrix([a, b])
    assert [r["scenario"] for r in rows] == ["s1"]
    assert incomparable == ["only_a", "unscored"]
    assert all(0.0 not in r["composites"].values() for r in rows)


def test_different_rubric_versions_are_refused() -> None:
    with pytest.raises(CompareError) as caught:
        check_rubrics([run("A", {}, "v1"), run("B", {}, "v2")])
    message = str(caught.value)
    assert "RUB-6" in message
    assert "polygon rejudge A --rubric v2" in message
    check_rubrics([run("A", {}, "v2"), run("B", {}, "v2")])  # one version: accepted


def test_mean_interval_uses_student_t() -> None:
    mean, interval = mean_interval([1.0, 2.0, 3.0])
    assert mean == pytest.approx(2.0)
    assert interval == pytest.approx((2.0 - 4.303 / 3**0.5, 2.0 + 4.303 / 3**0.5))
    assert mean_interval([5.0]) == (5.0, None)
    assert mean_interval([]) == (None, None)


def test_compare_reference_agents_end_to_end(polygon: Polygon) -> None:
    for agent in ("reference:flawed", "reference:robust"):
        code, _, err = polygon("run", "three-layer", "--agent", agent)
        assert code == 0, err
    with Store(resolve_db_url(str(polygon.db))) as store:
        runs = {r.agent: r.id for r in store.list_runs()}
    flawed, robust = runs["reference:flawed"], runs["reference:robust"]
    code, out, err = polygon("compare", flawed, robust, "--out", "cmp")
    assert code == 0, err
    result = json.loads((polygon.workdir / "cmp" / "compare.json").read_text())
    assert set(result) >= {
        "configs", "scorecards", "matrix", "divergence", "incomparable", "analysis"
    }  # fmt: skip
    assert [c["run_id"] for c in result["configs"]] == [flawed, robust]
    assert result["configs"][0]["agent"] == "reference:flawed"
    assert result["configs"][0]["model"] is None
    cards = {c["run_id"]: c for c in result["scorecards"]}
    assert cards[robust]["composite"]["mean"] > cards[flawed]["composite"]["mean"]
    assert cards[flawed]["composite"]["ci_low"] < cards[flawed]["composite"]["mean"]
    assert cards[flawed]["axes"]["captured"]["total"] == 30
    assert all("ci_low" in p for p in cards[flawed]["probes"])
    spreads = [row["spread"] for row in result["matrix"]]
    assert spreads == sorted(spreads, reverse=True)
    assert len(spreads) == 30
    assert result["incomparable"] == []
    assert len(result["divergence"]) == 30
    assert {d["rule"] for d in result["divergence"]} <= {
        "tool_calls", "call_end", "wording", "speaker"
    }  # fmt: skip
    assert f"run {robust} scores best" in result["analysis"]
    assert "Overall" in out


def test_compare_refuses_a_single_run(polygon: Polygon) -> None:
    code, _, err = polygon("compare", "abc")
    assert code == 2
    assert "at least two runs" in err


def test_compare_refuses_runs_under_different_rubrics(polygon: Polygon) -> None:
    for rubric in ("v1", "v2"):
        code, _, err = polygon(
            "run", "three-layer", "--agent", "reference:robust", "--rubric", rubric
        )
        assert code == 0, err
    with Store(resolve_db_url(str(polygon.db))) as store:
        ids = [r.id for r in store.list_runs()]
    code, _, err = polygon("compare", *ids, "--out", "cmp")
    assert code == 2
    assert "different rubric versions" in err
    assert "polygon rejudge" in err
    assert not (polygon.workdir / "cmp").exists()


def test_config_row_reads_what_a_prompt_agent_records() -> None:
    record = run("A", {}).record.model_copy(
        update={
            "config": {
                "agent_model": "m",
                "agent_prompt_version": "pv",
                "agent_profile_hash": "ph",
            }
        }
    )
    assert config_row(record) == {
        "run_id": "A",
        "agent": "a",
        "model": "m",
        "prompt_version": "pv",
        "profile_hash": "ph",
    }
