"""ImportedCall -> ConversationResult: an imported call stored like a simulated one.

* Turns: `text` is what was said and `heard` the same text (a real call has no separate
  recognition record). Times come from the record; where it has none, a synthetic clock
  places each turn after the previous one at a speaking pace, and the `import` trace entry
  says `synthetic_clock: true`.
* Tool calls: a lifecycle history built from what the record says (prepared and sent at the
  call's start, completed or failed at its end); status `completed`, or `failed` with the
  error text when the record says the tool failed.
* The end: the source's `ended_reason` mapped to an EndReason where the meaning is clear,
  else `caller_hangup`; the original text is kept as the end's message.
* Everything else (call metadata, unmapped turn and tool fields, the source format, the call's
  start time) is kept in the first trace entry, of kind `import`, which survives the store's
  round trip like any trace entry.
* Polygon's own records come back exactly as they were stored.
"""

from __future__ import annotations

import re
from typing import Any

from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn
from polygon_voice.imports.formats.polygon import POLYGON_CONVERSATION
from polygon_voice.model import (
    CallStatus,
    ConversationResult,
    EndReason,
    Speaker,
)
from polygon_voice.model.events import ToolErrorKind

IMPORT_TRACE_KIND = "import"
DEFAULT_LANGUAGE = "en"
DEFAULT_END = EndReason.CALLER_HANGUP
# The synthetic clock: a turn lasts this long per word (about 150 words a minute), at least
# MIN_TURN seconds, and the next one starts GAP seconds after it.
SECONDS_PER_WORD = 0.4
MIN_TURN = 0.6
GAP = 0.3

# Checked in order: the first pattern found in the normalised reason wins.
_END_RULES: tuple[tuple[str, EndReason], ...] = (
    (r"transfer|forward", EndReason.TRANSFERRED),
    (r"error|fail|crash|exception|unavailable", EndReason.ERROR),
    (r"(customer|caller|user|client|inactivity|voicemail).*(hang|end|left|disconnect)|"
     r"(hang|end|left|disconnect).*(customer|caller|user|client)", EndReason.CALLER_HANGUP),
    (r"(assistant|agent|bot|ai).*(hang|end|disconnect)|"
     r"(hang|end|disconnect).*(assistant|agent|bot)", EndReason.AGENT_HANGUP),
    (r"max.?(turn|message)", EndReason.TURN_LIMIT),
)  # fmt: skip
_END_PATTERNS = tuple((re.compile(pattern), reason) for pattern, reason in _END_RULES)


def end_reason(text: str | None) -> EndReason:
    """The EndReason a source's free-text ended reason means; DEFAULT_END when unclear."""
    if not text:
        return DEFAULT_END
    key = _NOT_LETTERS.sub("-", text.casefold())
    if key.strip("-") in _OWN_REASONS:
        return EndReason(key.strip("-").replace("-", "_"))
    for pattern, reason in _END_PATTERNS:
        if pattern.search(key):
            return reason
    return DEFAULT_END


_NOT_LETTERS = re.compile(r"[^a-z]+")
# The plain values of the enums the stored record holds: the record is validated once, as a
# whole, and pydantic reads an enum's value faster than it checks an enum member.
_AGENT, _CALLER = Speaker.AGENT.value, Speaker.CALLER.value
_PREPARED, _SENT = CallStatus.PREPARED.value, CallStatus.SENT.value
_COMPLETED, _FAILED = CallStatus.COMPLETED.value, CallStatus.FAILED.value
_OWN_REASONS = frozenset(value.value.replace("_", "-") for value in EndReason)


def to_conversation(call: ImportedCall, scenario_id: str | None = None) -> ConversationResult:
    """The stored form of an imported call; `scenario_id` defaults to the call id.

    Built as plain data and validated once, as a whole: one validation of the nested
    record costs a fraction of one per turn, tool call and status change, and an import
    converts a thousand calls a second."""
    original = call.metadata.get(POLYGON_CONVERSATION)
    if isinstance(original, ConversationResult):
        return original
    turns, synthetic = _turns(call.turns)
    tools = _tool_calls(call.tool_calls, turns)
    last = max([t["end"] for t in turns] + [c["history"][-1]["time"] for c in tools] + [0.0])
    end_time = max(call.duration, last) if call.duration is not None else last
    end = {
        "reason": end_reason(call.ended_reason).value,
        "time": end_time,
        "message": call.ended_reason or "",
    }
    entry = {
        "seq": 0,
        "time": 0.0,
        "source": "engine",
        "kind": IMPORT_TRACE_KIND,
        "data": _import_data(call, synthetic),
    }
    return ConversationResult.model_validate(
        {
            "id": call.call_id,
            "scenario_id": scenario_id or call.call_id,
            "seed": 0,
            "language": call.language or DEFAULT_LANGUAGE,
            "end": end,
            "turns": turns,
            "tool_calls": tools,
            "state_updates": [],
            "backend_writes": [],
            "trace": [entry],
        }
    )


