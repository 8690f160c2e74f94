"""Marked text for the HTML views: noise edits and evidence quotes as plain segments.

Nothing here builds markup. A text becomes a list of `Segment`s (a piece of the text and
the marks it carries) and the template escapes each piece, so a quote or an edit that
contains `<script>` is shown as those characters.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

_TOKEN = re.compile(r"\S+")
_NOT_A_WORD = re.compile(r"[^\w]+")
_QUOTED = re.compile(r"\"([^\"]{3,})\"")


@dataclass(frozen=True)
class Segment:
    """A piece of text; `noise`: recognition changed it, `evidence`: a judge quoted it."""

    text: str
    noise: bool = False
    evidence: bool = False


Span = tuple[int, int]


def segments(text: str, noise: Iterable[Span] = (), evidence: Iterable[Span] = ()) -> list[Segment]:
    """`text` cut where a mark starts or ends; spans are character offsets [start, end)."""
    flags = [[False, False] for _ in text]
    for which, spans in ((0, noise), (1, evidence)):
        for start, end in spans:
            for i in range(max(start, 0), min(end, len(text))):
                flags[i][which] = True
    out: list[Segment] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or flags[i] != flags[start]:
            out.append(Segment(text[start:i], *flags[start]))
            start = i
    return out


def _tokens(text: str) -> list[tuple[str, Span]]:
    """Words of `text` compared without case and punctuation, with their spans in it."""
    return [(_NOT_A_WORD.sub("", m.group().lower()), m.span()) for m in _TOKEN.finditer(text)]


def noise_edits(said: str, heard: str) -> tuple[list[Span], list[Span]]:
    """Word-level differences of what was said and what was heard: (spans in `said` that
    were dropped or changed, spans in `heard` that were changed or added)."""
    a, b = _tokens(said), _tokens(heard)
    matcher = difflib.SequenceMatcher(a=[w for w, _ in a], b=[w for w, _ in b], autojunk=False)
    in_said: list[Span] = []
    in_heard: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        in_said += [span for _, span in a[i1:i2]]
        in_heard += [span for _, span in b[j1:j2]]
    return in_said, in_heard


def quotes(evidence: str) -> list[str]:
    """The texts an evidence line may quote, most likely first: all from its first `"` to
    its last (a quote that itself holds quotes), then each "..." on its own; the whole
    line when it quotes nothing."""
    first, last = evidence.find('"'), evidence.rfind('"')
    whole = [evidence[first + 1 : last].strip()] if last - first > 1 else []
    pieces = [q.strip() for q in _QUOTED.findall(evidence) if q.strip()]
    found = [q for i, q in enumerate(whole + pieces) if q and q not in (whole + pieces)[:i]]
    return found or ([evidence.strip()] if evidence.strip() else [])


def find(text: str, quote: str) -> Span | None:
    """Where `quote` occurs in `text` (case-insensitive), or None: only a found quote is
    marked, never a guess."""
    if not quote:
        return None
    at = text.lower().find(quote.lower())
    return None if at < 0 else (at, at + len(quote))
