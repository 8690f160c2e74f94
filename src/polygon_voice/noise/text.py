"""Utterances as words and the gaps between them, and putting a distorted one back together."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# A number in digits (separators inside, as in 12:30 or 55.90) or a word of letters, which
# may hold an apostrophe or hyphen ("don't", "twenty-five", "э-э").
_WORD = re.compile(r"[0-9]+(?:[.,:/-][0-9]+)*|[^\W\d_]+(?:['’-][^\W\d_]+)*")
# What may be left hanging before the next word when an utterance's first word is dropped.
_LEADING_PUNCT = " \t\n,;:.!?…-–—"


@dataclass(frozen=True)
class Words:
    """The words of an utterance; `gaps[i]` is the text before `words[i]`, `gaps[-1]` the tail."""

    words: tuple[str, ...]
    gaps: tuple[str, ...]

    def span(self, start: int, end: int) -> str:
        """The said text of words start..end-1, with the gaps between them."""
        parts = [self.words[start]]
        for index in range(start + 1, end):
            parts += [self.gaps[index], self.words[index]]
        return "".join(parts)


def split_words(text: str) -> Words:
    """Split an utterance into words and gaps; joining them again gives the text back."""
    words: list[str] = []
    gaps: list[str] = []
    last = 0
    for match in _WORD.finditer(text):
        gaps.append(text[last : match.start()])
        words.append(match.group())
        last = match.end()
    gaps.append(text[last:])
    return Words(tuple(words), tuple(gaps))


def assemble(said: Words, spans: Sequence[tuple[int, int]], outputs: Sequence[str | None]) -> str:
    """The heard text: each span of said words replaced by its output; None drops the span."""
    parts = [said.gaps[0]]
    started = False
    for (_, end), out in zip(spans, outputs, strict=True):
        after = said.gaps[end]
        if out is None:
            # The space before a dropped word goes with it; at the start, so does the
            # punctuation after it ("Hello, my code" -> "my code").
            if started:
                parts[-1] = parts[-1].rstrip()
            else:
                after = after.lstrip(_LEADING_PUNCT)
        else:
            parts.append(out)
            started = True
        parts.append(after)
    return "".join(parts)


def with_case_of(model: str, word: str) -> str:
    """`word` in the case of `model`: UPPER, Capitalised or as it is."""
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
