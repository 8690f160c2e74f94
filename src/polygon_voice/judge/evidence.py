"""Small readers of a conversation that the deterministic judge's rules share."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from polygon_voice.checks.facts import LONG_TURN_WORDS
from polygon_voice.judge.base import JudgeInput, RawScore, raw_score
from polygon_voice.judge.composite import NotApplicable
from polygon_voice.model import CallStatus, ConversationResult, Speaker, ToolCall, Turn

_NUMBER = re.compile(r"\d+")
QUOTE_CHARS = 80
FAILED = (CallStatus.FAILED, CallStatus.TIMED_OUT)
_OUTCOMES = (CallStatus.COMPLETED, *FAILED)


def clamp(value: int) -> int:
    """Keep a rule's score within 1..5."""
    return max(1, min(5, value))


def agent_turns(result: ConversationResult) -> list[Turn]:
    """The agent's turns in order."""
    return [t for t in result.turns if t.speaker is Speaker.AGENT]


def quote(result: ConversationResult, index: int | None) -> str:
    """'turn N (agent): "…"' for evidence; empty when there is no such turn."""
    return quoted(next((t for t in result.turns if t.index == index), None))


def quoted(turn: Turn | None) -> str:
    """`quote` of a turn already found (the first with its index); empty for None."""
    if turn is None:
        return ""
    text = turn.text if len(turn.text) <= QUOTE_CHARS else turn.text[: QUOTE_CHARS - 1] + "…"
    # A StrEnum formats as its value, in C (`.value` is a Python property, read per quote).
    return f'turn {turn.index} ({turn.speaker}): "{text}"'


def quote_turn(given: JudgeInput, index: int | None) -> str:
    """`quote` of the call being judged, its turn found in the shared facts."""
    return quoted(given.facts.turn(index))


def scored(given: JudgeInput, value: int, turn: int | None, reason: str) -> RawScore:
    """A rule's result, its evidence quoted from the turn it relied on."""
    return raw_score(clamp(value), quote_turn(given, turn), turn, reason)


def last_agent_turn(result: ConversationResult) -> int | None:
    """The index of the agent's last turn, if it spoke."""
    turns = agent_turns(result)
    return turns[-1].index if turns else None


def agent_turn_after(result: ConversationResult, time: float) -> int | None:
    """The first agent turn starting at or after `time`."""
    return next((t.index for t in agent_turns(result) if t.start >= time), None)


def outcome_time(call: ToolCall) -> float | None:
    """When a call reached its outcome (completed, failed, timed out)."""
    return next((h.time for h in call.history if h.status in _OUTCOMES), None)


def long_turns(result: ConversationResult) -> list[int]:
    """Agent turns over LONG_TURN_WORDS words."""
    return [t.index for t in agent_turns(result) if len(t.text.split()) > LONG_TURN_WORDS]


def numbers_in(values: Iterable[Any]) -> set[str]:
    """Every digit run in the JSON of `values`, leading zeros dropped ("05" == "5")."""
    found: set[str] = set()
    for value in values:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        found.update(n.lstrip("0") or "0" for n in _NUMBER.findall(text))
    return found


def known_numbers(given: JudgeInput) -> set[str]:
    """Numbers the agent may state: from the facts, the caller, the tools and the backend."""
    result = given.result
    sources: list[Any] = [dict(given.persona.facts), dict(given.backend_initial)]
    sources += [t.text for t in result.turns if t.speaker is Speaker.CALLER]
    sources += [t.heard for t in result.turns if t.speaker is Speaker.CALLER]
    sources += [[c.args, c.result] for c in result.tool_calls]
    sources += [result.backend_final, [[w.record, w.old, w.new] for w in result.backend_writes]]
    return numbers_in(sources)


def same(a: Any, b: Any) -> bool:
    """Values compared as text, so the fact 3 equals the written "3"."""
    return str(a).strip().casefold() == str(b).strip().casefold()


# -- evidence per criterion ---------------------------------------------------------------------
# The rules above return the turn they relied on, and a rule that found nothing falls back to
# the agent's last turn, so a clean call quoted one closing line for every criterion. The
# deterministic judge replaces the evidence (never the score or the reason) with what bears on
# each criterion, or says plainly that the transcript holds none.

NO_EVIDENCE = "no evidence in the transcript"
SHOWN_ITEMS = 3  # tool calls or writes listed in one evidence line; the rest are counted


def criterion_evidence(criterion: str, given: JudgeInput, raw: RawScore) -> RawScore:
    """`raw` with the evidence (and its turn) of what bears on `criterion`; unchanged for a
    criterion the judge has no reading for, and for a criterion left unscored."""
    reader = _READERS.get(criterion)
    if reader is None or raw.value is None or isinstance(raw.value, NotApplicable):
        return raw
    evidence, turn = reader(given, raw)
    return raw_score(raw.value, evidence, turn, raw.reason, raw.evidence_found)


def _flagged(raw: RawScore) -> bool:
    # A rule that took something off quoted the turn it found it in.
    return isinstance(raw.value, int) and raw.value < 5


def _joined(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _some(items: list[str]) -> str:
    shown = ", ".join(items[:SHOWN_ITEMS])
    more = len(items) - SHOWN_ITEMS
    return shown + (f" and {more} more" if more > 0 else "")


# json.dumps(args, ensure_ascii=False, sort_keys=True, default=str), its encoder made once.
_ARGS_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str)