def import_entry(result: ConversationResult) -> dict[str, Any] | None:
    """The `import` trace entry's data of a stored conversation, if it was imported."""
    for entry in result.trace:
        if entry.kind == IMPORT_TRACE_KIND:
            return entry.data
    return None


def _turns(imported: list[ImportedTurn]) -> tuple[list[dict[str, Any]], bool]:
    turns: list[dict[str, Any]] = []
    clock = 0.0
    synthetic = False
    before: ImportedTurn | None = None  # the turn before, which this one may have cut off
    for index, turn in enumerate(imported):
        start, end, text = turn.start, turn.end, turn.text
        if start is None:
            synthetic = True
            start = clock
        if end is None or end < start:
            synthetic = synthetic or end is None
            end = start + max(MIN_TURN, SECONDS_PER_WORD * len(text.split()))
        if end + GAP > clock:  # max(clock, end + GAP), without the call for every turn
            clock = end + GAP
        turns.append(
            {
                "index": index,
                "speaker": _AGENT if turn.speaker == "agent" else _CALLER,
                "text": text,
                "heard": text,
                "start": start,
                "end": end,
                "interrupted": turn.interrupted,
                # A turn that cut off the one before it (the other side's, marked interrupted).
                "barge_in": False
                if before is None
                else before.interrupted and before.speaker != turn.speaker,
            }
        )
        before = turn
    return turns, synthetic


def _tool_calls(
    imported: list[ImportedToolCall], turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    calls: list[dict[str, Any]] = []
    for call in imported:
        counts[call.tool] = counts.get(call.tool, 0) + 1
        start = call.start if call.start is not None else _after_turn_time(call, turns)
        end = call.end if call.end is not None and call.end >= start else start
        status = _FAILED if call.error is not None else _COMPLETED
        history = [
            {"status": _PREPARED, "time": start},
            {"status": _SENT, "time": start},
            {"status": status, "time": end},
        ]
        calls.append(
            {
                "call_id": call.call_id,
                "tool": call.tool,
                "args": call.args,
                "status": status,
                "history": history,
                "result": call.result,
                "error": _error_kind(call.error),
                "error_message": call.error or "",
                "number": counts[call.tool],
            }
        )
    return calls


def _after_turn_time(call: ImportedToolCall, turns: list[dict[str, Any]]) -> float:
    if call.after_turn is not None and 0 <= call.after_turn < len(turns):
        end: float = turns[call.after_turn]["end"]
        return end
    return 0.0


def _error_kind(error: str | None) -> str | None:
    """The ToolErrorKind (its value) a tool's error text means."""
    if error is None:
        return None
    key = error.casefold()
    if "timeout" in key or "timed out" in key:
        return ToolErrorKind.TIMEOUT.value
    if "not found" in key or "404" in key:
        return ToolErrorKind.NOT_FOUND.value
    if "invalid" in key and "arg" in key:
        return ToolErrorKind.INVALID_ARGUMENTS.value
    return ToolErrorKind.HTTP_500.value


def _import_data(call: ImportedCall, synthetic: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "source_format": call.source_format,
        "call_id": call.call_id,
        "synthetic_clock": synthetic,
    }
    if call.started_at is not None:
        data["started_at"] = call.started_at.isoformat()
    if call.duration is not None:
        data["duration"] = call.duration
    if call.ended_reason is not None:
        data["ended_reason"] = call.ended_reason
    if call.metadata:
        data["metadata"] = call.metadata
    if call.expect is not None:
        data["expect"] = call.expect
    turn_extra = {str(i): t.extra for i, t in enumerate(call.turns) if t.extra}
    if turn_extra:
        data["turn_extra"] = turn_extra
    tool_extra = {c.call_id: c.extra for c in call.tool_calls if c.extra}
    if tool_extra:
        data["tool_extra"] = tool_extra
    return data
