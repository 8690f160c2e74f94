"""Small readers of a conversation that the deterministic judge's rules share."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from polygon_voice.checks.conversation import LONG_TURN_WORDS
from polygon_voice.judge.base import JudgeInput, RawScore
from polygon_voice.model import CallStatus, ConversationResult, Speaker, ToolCall, Turn

_NUMBER = re.compile(r"\d+")
QUOTE_CHARS = 80
FAILED = (CallStatus.FAILED, CallStatus.TIMED_OUT)


def clamp(value: int) -> int:
    """Keep a rule's score within 1..5."""
    return max(1, min(5, value))


def agent_turns(result: ConversationResult) -> list[Turn]:
    """The agent's turns in order."""
    return [t for t in result.turns if t.speaker is Speaker.AGENT]


def quote(result: ConversationResult, index: int | None) -> str:
    """'turn N (agent): "…"' for evidence; empty when there is no such turn."""
    turn = next((t for t in result.turns if t.index == index), None)
    if turn is None:
        return ""
    text = turn.text if len(turn.text) <= QUOTE_CHARS else turn.text[: QUOTE_CHARS - 1] + "…"
    return f'turn {turn.index} ({turn.speaker.value}): "{text}"'


def scored(given: JudgeInput, value: int, turn: int | None, reason: str) -> RawScore:
    """A rule's result, its evidence quoted from the turn it relied on."""
    return RawScore(clamp(value), quote(given.result, turn), turn, reason)


def last_agent_turn(result: ConversationResult) -> int | None:
    """The index of the agent's last turn, if it spoke."""
    turns = agent_turns(result)
    return turns[-1].index if turns else None


def agent_turn_after(result: ConversationResult, time: float) -> int | None:
    """The first agent turn starting at or after `time`."""
    return next((t.index for t in agent_turns(result) if t.start >= time), None)


def outcome_time(call: ToolCall) -> float | None:
    """When a call reached its outcome (completed, failed, timed out)."""
    ends = (CallStatus.COMPLETED, *FAILED)
    return next((h.time for h in call.history if h.status in ends), None)


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
