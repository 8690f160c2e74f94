"""Vega-Lite (v6) chart specs for the HTML report and the web app.

Pure functions: rows in, a spec dict out, its data inline as `values`, so a page needs no
data URL and a chart renders offline. The page renders a spec with vega-embed (see
assets/charts.js); the same spec serves the one-file report and the app. Rows carry plain
field names (no dots: Vega would read a dot as a nested field); a row's `run` is the run's
label (`run_labels`), which is what the legend, the axes and the tooltips show.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json"
"""The spec's version tag; vega-embed reads it to pick the compiler, it is never fetched."""

Row = dict[str, Any]
Spec = dict[str, Any]

WIDTH = 560
# A run id's first characters in a label: enough to tell runs apart and to type as a prefix.
SHORT_ID = 8
_RUN_COLOR: Spec = {"field": "run", "type": "nominal", "title": "run"}


def run_labels(runs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Run id -> its label in the charts, `AGENT · RUNID` (`reference:flawed · 9eee59b8`),
    from (run id, agent as the run records it) pairs. The id is cut to SHORT_ID characters,
    or longer where two charted runs start alike, so no two runs share a label even when
    their agent is the same."""
    ids = list(dict.fromkeys(run_id for run_id, _ in runs))
    size = SHORT_ID
    longest = max((len(run_id) for run_id in ids), default=0)
    while size < longest and len({run_id[:size] for run_id in ids}) < len(ids):
        size += 1
    return {run_id: f"{agent} · {run_id[:size]}" for run_id, agent in runs}


def _base(title: str, rows: Sequence[Row], description: str) -> Spec:
    return {
        "$schema": SCHEMA,
        "title": title,
        "description": description,
        "width": WIDTH,
        "data": {"values": [dict(row) for row in rows]},
    }


def composite_chart(rows: Sequence[Row]) -> Spec:
    """The composite distribution per run: a box per run over its calls' composites (0-100),
    each call a dot beside it. Rows: `run`, `conversation`, `scenario`, `composite`."""
    scored = [
        # A fixed offset per call (not random()): the same run always draws the same picture.
        {**row, "jitter": (i % 9) - 4}
        for i, row in enumerate(r for r in rows if r.get("composite") is not None)
    ]
    x: Spec = {
        "field": "composite",
        "type": "quantitative",
        "scale": {"domain": [0, 100]},
        "title": "composite (0-100)",
    }
    y: Spec = {"field": "run", "type": "nominal", "title": "run"}
    return {
        **_base("Composite per call", scored, "composite score of every judged call, per run"),
        "height": {"step": 48},
        "layer": [
            {
                "mark": {"type": "boxplot", "extent": "min-max", "opacity": 0.5},
                "encoding": {"x": x, "y": y, "color": {**_RUN_COLOR, "legend": None}},
            },
            {
                "mark": {"type": "point", "filled": True, "size": 40, "opacity": 0.8},
                "encoding": {
                    "x": x,
                    "y": y,
                    "yOffset": {
                        "field": "jitter",
                        "type": "quantitative",
                        "scale": {"domain": [-12, 12]},
                    },
                    "color": {**_RUN_COLOR, "legend": None},
                    "tooltip": [
                        {"field": "conversation", "type": "nominal"},
                        {"field": "composite", "type": "quantitative"},
                    ],
                },
            },
        ],
    }


def criteria_chart(rows: Sequence[Row]) -> Spec:
    """Mean score (0-5) per criterion, one bar per run side by side.
    Rows: `run`, `criterion`, `mean`."""
    scored = [row for row in rows if row.get("mean") is not None]
    return {
        **_base("Criteria (mean score 0-5)", scored, "mean judge score per criterion, per run"),
        "mark": {"type": "bar"},
        "encoding": {
            "x": {"field": "criterion", "type": "nominal", "title": None, "sort": None},
            "xOffset": {"field": "run", "type": "nominal"},
            "y": {
                "field": "mean",
                "type": "quantitative",
                "scale": {"domain": [0, 5]},
                "title": "mean score",
            },
            "color": _RUN_COLOR,
            "tooltip": [
                {"field": "run", "type": "nominal"},
                {"field": "criterion", "type": "nominal"},
                {"field": "mean", "type": "quantitative", "format": ".2f"},
            ],
        },
    }


def probes_chart(rows: Sequence[Row]) -> Spec:
    """Probe compliance (0-1) with its Wilson 95 % interval as a whisker, per run.
    Rows: `run`, `probe`, `compliance`, `ci_low`, `ci_high`; probes never applicable
    (compliance None) are left out."""
    known = [row for row in rows if row.get("compliance") is not None]
    y: Spec = {"field": "probe", "type": "nominal", "title": None}
    offset: Spec = {"field": "run", "type": "nominal"}
    x_scale: Spec = {"domain": [0, 1]}
    return {
        **_base("Probe compliance (95 % Wilson interval)", known, "probe compliance per run"),
        "layer": [
            {
                "mark": {"type": "rule", "strokeWidth": 2},
                "encoding": {
                    "y": y,
                    "yOffset": offset,
                    "x": {
                        "field": "ci_low",
                        "type": "quantitative",
                        "scale": x_scale,
                        "title": "compliance",
                        "axis": {"format": "%"},
                    },
                    "x2": {"field": "ci_high"},
                    "color": _RUN_COLOR,
                },
            },
            {
                "mark": {"type": "point", "filled": True, "size": 60},
                "encoding": {
                    "y": y,
                    "yOffset": offset,
                    "x": {"field": "compliance", "type": "quantitative", "scale": x_scale},
                    "color": _RUN_COLOR,
                    "tooltip": [
                        {"field": "run", "type": "nominal"},
                        {"field": "probe", "type": "nominal"},
                        {"field": "compliance", "type": "quantitative", "format": ".0%"},
                        {"field": "ci_low", "type": "quantitative", "format": ".0%"},
                        {"field": "ci_high", "type": "quantitative", "format": ".0%"},
                    ],
                },
            },
        ],
    }


def repeats_chart(rows: Sequence[Row]) -> Spec:
    """Each call's composite per scenario, per run, with a line from the lowest to the
    highest: calls of one scenario far apart are an inconsistent agent (spread =
    inconsistency); the most inconsistent scenarios come first. Rows: `run`, `scenario`,
    `conversation`, `composite`."""
    scored = [dict(row) for row in rows if row.get("composite") is not None]
    values: dict[tuple[str, str], list[float]] = {}
    for row in scored:
        values.setdefault((str(row["run"]), str(row["scenario"])), []).append(row["composite"])
    for row in scored:
        found = values[(str(row["run"]), str(row["scenario"]))]
        row["spread"] = round(max(found) - min(found), 2)
    y: Spec = {
        "field": "scenario",
        "type": "nominal",
        "title": None,
        "sort": {"field": "spread", "op": "max", "order": "descending"},
    }
    x: Spec = {
        "field": "composite",
        "type": "quantitative",
        "scale": {"domain": [0, 100]},
        "title": "composite (0-100)",
    }
    offset: Spec = {"field": "run", "type": "nominal"}
    return {
        **_base(
            "Composite across repeats of each scenario",
            scored,
            "composite of every call of each scenario; a wide spread is an inconsistent agent",
        ),
        "layer": [
            {
                "mark": {"type": "rule", "opacity": 0.6},
                "encoding": {
                    "y": y,
                    "yOffset": offset,
                    "x": {**x, "aggregate": "min"},
                    "x2": {"field": "composite", "aggregate": "max"},
                    "color": _RUN_COLOR,
                },
            },
            {
                "mark": {"type": "point", "filled": True, "size": 50, "opacity": 0.7},
                "encoding": {
                    "y": y,
                    "yOffset": offset,
                    "x": x,
                    "color": _RUN_COLOR,
                    "tooltip": [
                        {"field": "run", "type": "nominal"},
                        {"field": "conversation", "type": "nominal"},
                        {"field": "composite", "type": "quantitative"},
                        {"field": "spread", "type": "quantitative"},
                    ],
                },
            },
        ],
    }
