"""Vapi: the `end-of-call-report` server message (bare or in its `{"message": …}` webhook
envelope) and the call object of `GET /call/:id`, both carrying `artifact.messages`.

Roles: `user` is the caller, `bot` (older payloads: `assistant`) the agent, `system` the prompt,
`tool_calls` / `tool_call_result` the tools, joined by `toolCalls[].id == toolCallId`. Units:
`secondsFromStart` is seconds from the call's start, `duration` milliseconds, `time` / `endTime`
epoch milliseconds.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, TypeGuard

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    Speaker,
    check_counts,
    join_path,
    seconds_at,
    text_at,
    timestamp,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    ToolJoin,
    as_object,
    identifier,
    item_list,
    last_turn,
    mark_overlaps,
    named_arguments,
    objects,
    required_text,
    result_error,
    text,
    unmapped,
)

NAME = "vapi"
END_OF_CALL = "end-of-call-report"
SPEAKERS = {"user": "caller", "bot": "agent", "assistant": "agent"}


def detect(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    message = record.get("message")
    if isinstance(message, dict) and message.get("type") == END_OF_CALL:
        return True
    if record.get("type") == END_OF_CALL:
        return True
    artifact = record.get("artifact")
    return isinstance(artifact, dict) and isinstance(artifact.get("messages"), list)


def parse(record: object) -> ImportedCall:
    top = as_object(record, "(record)")
    report, base = top, ""
    envelope: dict[str, Any] = {}
    if isinstance(top.get("message"), dict) and top["message"].get("type") == END_OF_CALL:
        report, base = top["message"], "message"
        envelope = unmapped(top, ["message"])
    call = _call_object(report, base)
    call_id = identifier(call.get("id"), join_path(_call_path(report, base), "id"))
    artifact_path = join_path(base, "artifact")
    artifact = as_object(report.get("artifact"), artifact_path)
    history = _History()
    messages_path = join_path(artifact_path, "messages")
    for index, message in enumerate(item_list(artifact.get("messages"), messages_path)):
        # A message's path is put together only when something in it needs naming.
        if type(message) is dict:
            history.add(message, messages_path, index)
        else:
            as_object(message, f"{messages_path}[{index}]")
    mark_overlaps(history.turns)
    metadata = unmapped(report, ["artifact"])
    metadata["artifact"] = unmapped(artifact, ["messages"])
    if history.system:
        metadata["system_messages"] = history.system
    if history.other:
        metadata["other_messages"] = history.other
    if envelope:
        metadata["envelope"] = envelope
    started_at, duration = _times(report, call, base)
    if started_at is None:
        started_at = _epoch_start(artifact["messages"])
    return check_counts(
        ImportedCall(
            call_id=call_id,
            source_format=NAME,
            turns=history.turns,
            tool_calls=history.tools.finished(),
            started_at=started_at,
            duration=duration,
            ended_reason=_ended_reason(report, call, base),
            metadata=metadata,
        )
    )


def _call_object(report: dict[str, Any], base: str) -> dict[str, Any]:
    """The call: `call` inside a report, the record itself for a bare call object."""
    if report.get("type") == END_OF_CALL or "call" in report:
        return as_object(report.get("call"), join_path(base, "call"))
    return report


def _call_path(report: dict[str, Any], base: str) -> str:
    return (
        join_path(base, "call") if report.get("type") == END_OF_CALL or "call" in report else base
    )


def _times(
    report: dict[str, Any], call: dict[str, Any], base: str
) -> tuple[datetime | None, float | None]:
    """Start time and duration from `startedAt` / `endedAt` (on the report or its call)."""
    source, path = (report, base) if "startedAt" in report else (call, _call_path(report, base))
    started_raw, ended_raw = source.get("startedAt"), source.get("endedAt")
    started = None if started_raw is None else timestamp(started_raw, join_path(path, "startedAt"))
    ended = None if ended_raw is None else timestamp(ended_raw, join_path(path, "endedAt"))
    if started is None or ended is None:
        return started, None
    try:
        return started, max(0.0, (ended - started).total_seconds())
    except TypeError:  # one time has a zone, the other not: keep the start only
        return started, None


def _epoch_start(messages: list[Any]) -> datetime | None:
    """The call's start from the first message's epoch `time` less its `secondsFromStart`,
    for a report without `startedAt` (the messages were checked by then)."""
    for message in messages:
        moment, offset = message.get("time"), message.get("secondsFromStart")
        if _is_number(moment) and _is_number(offset):
            try:
                return datetime.fromtimestamp(moment / 1000.0 - offset, tz=UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None


def _is_number(value: object) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _ended_reason(report: dict[str, Any], call: dict[str, Any], base: str) -> str | None:
    for source, path in ((report, base), (call, _call_path(report, base))):
        if source.get("endedReason") is not None:
            return text(source["endedReason"], join_path(path, "endedReason"))
    return None


class _History:
    """The messages walked in order into turns and tool calls."""

    def __init__(self) -> None:
        self.turns: list[ImportedTurn] = []
        self.tools = ToolJoin()
        self.system: list[dict[str, Any]] = []
        self.other: list[dict[str, Any]] = []

    def add(self, message: dict[str, Any], base: str, index: int) -> None:
        """The message at `base[index]`: a turn, a tool call or result, or a message kept."""
        role = message.get("role")
        if type(role) is str and role in SPEAKERS:  # most messages: a turn, plain at that
            turn = _plain_turn(message, role)
            self.turns.append(turn or _turn(message, f"{base}[{index}]", role))
            return
        where = f"{base}[{index}]"
        if type(role) is not str:
            role = required_text(role, join_path(where, "role"))
        if role == "tool_calls":
            self._tool_calls(message, where)
        elif role == "tool_call_result":
            self._tool_result(message, where)
        elif role == "system":
            self.system.append(message)
        else:  # a role this parser does not know: kept, with its place in the call
            self.other.append({"after_turn": last_turn(self.turns), "message": message})

    def _tool_calls(self, message: dict[str, Any], where: str) -> None:
        start = seconds_at(message, "secondsFromStart", where)
        shared = unmapped(message, _TOOL_CALLS_FIELDS)
        calls_path = join_path(where, "toolCalls")
        after_turn = last_turn(self.turns)
        for call_where, call in objects(message.get("toolCalls"), calls_path):
            function_path = f"{call_where}.function"  # join_path under a path never empty
            function = call.get("function")
            if type(function) is not dict:
                function = as_object(function, function_path)
            extra = unmapped(call, _CALL_FIELDS)
            extra.update(unmapped(function, _FUNCTION_FIELDS))
            if shared:
                extra["message"] = shared
            tool, args = named_arguments(function, function_path, "name", "arguments")
            call_id = call.get("id")
            if type(call_id) is not str or not call_id:  # the path is made only for an error
                call_id = identifier(call_id, join_path(call_where, "id"))
            self.tools.call(
                ImportedToolCall(
                    call_id=call_id,
                    tool=tool,
                    args=args,
                    start=start,
                    after_turn=after_turn,
                    extra=extra,
                ),
                call_where,
            )

    def _tool_result(self, message: dict[str, Any], where: str) -> None:
        tool_call = self.tools.result_of(
            message, where, id_key="toolCallId", name_key="name", result_key="result",
            after_turn=last_turn(self.turns),
        )  # fmt: skip
        tool_call.end = seconds_at(message, "secondsFromStart", where)
        # Vapi's result message has no failure flag: a result that says `{"error": ...}` is
        # the tool's failure (the content counts, as for Retell).
        tool_call.error = result_error(tool_call.result)
        kept = unmapped(message, _RESULT_FIELDS)
        if kept:
            tool_call.extra["result_message"] = kept


def _plain_turn(message: dict[str, Any], role: str) -> ImportedTurn | None:
    """`_turn` of a message whose start, duration and text have their plain types, as most
    have: the same turn, without the checks that name a field; None for any other message
    (read by `_turn`, which names what is wrong)."""
    start, length = message.get("secondsFromStart"), message.get("duration")
    said = message.get("message")
    if not (
        (type(start) is float or type(start) is int)
        and (type(length) is float or type(length) is int)
        and type(said) is str
        and 0 <= start < _INFINITY  # a bool is neither number; NaN fails the range
        and 0 <= length < _INFINITY
    ):
        return None
    extra = dict(message)  # `unmapped(message, _TURN_FIELDS)`, its three keys dropped
    del extra["role"], extra["message"], extra["secondsFromStart"]
    if role == "assistant":
        extra["role"] = role
    speaker: Speaker = "caller" if SPEAKERS[role] == "caller" else "agent"
    begin = float(start)
    return ImportedTurn(speaker, said, begin, begin + length / 1000.0, False, extra)


_INFINITY = math.inf


def _turn(message: dict[str, Any], where: str, role: str) -> ImportedTurn:
    start = seconds_at(message, "secondsFromStart", where)
    length = seconds_at(message, "duration", where, "ms")
    if length is None:
        length = _epoch_length(message, where)
    end = None if start is None or length is None else start + length
    extra = unmapped(message, _TURN_FIELDS)
    if role == "assistant":
        extra["role"] = role  # the older name for the agent, kept so the source reads true
    return ImportedTurn(
        speaker="caller" if SPEAKERS[role] == "caller" else "agent",
        text=text_at(message, "message", where),
        start=start,
        end=end,
        extra=extra,
    )


_TURN_FIELDS = frozenset(("role", "message", "secondsFromStart"))
_TOOL_CALLS_FIELDS = frozenset(("role", "toolCalls", "secondsFromStart"))
_CALL_FIELDS = frozenset(("id", "function"))
_FUNCTION_FIELDS = frozenset(("name", "arguments"))
_RESULT_FIELDS = frozenset(("role", "toolCallId", "name", "result", "secondsFromStart"))


def _epoch_length(message: dict[str, Any], where: str) -> float | None:
    """Speech length from epoch-millisecond `time` / `endTime`, when `duration` is absent."""
    began = seconds_at(message, "time", where, "ms")
    ended = seconds_at(message, "endTime", where, "ms")
    if began is None or ended is None or ended < began:
        return None
    return ended - began


FORMAT = RecordFormat(
    name=NAME,
    description="Vapi end-of-call reports (webhook envelope or bare) and call objects",
    detector=detect,
    parser=parse,
)
