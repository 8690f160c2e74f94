"""ElevenLabs Conversational AI: the conversation of `GET /v1/convai/conversations/{id}` and
the `post_call_transcription` webhook (the same conversation under `data`). The
`post_call_audio` webhook carries audio and no transcript: it is recognised and skipped
("audio only: nothing to import"), counted as skipped, not failed.

`transcript[]` turns have `role` `user` (the caller) or `agent`, `message` and
`time_in_call_secs` (whole seconds from the call's start); tool calls and their results sit
inside an agent turn (`tool_calls[]`, `tool_results[]`), joined by `request_id`;
`interrupted: true` marks a barge-in. `metadata` carries the start (epoch seconds), duration,
termination reason and language.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    check_counts,
    join_path,
    optional_seconds,
    show,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    ToolJoin,
    as_object,
    flag,
    identifier,
    last_turn,
    objects,
    optional_text,
    optional_time,
    required_text,
    text,
    unmapped,
)

NAME = "elevenlabs"
WEBHOOK = "post_call_transcription"
# The webhook that carries the call's audio and no transcript: nothing Polygon can import.
AUDIO_WEBHOOK = "post_call_audio"
AUDIO_ONLY = "audio only: nothing to import"
SPEAKERS = {"user": "caller", "agent": "agent"}
TURN_KEYS = ["role", "message", "time_in_call_secs", "interrupted", "tool_calls", "tool_results"]


def detect(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("type") in (WEBHOOK, AUDIO_WEBHOOK) and isinstance(record.get("data"), dict):
        return True
    return isinstance(record.get("conversation_id"), str) and isinstance(
        record.get("transcript"), list
    )


def parse(record: object) -> ImportedCall:
    top = as_object(record, "(record)")
    if top.get("type") == AUDIO_WEBHOOK:
        return _audio_only(top)
    conversation, base, envelope = top, "", {}
    if top.get("type") == WEBHOOK or ("data" in top and "conversation_id" not in top):
        conversation, base = as_object(top.get("data"), "data"), "data"
        envelope = unmapped(top, ["data"])
    call_id = identifier(conversation.get("conversation_id"), join_path(base, "conversation_id"))
    history = _History()
    for where, turn in objects(conversation.get("transcript"), join_path(base, "transcript")):
        history.add(turn, where)
    info_path = join_path(base, "metadata")
    info = conversation.get("metadata")
    info = {} if info is None else as_object(info, info_path)
    metadata = unmapped(conversation, ["transcript"])
    if history.empty_turns:
        metadata["empty_turns"] = history.empty_turns
    if envelope:
        metadata["envelope"] = envelope
    return check_counts(
        ImportedCall(
            call_id=call_id,
            source_format=NAME,
            turns=history.turns,
            tool_calls=history.tools.finished(),
            started_at=optional_time(info, "start_time_unix_secs", info_path),
            duration=optional_seconds(
                info.get("call_duration_secs"), join_path(info_path, "call_duration_secs")
            ),
            language=optional_text(info, "main_language", info_path),
            ended_reason=optional_text(info, "termination_reason", info_path),
            metadata=metadata,
        )
    )


def _audio_only(top: dict[str, Any]) -> ImportedCall:
    """A `post_call_audio` webhook: the call's id and no turns, so the import skips it and
    says why. The audio itself (base64 in `data.full_audio`) is not kept."""
    data = as_object(top.get("data"), "data")
    call_id = identifier(data.get("conversation_id"), "data.conversation_id")
    return ImportedCall(
        call_id=call_id,
        source_format=NAME,
        turns=[],
        metadata={"skip_reason": AUDIO_ONLY, **unmapped(data, ["conversation_id", "full_audio"])},
    )


class _History:
    """The transcript's turns walked in order; the tool calls nested in them pulled out."""

    def __init__(self) -> None:
        self.turns: list[ImportedTurn] = []
        self.tools = ToolJoin()
        self.empty_turns: list[dict[str, Any]] = []

    def add(self, turn: dict[str, Any], where: str) -> None:
        role = required_text(turn.get("role"), join_path(where, "role"))
        spoken = text(turn.get("message"), join_path(where, "message"))
        start = optional_seconds(
            turn.get("time_in_call_secs"), join_path(where, "time_in_call_secs")
        )
        interrupted = flag(turn.get("interrupted"), join_path(where, "interrupted"))
        extra = unmapped(turn, TURN_KEYS)
        if role in SPEAKERS and spoken.strip():
            self.turns.append(
                ImportedTurn(
                    speaker="caller" if SPEAKERS[role] == "caller" else "agent",
                    text=spoken,
                    start=start,
                    interrupted=interrupted,
                    extra=extra,
                )
            )
        elif role not in SPEAKERS or not turn.get("tool_calls"):
            # A turn with nothing said and no tool (or a role not known yet): kept, not a turn.
            self.empty_turns.append({"after_turn": last_turn(self.turns), **turn})
        self._tool_calls(turn, where, start, extra if not spoken.strip() else {})
        self._tool_results(turn, where, start)

    def _tool_calls(
        self, turn: dict[str, Any], where: str, start: float | None, turn_extra: dict[str, Any]
    ) -> None:
        calls = turn.get("tool_calls")
        if calls is None:
            return
        for call_where, call in objects(calls, join_path(where, "tool_calls")):
            extra = unmapped(call, ["request_id", "tool_name", "params_as_json"])
            if turn_extra:
                extra["turn"] = turn_extra
            self.tools.request_of(
                call,
                call_where,
                ("request_id", "tool_name", "params_as_json"),
                start=start,
                after_turn=last_turn(self.turns),
                extra=extra,
            )

    def _tool_results(self, turn: dict[str, Any], where: str, start: float | None) -> None:
        results = turn.get("tool_results")
        if results is None:
            return
        for result_where, result in objects(results, join_path(where, "tool_results")):
            raw = result.get("result_value")
            tool_call = self.tools.result_of(
                result, result_where, id_key="request_id", name_key="tool_name",
                result_key="result_value", after_turn=last_turn(self.turns),
            )  # fmt: skip
            latency = optional_seconds(
                result.get("tool_latency_secs"), join_path(result_where, "tool_latency_secs")
            )
            if tool_call.start is None:
                tool_call.start = start
            if tool_call.start is not None and latency is not None:
                tool_call.end = tool_call.start + latency
            if flag(result.get("is_error"), join_path(result_where, "is_error")):
                tool_call.error = raw if isinstance(raw, str) and raw else show(raw, 500)
            kept = unmapped(result, ["request_id", "tool_name", "result_value", "is_error"])
            if kept:
                tool_call.extra["result"] = kept


FORMAT = RecordFormat(
    name=NAME,
    description="ElevenLabs conversations and post_call_transcription webhooks",
    detector=detect,
    parser=parse,
)
