"""Robustness curves: how the score falls as a condition gets harder, per configuration.

For every condition a sweep varies over two or more numeric values (noise 0 -> 1, difficulty
1 -> 5, tool fault rate, latency), one row per scored point: the condition's value, the
point's mean composite and pass rate (as %, so both read on 0-100), and its configuration —
the point's other settings — which is the line the point belongs to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polygon_voice.experiments.leaderboard import PointScore
from polygon_voice.experiments.sweep_file import CONDITIONS

NUMERIC_CONDITIONS = tuple(c for c in CONDITIONS if c != "persona_type")


def curve_conditions(points: Sequence[PointScore]) -> list[str]:
    """The numeric conditions that take two or more values among the scored points."""
    found = []
    for name in NUMERIC_CONDITIONS:
        values = {p.settings.get(name) for p in points if p.mean_composite is not None}
        values.discard(None)
        if len(values) > 1:
            found.append(name)
    return found


def curve_rows(points: Sequence[PointScore], condition: str) -> list[dict[str, Any]]:
    """Rows of one condition's curve: `condition`, `config`, `measure`, `value`, `point`,
    ordered by configuration, then condition value."""
    rows: list[dict[str, Any]] = []
    shared = _shared_settings(points)
    for point in points:
        level = point.settings.get(condition)
        if level is None or point.mean_composite is None:
            continue
        config = configuration(point.settings, condition, shared)
        base = {"condition": condition, "level": level, "config": config, "point": point.index}
        rows.append({**base, "measure": "composite", "value": round(point.mean_composite, 1)})
        if point.pass_rate is not None:
            rate = round(point.pass_rate * 100, 1)
            rows.append({**base, "measure": "pass rate %", "value": rate})
    return sorted(rows, key=lambda r: (r["config"], r["measure"], r["level"]))


def configuration(
    settings: dict[str, Any], condition: str, shared: frozenset[str] = frozenset()
) -> str:
    """A point's settings other than `condition`: the name of its curve. Settings every
    point has alike (`shared`) are left out, so the names say what tells the lines apart."""
    skip = {condition, "prompt", *shared}
    others = [f"{k}={v}" for k, v in settings.items() if k not in skip]
    return ", ".join(others) or "base"


def _shared_settings(points: Sequence[PointScore]) -> frozenset[str]:
    """The settings that take one and the same value at every point."""
    if not points:
        return frozenset()
    first = points[0].settings
    return frozenset(
        key
        for key, value in first.items()
        if all(key in p.settings and p.settings[key] == value for p in points[1:])
    )
