"""Which turn a tool call belongs to, and what of its lifecycle two runs must share.

A call belongs to the turn of the agent response that prepared it: the agent turn that
response spoke (whether the speech came before or after the call), or, when the response
said nothing, the turn the agent was answering (the last turn begun before the call). The
response is read from the trace, where every event the agent was given starts a response.
A record without a usable trace (an imported call) is placed by time instead: the latest
agent turn spoken while the call was prepared (start <= prepared <= end), else the last turn
that started at or before it.

Two calls are the same when their tool, arguments, whether they were sent, whether they
were cancelled and their idempotency key's role agree. Keys are fresh strings in every
conversation, so a key is compared by role, never by text: absent, or the ordinal of its
first use in the conversation (a retry that reuses its key repeats the ordinal, a retry with
a new key gets the next). Outcomes and timing are left out: they are the stub's, not the
agent's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from polygon_voice.model.trace import (
    CallStatus,
    ConversationResult,
    Speaker,
    ToolCall,
    TraceEntry,
    Turn,
)

_DELIVERED = frozenset(
    {"call_started", "caller_said", "barge_in", "silence", "tool_result", "tool_error", "timer"}
)
_DIRECT_PREFIX = "direct-"
"""Calls an agent made itself through the tool server: their answers went to the agent over
HTTP, inside its response, so they start no response of their own."""


@dataclass(frozen=True)
class CallSlot:
    """What of one call two runs must share."""

    tool: str
    args: str
    """The arguments as canonical JSON."""
    sent: bool
    cancelled: bool
    key: int | None
    """The idempotency key's role: None when absent, else the ordinal of its first use."""


def call_turns(result: ConversationResult) -> dict[str, int]:
    """The turn index each call belongs to, by call id (0 when the call has no turn)."""
    placed = _turns_from_trace(result.turns, result.trace)
    by_time = {call.call_id: _turn_by_time(result.turns, call) for call in result.tool_calls}
    return {call_id: placed.get(call_id, index) for call_id, index in by_time.items()}


def call_slots(result: ConversationResult) -> list[list[CallSlot]]:
    """The calls of each turn, in order of preparation; one slot per turn and one more
    (index len(turns), filled only when the call has no turns at all)."""
    slots: list[list[CallSlot]] = [[] for _ in range(len(result.turns) + 1)]
    turns = call_turns(result)
    keys = _key_roles(result.tool_calls)
    for call in result.tool_calls:
        index = min(turns[call.call_id], len(result.turns))
        slots[index].append(_slot(call, keys))
    return slots


def _slot(call: ToolCall, keys: dict[str, int]) -> CallSlot:
    statuses = {change.status for change in call.history} | {call.status}
    return CallSlot(
        tool=call.tool,
        args=json.dumps(call.args, sort_keys=True, default=str),
        sent=CallStatus.SENT in statuses,
        cancelled=CallStatus.CANCELLED in statuses,
        key=None if call.idempotency_key is None else keys[call.idempotency_key],
    )


def _key_roles(calls: Sequence[ToolCall]) -> dict[str, int]:
    roles: dict[str, int] = {}
    for call in calls:
        if call.idempotency_key is not None and call.idempotency_key not in roles:
            roles[call.idempotency_key] = len(roles) + 1
    return roles


def _prepared_at(call: ToolCall) -> float:
    return call.history[0].time if call.history else 0.0


def _turn_by_time(turns: Sequence[Turn], call: ToolCall) -> int:
    at = _prepared_at(call)
    # A microsecond of slack: turn times are rounded to it, call times are not.
    # Positions, not the stored `index`: divergence aligns turns by position.
    spoken = [
        i
        for i, t in enumerate(turns)
        if t.speaker is Speaker.AGENT and t.start - 1e-6 <= at <= t.end + 1e-6
    ]
    if spoken:
        return spoken[-1]
    begun = [i for i, t in enumerate(turns) if t.start - 1e-6 <= at]
    return begun[-1] if begun else 0


def _turns_from_trace(turns: Sequence[Turn], trace: Sequence[TraceEntry]) -> dict[str, int]:
    """Call id -> turn index from the trace; {} when the trace does not match the turns."""
    placed: dict[str, int] = {}
    begun = -1  # the index of the last turn begun
    for response in _responses(trace):
        if _begins_caller_turn(response[0]):
            begun += 1
            if not _is_turn(turns, begun, Speaker.CALLER):
                return {}
        if any(entry.kind == "say" for entry in response):
            begun += 1  # all the speech of one response is one agent turn
            if not _is_turn(turns, begun, Speaker.AGENT):
                return {}
        for entry in response:
            if entry.source == "agent" and entry.kind == "prepare_tool_call":
                # The response's own speech if it spoke, else the turn it was answering.
                placed[str(entry.data.get("call_id"))] = max(begun, 0)
    return placed


def _responses(trace: Sequence[TraceEntry]) -> list[list[TraceEntry]]:
    """The trace cut at every event delivered to the agent (each starts one response)."""
    responses: list[list[TraceEntry]] = []
    for entry in sorted(trace, key=lambda e: e.seq):
        if _delivered(entry) or not responses:
            responses.append([entry])
        else:
            responses[-1].append(entry)
    return responses


def _delivered(entry: TraceEntry) -> bool:
    if entry.source == "agent" or entry.kind not in _DELIVERED:
        return False
    call_id = entry.data.get("call_id")
    return not (isinstance(call_id, str) and call_id.startswith(_DIRECT_PREFIX))


def _begins_caller_turn(entry: TraceEntry) -> bool:
    if entry.kind == "caller_said":
        return True
    return entry.kind == "barge_in" and entry.data.get("text") is not None


def _is_turn(turns: Sequence[Turn], index: int, speaker: Speaker) -> bool:
    return 0 <= index < len(turns) and turns[index].speaker is speaker
