"""Deepgram utterances: speaker (or channel) mapped to agent/caller by an option, times."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats import deepgram
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
    without,
)


def test_minimal_utterance_with_default_agent_speaker() -> None:
    call = deepgram.parse(load("deepgram", "minimal"))
    (turn,) = call.turns
    assert (turn.speaker, turn.start, turn.end) == ("agent", 0.42, 5.43)
    assert turn.text == "hi I'd like to move my appointment"
    assert turn.extra["words"][0]["confidence"] == 0.58  # word confidence kept
    assert call.metadata["agent_channel"] == 0


def test_agent_speaker_can_be_overridden() -> None:
    record = load("deepgram", "minimal")
    assert deepgram.parse(record, agent_channel=1).turns[0].speaker == "caller"
    assert deepgram.FORMAT.with_agent_channel(1).parse(record).turns[0].speaker == "caller"


def test_rich_response_keeps_metadata_and_marks_overlaps() -> None:
    call = deepgram.parse(load("deepgram", "rich"))
    assert call.call_id == "dg-rich-1"
    assert call.started_at == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert call.duration == 14.2
    assert [t.speaker for t in call.turns] == ["agent", "caller", "agent"]
    assert call.turns[1].interrupted  # the agent started at 5.2 s, the caller spoke to 5.4 s
    assert call.turns[2].extra["new_field"] == "kept"
    assert call.metadata["metadata"]["models"] == ["m1"]
    assert call.metadata["results"]["channels"][0]["alternatives"][0]["transcript"]


def test_channel_is_used_when_there_is_no_speaker() -> None:
    record = without(load("deepgram", "minimal"), ["results", "utterances", 0, "speaker"])
    record = with_value(record, ["results", "utterances", 0, "channel"], 1)
    assert deepgram.parse(record).turns[0].speaker == "caller"


def test_response_without_utterances_says_how_to_get_them() -> None:
    record = {"results": {"channels": [{"alternatives": [{"transcript": "hello"}]}]}}
    assert deepgram.detect(record)
    error = error_of(deepgram.parse, record)
    assert error.where == "results.utterances"
    assert "utterances=true" in error.message


UTTERANCES = ["results", "utterances"]
MALFORMED: list[tuple[list[str | int], Any, str]] = [
    (["results"], [], "results"),
    ([*UTTERANCES], "x", "results.utterances"),
    ([*UTTERANCES, 0], 1, "results.utterances[0]"),
    ([*UTTERANCES, 0, "speaker"], "zero", "results.utterances[0].speaker"),
    ([*UTTERANCES, 0, "start"], "abc", "results.utterances[0].start"),
    ([*UTTERANCES, 0, "end"], float("inf"), "results.utterances[0].end"),
    ([*UTTERANCES, 0, "transcript"], {"t": 1}, "results.utterances[0].transcript"),
]


@pytest.mark.parametrize(("path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(deepgram.parse, with_value(load("deepgram", "minimal"), path, value))
    assert error.where == where


def test_malformed_metadata_is_named() -> None:
    record = with_value(load("deepgram", "rich"), ["metadata", "created"], "May")
    assert error_of(deepgram.parse, record).where == "metadata.created"


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(deepgram.parse, {"results": {"utterances": items}})
    assert error.where == "results.utterances"
    assert "limit" in error.message


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_deepgram_like_json(record: object) -> None:
    parse_or_error(deepgram.parse, record)
    parse_or_error(deepgram.parse, {"results": {"utterances": [record]}})


def test_agent_label_that_is_a_number_picks_the_speaker() -> None:
    record = load("deepgram", "minimal")
    assert deepgram.FORMAT.with_agent_label(" 1 ").parse(record).turns[0].speaker == "caller"
    assert deepgram.FORMAT.with_agent_label("agent") is deepgram.FORMAT
