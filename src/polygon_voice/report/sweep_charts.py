"""Vega-Lite specs of a sweep: its robustness curves (the style of report/charts.py).

Rows come from `experiments.curves.curve_rows`; the spec's data is inline, so it renders
offline in the one-file report and in the app alike (assets/charts.js draws it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polygon_voice.report.charts import SCHEMA

Spec = dict[str, Any]
CURVE_WIDTH = 300


def robustness_chart(condition: str, rows: Sequence[dict[str, Any]]) -> Spec:
    """Composite and pass rate (0-100) against `condition`, one line per configuration,
    side by side. Rows: `level`, `config`, `measure`, `value`, `point`."""
    return {
        "$schema": SCHEMA,
        "title": f"Robustness: score against {condition}",
        "description": f"mean composite and pass rate per configuration as {condition} grows",
        "width": CURVE_WIDTH,
        "data": {"values": [dict(row) for row in rows]},
        "mark": {"type": "line", "point": True},
        "encoding": {
            "x": {"field": "level", "type": "quantitative", "title": condition},
            "y": {
                "field": "value",
                "type": "quantitative",
                "scale": {"domain": [0, 100]},
                "title": None,
            },
            "color": {
                "field": "config",
                "type": "nominal",
                "title": "configuration",
                # The settings that tell the lines apart, whole rather than cut at 160 px.
                "legend": {"labelLimit": 480},
            },
            "column": {"field": "measure", "type": "nominal", "title": None},
            "tooltip": [
                {"field": "config", "type": "nominal"},
                {"field": "level", "type": "quantitative", "title": condition},
                {"field": "measure", "type": "nominal"},
                {"field": "value", "type": "quantitative", "format": ".1f"},
                {"field": "point", "type": "quantitative"},
            ],
        },
    }