def call_text(call: ToolCall) -> str:
    """'update_order({"order_id": "5590"}) completed' and the error of a failed call."""
    args = _ARGS_JSON.encode(call.args)
    if len(args) > QUOTE_CHARS:
        args = args[: QUOTE_CHARS - 1] + "…"
    text = f"{call.tool}({args}) {call.status}"  # StrEnums: formatted as their values
    if call.status in FAILED and call.error is not None:
        text += f" ({call.error})"
    if not call.args_valid:
        text += f", invalid: {'; '.join(call.arg_errors)}"
    return text


def writes_text(result: ConversationResult) -> str:
    """The backend writes as 'write orders/5590.quantity: 2 -> 3', or that none landed."""
    writes = [
        f"{w.collection}/{w.record}.{w.field}: {w.old!r} -> {w.new!r}"
        for w in result.backend_writes
    ]
    return f"writes: {_some(writes)}" if writes else "no write reached the backend"


def _tool_use(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    calls = given.result.tool_calls
    if not calls:
        return f"{NO_EVIDENCE}: no tool call was made", None
    # The calls the rule counted against the agent first, then the others in order.
    ordered = [
        call
        for _, call in sorted(
            enumerate(calls),
            key=lambda item: (item[1].args_valid and item[1].status not in FAILED, item[0]),
        )
    ]
    # Only the calls shown are put in words; the rest are counted.
    shown = [call_text(c) for c in ordered[:SHOWN_ITEMS]] + [""] * (len(ordered) - SHOWN_ITEMS)
    listed = f"tool calls: {_some(shown)}"
    if _flagged(raw):
        return _joined(raw.evidence, listed), raw.turn
    return listed, None


def _factual(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    result = given.result
    if _flagged(raw):  # the turn with the unsupported number or the claim, against the record
        return _joined(raw.evidence, writes_text(result)), raw.turn
    stating = [t for t in given.facts.agent if numbers_in([t.text])]
    if not stating:
        return f"{NO_EVIDENCE}: the agent stated no number", None
    turn = stating[-1].index
    backed = "each of its numbers occurs in the facts, the caller's words, the tools or the backend"
    return _joined(quote_turn(given, turn), backed), turn


def _goal(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    expect = given.expect
    if expect is not None and expect.not_exercised is None:
        missed = [c.why for c in expect.failed()]
        outcome = (
            "expected outcome met" if expect.met else f"expected outcome not met: {_some(missed)}"
        )
    else:
        outcome = writes_text(given.result)
    return _joined(raw.evidence, outcome), raw.turn


def _plain(what: str) -> Callable[[JudgeInput, RawScore], tuple[str, int | None]]:
    """A criterion whose evidence is the rule's own turn when it took something off, else
    the plain statement that the transcript shows none of `what`."""

    def read(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
        if _flagged(raw):
            return raw.evidence, raw.turn
        return f"{NO_EVIDENCE}: {what}", None

    return read


def _dialogue(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    if _flagged(raw):
        return raw.evidence, raw.turn
    facts = given.facts
    if not facts.agent:
        return f"{NO_EVIDENCE}: the agent did not speak", None
    # The first of the longest turns, as max() over the turns with this key picks it.
    words, _, longest = max(
        (n, -t.index, -position)
        for position, (t, n) in enumerate(zip(facts.agent, facts.agent_words, strict=True))
    )
    index = facts.agent[-longest].index
    return f"{quote_turn(given, index)} (its longest turn, {words} words)", index


def _robustness(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    result = given.result
    errors = [c for c in result.tool_calls if c.status in FAILED or c.error is not None]
    barge_ins = [t for t in given.facts.caller if t.barge_in]
    if not errors and not barge_ins and result.end.reason.value not in ("error", "loop_detected"):
        return f"{NO_EVIDENCE}: no tool error and no barge-in to recover from", None
    challenges = [f"after {call_text(c)}" for c in errors]
    challenges += [f"after the barge-in in turn {t.index}" for t in barge_ins]
    answer = raw.evidence or "no answer from the agent"
    return _joined(answer, _some(challenges)), raw.turn


def _tone(given: JudgeInput, raw: RawScore) -> tuple[str, int | None]:
    if _flagged(raw):
        return raw.evidence, raw.turn
    turns = given.facts.agent
    if not turns:
        return f"{NO_EVIDENCE}: the agent did not speak", None
    first, last = turns[0].index, turns[-1].index
    greeting = f"greeting {quote_turn(given, first)}"
    if first == last:
        return greeting, first
    return f"{greeting}; closing {quote_turn(given, last)}", first


_READERS: dict[str, Callable[[JudgeInput, RawScore], tuple[str, int | None]]] = {
    "goal_achievement": _goal,
    "instruction_following": _plain(
        "no forbidden phrase was said and no tool call broke its schema"
    ),
    "tool_use_quality": _tool_use,
    "factual_accuracy": _factual,
    "dialogue_quality": _dialogue,
    "robustness": _robustness,
    "safety_compliance": _plain("no forbidden phrase was said and no unwanted change was made"),
    "persona_tone": _tone,
}
