"""Deepgram pre-recorded transcription with utterances
(`/v1/listen?utterances=true&diarize_model=latest`, or `multichannel=true`).

`results.utterances[]` carries `start` / `end` (seconds from the audio's start), `transcript`,
`confidence`, `words[]`, `channel` and, when diarized, `speaker`. There are no roles and no
tools: each utterance's `speaker` (or its `channel` when it has no speaker) says who spoke, and
Polygon maps one number to the agent and every other to the caller. The default agent number
is 0: diarization numbers speakers in the order they are first heard, and on a call to an
agent the agent's greeting comes first. Pass another with `parse(record, agent_channel=1)` or
`FORMAT.with_agent_channel(1)`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from polygon_voice.imports.base import (
    ImportedCall,
    ImportedTurn,
    RecordError,
    check_counts,
    expect_type,
    join_path,
    optional_seconds,
    timestamp,
)
from polygon_voice.imports.formats._vendor import (
    ChannelFormat,
    as_object,
    content_id,
    identifier,
    mark_overlaps,
    objects,
    text,
    unmapped,
)

NAME = "deepgram"
DEFAULT_AGENT_CHANNEL = 0


def detect(record: object) -> bool:
    if not isinstance(record, dict):
        return False
    results = record.get("results")
    return isinstance(results, dict) and (
        isinstance(results.get("utterances"), list) or isinstance(results.get("channels"), list)
    )


def parse(record: object, agent_channel: int = DEFAULT_AGENT_CHANNEL) -> ImportedCall:
    top = as_object(record, "(record)")
    results = as_object(top.get("results"), "results")
    if results.get("utterances") is None:
        raise RecordError(
            "results.utterances",
            "missing: request the transcript with utterances=true (and diarize_model or"
            " multichannel) so Polygon can tell who spoke",
        )
    turns = [
        _turn(utterance, where, agent_channel)
        for where, utterance in objects(results["utterances"], "results.utterances")
    ]
    turns.sort(key=lambda turn: float("inf") if turn.start is None else turn.start)
    mark_overlaps(turns)
    info = top.get("metadata")
    info = {} if info is None else as_object(info, "metadata")
    metadata = unmapped(top, ["results"])
    metadata["results"] = unmapped(results, ["utterances"])
    metadata["agent_channel"] = agent_channel
    return check_counts(
        ImportedCall(
            call_id=_call_id(info, top),
            source_format=NAME,
            turns=turns,
            started_at=_created(info),
            duration=optional_seconds(info.get("duration"), "metadata.duration"),
            metadata=metadata,
        )
    )


def _call_id(info: dict[str, Any], record: object) -> str:
    """Deepgram's `metadata.request_id`; else a digest of the record."""
    if info.get("request_id") not in (None, ""):
        return identifier(info["request_id"], "metadata.request_id")
    return content_id(NAME, record)


def _created(info: dict[str, Any]) -> datetime | None:
    value = info.get("created")
    return None if value is None else timestamp(value, "metadata.created")


def _turn(utterance: dict[str, Any], where: str, agent_channel: int) -> ImportedTurn:
    key = "speaker" if utterance.get("speaker") is not None else "channel"
    who = expect_type(utterance.get(key), int, join_path(where, key))
    return ImportedTurn(
        speaker="agent" if who == agent_channel else "caller",
        text=text(utterance.get("transcript"), join_path(where, "transcript")),
        start=optional_seconds(utterance.get("start"), join_path(where, "start")),
        end=optional_seconds(utterance.get("end"), join_path(where, "end")),
        extra=unmapped(utterance, ["transcript", "start", "end"]),
    )


FORMAT = ChannelFormat(
    NAME,
    "Deepgram pre-recorded transcripts with utterances (by speaker or channel)",
    DEFAULT_AGENT_CHANNEL,
    detect,
    parse,
)
