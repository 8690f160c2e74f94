"""Reading an agent's prompt before a run: five axes, four tiers (docs/lint.md, SPEC §10)."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.lint.engine import MAX_TIER, LintError, lint
    from polygon_voice.lint.model import AXES, Axis, AxisResult, Finding, LintReport, TierSkip
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.lint.engine": ("MAX_TIER", "LintError", "lint"),
            "polygon_voice.lint.model": (
                "AXES",
                "Axis",
                "AxisResult",
                "Finding",
                "LintReport",
                "TierSkip",
            ),
        },
    )

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
