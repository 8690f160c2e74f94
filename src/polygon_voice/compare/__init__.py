"""Comparing runs (spec section 8): scorecards, scenario matrix, divergence points, analysis."""

from polygon_voice.compare.build import CompareError, compare
from polygon_voice.compare.divergence import Divergence, divergence, wording_similarity

__all__ = ["CompareError", "Divergence", "compare", "divergence", "wording_similarity"]
