"""Deterministic checks: the three-layer harness (six axes, root causes, release gate)."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.checks.causes import LAYERS
    from polygon_voice.checks.gate import GATE_CHECKS
    from polygon_voice.checks.score import RunSummary, gold_replay, is_case, score_case, summarise
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.checks.causes": ("LAYERS",),
            "polygon_voice.checks.gate": ("GATE_CHECKS",),
            "polygon_voice.checks.score": (
                "RunSummary",
                "gold_replay",
                "is_case",
                "score_case",
                "summarise",
            ),
        },
    )

__all__ = [
    "GATE_CHECKS",
    "LAYERS",
    "RunSummary",
    "gold_replay",
    "is_case",
    "score_case",
    "summarise",
]
