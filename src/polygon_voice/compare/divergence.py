"""The divergence point of two conversations (CMP-3, CMP-3a).

Turns are aligned by index. At each index the rules are tried in a fixed order, so the
same pair always names the same rule:

1. ``tool_calls``: the tool calls attributed to the turn differ (see `tool_slots`);
2. ``call_end`` / ``speaker``: the turn exists in one conversation only; it is ``call_end``
   when the two calls ended differently (one hung up or transferred, the other went on),
   ``speaker`` when they ended the same way;
3. ``speaker``: the two turns were spoken by different sides;
4. ``wording``: the word-bigram Jaccard similarity of the two texts is below 0.5 (unigrams
   when either text has fewer than two words, CMP-3a).

After the last turn the calls prepared after it are compared (``tool_calls``), then how the
calls ended (``call_end``). Two conversations that never part have no divergence point.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from polygon_voice.model.trace import ConversationResult, ToolCall, Turn

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


def _prepared_at(call: ToolCall) -> float:
    return call.history[0].time if call.history else 0.0


def tool_slots(turns: Sequence[Turn], calls: Sequence[ToolCall]) -> list[list[tuple[str, str]]]:
    """The (tool, args as canonical JSON) of the calls attributed to each turn, in order.

    A call belongs to the first turn that starts at or after the moment it was prepared
    (ties go to the turn: an agent prepares a call and speaks in the same instant). Calls
    prepared after the last turn started fill one more slot, index len(turns).
    """
    slots: list[list[tuple[str, str]]] = [[] for _ in range(len(turns) + 1)]
    for call in sorted(calls, key=_prepared_at):
        at = _prepared_at(call)
        index = next((t.index for t in turns if t.start >= at), len(turns))
        index = min(max(index, 0), len(turns))
        slots[index].append((call.tool, json.dumps(call.args, sort_keys=True, default=str)))
    return slots


def divergence(a: ConversationResult, b: ConversationResult) -> Divergence:
    """The first turn at which `a` and `b` part, and the rule that fired."""
    slots_a, slots_b = tool_slots(a.turns, a.tool_calls), tool_slots(b.turns, b.tool_calls)
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


def _slot(slots: list[list[tuple[str, str]]], i: int) -> list[tuple[str, str]]:
    return slots[i] if i < len(slots) else []
