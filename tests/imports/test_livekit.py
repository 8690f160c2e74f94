"""LiveKit session history and session reports: items, barge-in, tool calls by call_id."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats import livekit
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
)


def test_bare_history_without_timestamps() -> None:
    call = livekit.parse(load("livekit", "minimal"))
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("agent", "Hi, how can I help?"),
        ("caller", "Just checking the hours."),
    ]
    assert all(t.start is None for t in call.turns)  # to_dict() drops created_at by default
    assert call.turns[1].extra["transcript_confidence"] == 0.93
    assert call.call_id.startswith("livekit-")
    assert call.call_id == livekit.parse(load("livekit", "minimal")).call_id  # stable


def test_report_times_are_seconds_from_the_first_item() -> None:
    call = livekit.parse(load("livekit", "rich"))
    assert call.call_id == "RM_1"
    assert call.started_at == datetime.fromtimestamp(1756000000.0, tz=UTC)
    greeting, booking = call.turns[0], call.turns[1]
    assert (greeting.start, greeting.end) == (0.2, 1.5)  # started / stopped speaking metrics
    assert booking.start == 3.4  # created_at when there are no speech metrics
    assert call.metadata["system_messages"][0]["content"] == ["You book appointments."]


def test_report_joins_tool_calls_and_keeps_failures() -> None:
    call = livekit.parse(load("livekit", "rich"))
    slots, book = call.tool_calls
    assert (slots.call_id, slots.tool, slots.args) == (
        "call_1",
        "list_available_slots",
        {"day": "tomorrow"},
    )
    assert slots.result == ["14:00"]
    assert (slots.start, slots.end) == (4.0, 4.3)
    assert slots.after_turn == 1
    assert slots.extra["output_item"]["reply_required"] is True
    assert book.error == "slot already taken"
    assert book.result == "slot already taken"


def test_interrupted_marker_and_unknown_items_are_kept() -> None:
    call = livekit.parse(load("livekit", "rich"))
    assert [t.interrupted for t in call.turns] == [False, False, True, False]
    assert call.turns[3].extra["future_key"] == "kept"
    kinds = [event["type"] for event in call.metadata["events_in_history"]]
    assert kinds == ["agent_handoff", "agent_config_update"]
    assert call.metadata["events_in_history"][0]["after_turn"] == 3
    assert call.metadata["options"]["max_tool_steps"] == 3
    assert call.metadata["sdk_version"] == "1.7.0"


def test_content_parts_other_than_text_are_kept_apart() -> None:
    record = with_value(
        load("livekit", "minimal"),
        ["items", 0, "content"],
        ["Hi,", {"type": "image_content", "image": "x"}, "how can I help?"],
    )
    turn = livekit.parse(record).turns[0]
    assert turn.text == "Hi, how can I help?"
    assert turn.extra["content_parts"] == [{"type": "image_content", "image": "x"}]


ITEMS = ["chat_history", "items"]
MALFORMED: list[tuple[str, list[str | int], Any, str]] = [
    ("minimal", ["items"], {"a": 1}, "items"),
    ("minimal", ["items", 0], 5, "items[0]"),
    ("minimal", ["items", 0, "type"], None, "items[0].type"),
    ("minimal", ["items", 0, "role"], 1, "items[0].role"),
    ("minimal", ["items", 0, "content"], 12, "items[0].content"),
    ("minimal", ["items", 0, "interrupted"], "no", "items[0].interrupted"),
    ("rich", ["chat_history"], [], "chat_history"),
    ("rich", [*ITEMS, 1, "created_at"], "now", "chat_history.items[1].created_at"),
    ("rich", [*ITEMS, 3, "arguments"], "{bad", "chat_history.items[3].arguments"),
    ("rich", [*ITEMS, 3, "call_id"], None, "chat_history.items[3].call_id"),
    ("rich", [*ITEMS, 4, "is_error"], "false", "chat_history.items[4].is_error"),
    (
        "rich",
        [*ITEMS, 1, "metrics", "stopped_speaking_at"],
        "x",
        "chat_history.items[1].metrics.stopped_speaking_at",
    ),
]


@pytest.mark.parametrize(("fixture", "path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(
    fixture: str, path: list[str | int], value: Any, where: str
) -> None:
    error = error_of(livekit.parse, with_value(load("livekit", fixture), path, value))
    assert error.where == where


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(livekit.parse, {"items": items})
    assert error.where == "items"
    assert "limit" in error.message


def test_retell_list_envelope_is_not_livekit() -> None:
    assert not livekit.detect({"items": [{"type": "message"}], "pagination_key": "k"})


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_livekit_like_json(record: object) -> None:
    parse_or_error(livekit.parse, record)
    parse_or_error(livekit.parse, {"items": [record]})
    parse_or_error(livekit.parse, {"room_id": "r", "chat_history": {"items": [record]}})
