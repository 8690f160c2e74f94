"""Phrase matching for the conversation checks: forbidden phrases and repeat requests (the
phrases asking to repeat live with the engine, in conversation/repeats.py).

Both sides are reduced to LOOP-2's normalised words (case-folded, diacritics and
punctuation stripped), and a phrase matches a run of whole words, so "no" never matches
inside "know" and "Garantiert" matches "garantiert".
"""

from __future__ import annotations

from collections.abc import Sequence

from polygon_voice.conversation.loops import normalised_words
from polygon_voice.conversation.repeats import REPEAT_REQUESTS, contains_words, is_repeat_request

# The repeat phrases are the engine's (loop rules); the checks count them through here.
__all__ = ["REPEAT_REQUESTS", "contains_phrase", "is_repeat_request", "phrases_in"]


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words, ignoring case and diacritics."""
    return contains_words(normalised_words(text), normalised_words(phrase))


def phrases_in(text: str, phrases: Sequence[str]) -> list[str]:
    """The phrases of `phrases` found in `text`, in the given order."""
    words = normalised_words(text)
    return [p for p in phrases if contains_words(words, normalised_words(p))]
