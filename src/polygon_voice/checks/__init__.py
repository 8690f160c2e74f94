"""Deterministic checks: the three-layer harness (six axes, root causes, release gate)."""

from polygon_voice.checks.causes import LAYERS
from polygon_voice.checks.gate import GATE_CHECKS
from polygon_voice.checks.score import RunSummary, gold_replay, is_case, score_case, summarise

__all__ = [
    "GATE_CHECKS",
    "LAYERS",
    "RunSummary",
    "gold_replay",
    "is_case",
    "score_case",
    "summarise",
]
