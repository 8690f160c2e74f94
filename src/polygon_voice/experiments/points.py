"""The points of a sweep: which parameter values each one sets (SWEEP-1).

A point is a mapping of parameter name -> value over the base configuration; the empty
mapping is the base itself. Strategies:

* `one-at-a-time`: the base first, then each varied parameter's values in turn with every
  other parameter at the base (a value equal to the base's is not repeated);
* `grid`: every combination, in the order of the file (the last parameter changes fastest);
* `random`: `points` draws from the sweep seed: a listed value uniformly, a range's value
  uniformly between its ends (rounded to 4 decimals, whole for integer parameters). The
  same file and seed give the same points; repeated draws are kept once.
"""

from __future__ import annotations

import itertools
from typing import Any

from polygon_voice.experiments.sweep_file import (
    INTEGER_PARAMETERS,
    MAX_POINTS,
    Axis,
    SweepFile,
    varied,
)
from polygon_voice.seeding import rng_for

Point = dict[str, Any]
_DIGITS = 4


class TooManyPoints(ValueError):
    """A strategy would make more points than a sweep may have."""


def axis_values(name: str, axis: Axis[Any]) -> list[Any]:
    """The values of one parameter: its list, or its range spread evenly (ends included)."""
    if axis.values is not None:
        return list(dict.fromkeys(_plain(v) for v in axis.values))
    assert axis.range is not None
    start, stop, steps = float(axis.range.start), float(axis.range.to), axis.range.steps
    spread = [start + (stop - start) * i / (steps - 1) for i in range(steps)]
    return list(dict.fromkeys(_rounded(name, value) for value in spread))


def sweep_points(sweep: SweepFile, base_values: dict[str, Any]) -> list[Point]:
    """The sweep's points, first to last; `base_values` are the base's value of each varied
    parameter (None when the base leaves it to the agent file or the suite)."""
    axes = {name: axis_values(name, axis) for name, axis in varied(sweep.vary).items()}
    if sweep.strategy == "grid":
        points = _grid(axes)
    elif sweep.strategy == "random":
        assert sweep.points is not None
        points = _random(sweep, sweep.points)
    else:
        points = _one_at_a_time(axes, base_values)
    if len(points) > MAX_POINTS:
        raise TooManyPoints(
            f"the {sweep.strategy} strategy makes {len(points)} points, more than "
            f"{MAX_POINTS}; vary fewer values or use strategy: random"
        )
    return points


def _one_at_a_time(axes: dict[str, list[Any]], base_values: dict[str, Any]) -> list[Point]:
    points: list[Point] = [{}]
    for name, values in axes.items():
        points.extend({name: value} for value in values if value != base_values.get(name))
    return points


def _grid(axes: dict[str, list[Any]]) -> list[Point]:
    names = list(axes)
    total = 1
    for values in axes.values():
        total *= len(values)
        if total > MAX_POINTS:
            raise TooManyPoints(
                f"the grid has more than {MAX_POINTS} points; vary fewer values or use "
                "strategy: random"
            )
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*axes.values())]


def _random(sweep: SweepFile, count: int) -> list[Point]:
    rng = rng_for("sweep-points", sweep.name, sweep.seed)
    axes = varied(sweep.vary)
    points: list[Point] = []
    seen: set[str] = set()
    for _ in range(count):
        point: Point = {}
        for name, axis in axes.items():
            if axis.values is not None:
                point[name] = _plain(rng.choice(axis.values))
            else:
                assert axis.range is not None
                low, high = float(axis.range.start), float(axis.range.to)
                point[name] = _rounded(name, rng.uniform(min(low, high), max(low, high)))
        key = repr(sorted(point.items()))
        if key not in seen:
            seen.add(key)
            points.append(point)
    return points


def _rounded(name: str, value: float) -> float | int:
    if name in INTEGER_PARAMETERS:
        return round(value)
    return round(value, _DIGITS)


def _plain(value: Any) -> Any:
    """Enum members as their string value, so a point is plain JSON."""
    return getattr(value, "value", value)
