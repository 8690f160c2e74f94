"""Word error rate between what the caller said and what the agent heard (NOISE-7), by jiwer.

Both sides are compared as words, in lower case and without punctuation or symbols:
"Hello?" and "hello" are the same word, while a filler, a dropped word or "5590" heard as
four digit words count as errors. (We strip punctuation ourselves, with one regular
expression: jiwer's RemovePunctuation replaces each of Unicode's ~800 punctuation marks in
turn, which took four fifths of the time of a short utterance.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from polygon_voice.model import ConversationResult, Speaker, Turn

DECIMALS = 4
_NOT_A_WORD = re.compile(r"[^\w\s]+")


def word_error_rate(said: Sequence[str], heard: Sequence[str]) -> float:
    """(substitutions + deletions + insertions) / said words over all pairs, to 4 decimals.

    With no said words at all it is the number of words heard (jiwer's convention).
    """
    if list(said) == list(heard):
        return 0.0  # the clear line: no need to load jiwer
    import jiwer

    output = jiwer.process_words(
        [_words(text) for text in said], [_words(text) for text in heard], _split(), _split()
    )
    return round(float(output.wer), DECIMALS)


def caller_wer(result: ConversationResult) -> float | None:
    """The WER of all caller turns of a conversation, said vs heard; None without caller turns."""
    return turns_wer([turn for turn in result.turns if turn.speaker is Speaker.CALLER])


def turns_wer(turns: Sequence[Turn]) -> float | None:
    """The WER of these turns, said vs heard; None without any (`caller_wer` of a call whose
    caller turns were already picked out: the conversation checks have them)."""
    if not turns:
        return None
    return word_error_rate([t.text for t in turns], [t.heard for t in turns])


def _words(text: str) -> str:
    return _NOT_A_WORD.sub("", text.lower())


@functools.cache
def _split() -> Any:
    import jiwer

    return jiwer.Compose(
        [jiwer.RemoveMultipleSpaces(), jiwer.Strip(), jiwer.ReduceToListOfListOfWords()]
    )
