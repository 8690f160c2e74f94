"""The divergence point of two conversations (CMP-3, CMP-3a).

Turns are aligned by index. At each index the rules are tried in a fixed order, so the
same pair always names the same rule:

1. ``tool_calls``: the tool calls of the turn differ: tool, arguments, sent or not,
   cancelled or not, idempotency key by role (see `polygon_voice.compare.lifecycle`);
2. ``call_end`` / ``speaker``: the turn exists in one conversation only; it is ``call_end``
   when the two calls ended differently (one hung up or transferred, the other went on),
   ``speaker`` when they ended the same way;
3. ``speaker``: the two turns were spoken by different sides;
4. ``wording``: the word-bigram Jaccard similarity of the two texts is below 0.5 (unigrams
   when either text has fewer than two words, CMP-3a).

After the last turn the calls of a conversation without turns are compared (``tool_calls``),
then how the calls ended (``call_end``). Two conversations that never part have no
divergence point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from polygon_voice.compare.lifecycle import CallSlot, call_slots
from polygon_voice.model.trace import ConversationResult

Rule = Literal["tool_calls", "call_end", "wording", "speaker"]
WORDING_THRESHOLD = 0.5
_WORD = re.compile(r"[\w']+")


@dataclass(frozen=True)
class Divergence:
    """Where two conversations first part and which rule saw it; turn None: never."""

    turn: int | None
    rule: Rule | None


def words(text: str) -> list[str]:
    """Lower-cased words; punctuation is not wording."""
    return _WORD.findall(text.lower())


def jaccard(a: set[tuple[str, ...]], b: set[tuple[str, ...]]) -> float:
    """Size of the intersection over size of the union; two empty sets are the same (1.0)."""
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


def wording_similarity(a: str, b: str) -> float:
    """Bigram Jaccard of two texts; unigram Jaccard when either has fewer than two words."""
    wa, wb = words(a), words(b)
    # A one-word turn has no bigrams: with bigrams any two one-word replies would tie at 1.0.
    n = 2 if len(wa) >= 2 and len(wb) >= 2 else 1
    return jaccard(_grams(wa, n), _grams(wb, n))


def _grams(ws: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def divergence(a: ConversationResult, b: ConversationResult) -> Divergence:
    """The first turn at which `a` and `b` part, and the rule that fired."""
    slots_a, slots_b = call_slots(a), call_slots(b)
    ended_alike = a.end.reason == b.end.reason
    shared = min(len(a.turns), len(b.turns))
    for i in range(max(len(a.turns), len(b.turns))):
        if _slot(slots_a, i) != _slot(slots_b, i):
            return Divergence(i, "tool_calls")
        if i >= shared:
            return Divergence(i, "speaker" if ended_alike else "call_end")
        ta, tb = a.turns[i], b.turns[i]
        if ta.speaker != tb.speaker:
            return Divergence(i, "speaker")
        if wording_similarity(ta.text, tb.text) < WORDING_THRESHOLD:
            return Divergence(i, "wording")
    n = len(a.turns)
    if _slot(slots_a, n) != _slot(slots_b, n):
        return Divergence(n, "tool_calls")
    if not ended_alike:
        return Divergence(n, "call_end")
    return Divergence(None, None)


def _slot(slots: list[list[CallSlot]], i: int) -> list[CallSlot]:
    return slots[i] if i < len(slots) else []
