"""Reading an agent's prompt before a run: five axes, four tiers (docs/lint.md, SPEC §10)."""

from polygon_voice.lint.engine import MAX_TIER, LintError, lint
from polygon_voice.lint.model import AXES, Axis, AxisResult, Finding, LintReport, TierSkip

__all__ = [
    "AXES",
    "MAX_TIER",
    "Axis",
    "AxisResult",
    "Finding",
    "LintError",
    "LintReport",
    "TierSkip",
    "lint",
]
