"""Strategies make the right points: one at a time around the base, the grid, seeded random."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.experiments.points import TooManyPoints, axis_values, sweep_points
from polygon_voice.experiments.sweep_file import SweepFile, varied


def sweep(strategy: str = "one-at-a-time", **extra: Any) -> SweepFile:
    data: dict[str, Any] = {
        "name": "s",
        "base": {"agent": "prompt:agent.yaml", "temperature": 0.3},
        "suite": "three-layer",
        "vary": {
            "temperature": {"values": [0.0, 0.3, 1.0]},
            "noise": {"range": {"from": 0, "to": 1, "steps": 3}},
        },
        "strategy": strategy,
        **extra,
    }
    return SweepFile.model_validate(data)


def test_a_range_spreads_evenly_with_both_ends_and_integers_stay_whole() -> None:
    file = sweep()
    assert axis_values("noise", varied(file.vary)["noise"]) == [0.0, 0.5, 1.0]
    difficulty = SweepFile.model_validate(
        {
            **file.model_dump(by_alias=True),
            "vary": {"difficulty": {"range": {"from": 1, "to": 5, "steps": 3}}},
        }
    )
    assert axis_values("difficulty", varied(difficulty.vary)["difficulty"]) == [1, 3, 5]


def test_one_at_a_time_starts_at_the_base_and_skips_the_base_value() -> None:
    points = sweep_points(sweep(), {"temperature": 0.3})
    assert points == [
        {},
        {"temperature": 0.0},
        {"temperature": 1.0},
        {"noise": 0.0},
        {"noise": 0.5},
        {"noise": 1.0},
    ]


def test_the_grid_is_every_combination_last_parameter_fastest() -> None:
    points = sweep_points(sweep("grid"), {})
    assert len(points) == 9
    assert points[:4] == [
        {"temperature": 0.0, "noise": 0.0},
        {"temperature": 0.0, "noise": 0.5},
        {"temperature": 0.0, "noise": 1.0},
        {"temperature": 0.3, "noise": 0.0},
    ]


def test_random_points_repeat_for_a_seed_and_change_with_it() -> None:
    first = sweep_points(sweep("random", points=5, seed=7), {})
    again = sweep_points(sweep("random", points=5, seed=7), {})
    other = sweep_points(sweep("random", points=5, seed=8), {})
    assert first == again
    assert first != other
    for point in first:
        assert point["temperature"] in (0.0, 0.3, 1.0)
        assert 0.0 <= point["noise"] <= 1.0


def test_a_grid_over_the_limit_is_refused_before_any_point_runs() -> None:
    many = {f"k{i}": {"values": list(range(10))} for i in range(3)}
    data = sweep("grid").model_dump(by_alias=True)
    data["vary"] = {"params": many}
    with pytest.raises(TooManyPoints, match="more than 200"):
        sweep_points(SweepFile.model_validate(data), {})
