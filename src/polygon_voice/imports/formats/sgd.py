"""Schema-Guided Dialogue (SGD) dialogues: `{dialogue_id, services, turns: [{speaker, utterance,
frames: [{service, actions, slots, state?, service_call?, service_results?}]}]}`, one record per
dialogue (a dialogues file is a JSON list of them).

`USER` is the caller and `SYSTEM` the agent. A frame's `service_call` (`{method, parameters}`)
is a tool call whose result is the frame's `service_results`. It sits on the SYSTEM turn whose
words already tell its results ("I found 10 hotels..."), so it was made before that turn: after
the turn before it. A frame whose system acts include `NOTIFY_FAILURE` is the dataset saying
the call failed (the transaction was refused), so that call is a failed call. The dialogue acts,
slots and states stay with each turn (`frames`, in the turn's extra); `services` and any other
dialogue field are kept as metadata. These are labels: kept, never used to judge.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
    Speaker,
    check_counts,
    join_path,
    json_args,
)
from polygon_voice.imports.formats._vendor import (
    RecordFormat,
    ToolJoin,
    as_object,
    identifier,
    last_turn,
    objects,
    required_text,
    speaker_of,
    text,
    unmapped,
)

NAME = "sgd"
SPEAKERS: dict[str, Speaker] = {"USER": "caller", "SYSTEM": "agent"}
FAILURE_ACT = "NOTIFY_FAILURE"
TOOL_KEYS = ("service_call", "service_results")


def detect(record: object) -> bool:
    return (
        isinstance(record, dict)
        and "dialogue_id" in record
        and isinstance(record.get("turns"), list)
    )


def parse(record: object) -> ImportedCall:
    dialogue = as_object(record, "(record)")
    dialogue_id = identifier(dialogue.get("dialogue_id"), "dialogue_id")
    turns: list[ImportedTurn] = []
    tools = ToolJoin()
    for where, turn in objects(dialogue.get("turns"), "turns"):
        speaker_where = join_path(where, "speaker")
        speaker = speaker_of(
            required_text(turn.get("speaker"), speaker_where), SPEAKERS, speaker_where
        )
        frames = list(objects(turn.get("frames") or [], join_path(where, "frames")))
        for frame_where, frame in frames:
            tool_call = _service_call(frame, frame_where, last_turn(turns))
            if tool_call is not None:
                tools.call(tool_call, frame_where)
        extra = unmapped(turn, ["speaker", "utterance", "frames"])
        if frames:
            extra["frames"] = [unmapped(frame, TOOL_KEYS) for _where, frame in frames]
        utterance = text(turn.get("utterance"), join_path(where, "utterance"))
        turns.append(ImportedTurn(speaker=speaker, text=utterance, extra=extra))
    return check_counts(
        ImportedCall(
            call_id=f"sgd-{dialogue_id}",
            source_format=NAME,
            turns=turns,
            tool_calls=tools.finished(),
            metadata=unmapped(dialogue, ["turns"]),
        )
    )


def _service_call(
    frame: dict[str, Any], where: str, after_turn: int | None
) -> ImportedToolCall | None:
    raw = frame.get("service_call")
    if raw is None:
        return None
    call_where = join_path(where, "service_call")
    call = as_object(raw, call_where)
    method = required_text(call.get("method"), join_path(call_where, "method"))
    if not method:
        raise RecordError(join_path(call_where, "method"), "expected a method name, got nothing")
    extra = unmapped(call, ["method", "parameters"])
    if frame.get("service") is not None:
        extra["service"] = frame["service"]
    return ImportedToolCall(
        call_id=where,
        tool=method,
        args=json_args(call.get("parameters"), join_path(call_where, "parameters")),
        result=frame.get("service_results"),
        error=_failure(frame, where),
        after_turn=after_turn,
        extra=extra,
    )


def _failure(frame: dict[str, Any], where: str) -> str | None:
    """The failure the frame's dialogue acts report (NOTIFY_FAILURE), if any."""
    actions = frame.get("actions")
    if actions is None:
        return None
    for _where, action in objects(actions, join_path(where, "actions")):
        if action.get("act") == FAILURE_ACT:
            return "the service refused the request (the system's act is NOTIFY_FAILURE)"
    return None


FORMAT = RecordFormat(
    name=NAME,
    description="Schema-Guided Dialogue (SGD) dialogues with service calls",
    detector=detect,
    parser=parse,
)
