"""ElevenLabs conversations and post-call webhooks: nested tool calls, barge-in, metadata."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats import elevenlabs
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
)


def test_minimal_conversation() -> None:
    call = elevenlabs.parse(load("elevenlabs", "minimal"))
    assert call.call_id == "el-min-1"
    assert [(t.speaker, t.text, t.start) for t in call.turns] == [
        ("agent", "Hi, how can I help?", 0.0),
        ("caller", "Just a question about hours.", 3.0),
    ]
    assert call.started_at == datetime.fromtimestamp(1717651100, tz=UTC)
    assert call.duration == 12.0


def test_webhook_pulls_nested_tool_calls_out_of_the_turn() -> None:
    call = elevenlabs.parse(load("elevenlabs", "rich"))
    # The agent turn with no message and two tools is not a turn of its own.
    assert [t.speaker for t in call.turns] == ["agent", "caller", "agent", "caller"]
    status, notify = call.tool_calls
    assert (status.call_id, status.tool, status.args) == ("r1", "order_status", {"id": "W1"})
    assert status.result == {"shipped": True}
    assert (status.start, status.end) == (5.0, pytest.approx(5.4))  # latency added
    assert status.after_turn == 1
    assert status.error is None
    assert notify.error == "gateway error 502"
    assert notify.extra["type"] == "webhook"


def test_webhook_keeps_interruptions_and_unknown_fields() -> None:
    call = elevenlabs.parse(load("elevenlabs", "rich"))
    assert call.turns[2].interrupted
    assert not call.turns[0].interrupted
    assert call.turns[3].extra["new_turn_field"] == 7
    assert call.turns[1].extra["source_medium"] == "audio"
    assert call.ended_reason == "user hung up"
    assert call.language == "en"
    assert call.duration == 40.0
    assert call.metadata["analysis"]["call_successful"] == "success"
    assert call.metadata["envelope"] == {
        "type": "post_call_transcription",
        "event_timestamp": 1717651200,
    }
    assert call.metadata["metadata"]["cost"] == 120


def test_empty_turn_without_tools_is_kept_aside() -> None:
    record = with_value(load("elevenlabs", "minimal"), ["transcript", 1, "message"], None)
    call = elevenlabs.parse(record)
    assert len(call.turns) == 1
    assert call.metadata["empty_turns"][0]["role"] == "user"


TURNS = ["data", "transcript"]
MALFORMED: list[tuple[str, list[str | int], Any, str]] = [
    ("minimal", ["conversation_id"], None, "conversation_id"),
    ("minimal", ["transcript"], "hi", "transcript"),
    ("minimal", ["transcript", 0, "role"], None, "transcript[0].role"),
    ("minimal", ["transcript", 0, "message"], 3, "transcript[0].message"),
    ("minimal", ["transcript", 1, "time_in_call_secs"], "3s", "transcript[1].time_in_call_secs"),
    ("minimal", ["metadata"], "x", "metadata"),
    ("minimal", ["metadata", "start_time_unix_secs"], "x", "metadata.start_time_unix_secs"),
    ("rich", ["data"], 5, "data"),
    ("rich", [*TURNS, 2, "tool_calls"], {}, "data.transcript[2].tool_calls"),
    (
        "rich",
        [*TURNS, 2, "tool_calls", 0, "params_as_json"],
        "{x",
        "data.transcript[2].tool_calls[0].params_as_json",
    ),
    (
        "rich",
        [*TURNS, 2, "tool_results", 1, "request_id"],
        None,
        "data.transcript[2].tool_results[1].request_id",
    ),
    (
        "rich",
        [*TURNS, 2, "tool_results", 0, "is_error"],
        "no",
        "data.transcript[2].tool_results[0].is_error",
    ),
    ("rich", [*TURNS, 3, "interrupted"], 1, "data.transcript[3].interrupted"),
    ("rich", ["data", "metadata", "main_language"], 5, "data.metadata.main_language"),
]


@pytest.mark.parametrize(("fixture", "path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(
    fixture: str, path: list[str | int], value: Any, where: str
) -> None:
    error = error_of(elevenlabs.parse, with_value(load("elevenlabs", fixture), path, value))
    assert error.where == where


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(elevenlabs.parse, {"conversation_id": "c", "transcript": items})
    assert error.where == "transcript"
    assert "limit" in error.message


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_elevenlabs_like_json(record: object) -> None:
    parse_or_error(elevenlabs.parse, record)
    parse_or_error(elevenlabs.parse, {"conversation_id": "c", "transcript": [record]})
    parse_or_error(elevenlabs.parse, {"type": "post_call_transcription", "data": record})


def test_the_audio_webhook_is_recognised_and_has_nothing_to_import() -> None:
    record = load("elevenlabs", "audio_webhook")
    assert elevenlabs.detect(record)
    call = elevenlabs.parse(record)
    assert call.call_id == "conv_audio_1"
    assert call.turns == []
    assert call.tool_calls == []
    assert "full_audio" not in call.metadata


def test_the_audio_webhook_is_skipped_with_its_reason_not_failed(tmp_path: Any) -> None:
    import json

    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store, resolve_db_url

    path = tmp_path / "hooks.jsonl"
    lines = [load("elevenlabs", "audio_webhook"), load("elevenlabs", "minimal")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    store = Store(resolve_db_url(str(tmp_path / "e.db")))
    try:
        summary = import_calls(store, ImportOptions((str(path),)))
    finally:
        store.close()
    assert (summary.imported, summary.failed) == (1, [])
    [skip] = summary.skipped
    assert skip.source == f"{path}:1"
    assert skip.message == "call conv_audio_1: audio only: nothing to import"
