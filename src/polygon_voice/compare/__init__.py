"""Comparing runs (spec section 8): scorecards, scenario matrix, divergence points, analysis."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.compare.build import CompareError, compare
    from polygon_voice.compare.divergence import Divergence, divergence, wording_similarity
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.compare.build": ("CompareError", "compare"),
            "polygon_voice.compare.divergence": ("Divergence", "divergence", "wording_similarity"),
        },
    )

__all__ = ["CompareError", "Divergence", "compare", "divergence", "wording_similarity"]
