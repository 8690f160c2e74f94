"""ImportedCall -> ConversationResult: times, tool call lifecycles, the end, kept metadata."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.imports import (
    Format,
    ImportedCall,
    ImportedToolCall,
    ImportedTurn,
    RecordError,
)
from polygon_voice.imports.convert import end_reason, import_entry, to_conversation
from polygon_voice.imports.formats import FORMATS
from polygon_voice.imports.run import convert_record, parse_record
from polygon_voice.model import CallStatus, ConversationResult, EndReason
from tests.imports.strategies import chat_messages, json_values


def call(**changes: object) -> ImportedCall:
    base = ImportedCall(
        call_id="c1",
        source_format="test",
        turns=[
            ImportedTurn("agent", "Hello, this is the clinic.", 0.0, 2.0),
            ImportedTurn("caller", "Hi, I need to move my", 2.5, 4.0, interrupted=True),
            ImportedTurn("agent", "Sure.", 3.8, 4.5, extra={"confidence": 0.9}),
        ],
        tool_calls=[
            ImportedToolCall("t1", "find", {"q": "x"}, result={"n": 1}, start=5.0, end=5.4),
            ImportedToolCall("t2", "book", {}, error="upstream timed out", after_turn=2),
            ImportedToolCall("t3", "find", {"q": "y"}, after_turn=None),
        ],
        started_at=datetime(2026, 11, 2, 9, 30, tzinfo=UTC),
        duration=30.0,
        language="de",
        ended_reason="customer-ended-call",
        metadata={"cost": 0.12},
    )
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_turns_keep_their_times_and_heard_is_the_text() -> None:
    result = to_conversation(call())
    assert [(t.index, t.speaker.value, t.start, t.end) for t in result.turns] == [
        (0, "agent", 0.0, 2.0),
        (1, "caller", 2.5, 4.0),
        (2, "agent", 3.8, 4.5),
    ]
    assert all(t.heard == t.text for t in result.turns)
    assert result.turns[1].interrupted
    assert result.turns[2].barge_in
    assert (result.id, result.scenario_id, result.language) == ("c1", "c1", "de")


def test_tool_calls_get_a_lifecycle_from_what_the_record_says() -> None:
    first, second, third = to_conversation(call()).tool_calls
    assert first.status is CallStatus.COMPLETED
    assert [(h.status.value, h.time) for h in first.history] == [
        ("prepared", 5.0),
        ("sent", 5.0),
        ("completed", 5.4),
    ]
    assert second.status is CallStatus.FAILED
    assert second.error_message == "upstream timed out"
    assert second.error is not None
    assert second.error.value == "timeout"
    assert second.history[0].time == 4.5  # after turn 2
    assert (first.number, third.number) == (1, 2)


def test_the_end_time_is_the_duration_and_the_reason_is_mapped() -> None:
    result = to_conversation(call())
    assert result.end.reason is EndReason.CALLER_HANGUP
    assert result.end.time == 30.0
    assert result.end.message == "customer-ended-call"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("customer-ended-call", EndReason.CALLER_HANGUP),
        ("user_hangup", EndReason.CALLER_HANGUP),
        ("assistant-ended-call", EndReason.AGENT_HANGUP),
        ("agent_hangup", EndReason.AGENT_HANGUP),
        ("call_transfer", EndReason.TRANSFERRED),
        ("pipeline-error-openai-llm-failed", EndReason.ERROR),
        ("exceeded-max-turns", EndReason.TURN_LIMIT),
        ("something-new", EndReason.CALLER_HANGUP),
        (None, EndReason.CALLER_HANGUP),
    ],
)
def test_end_reasons(text: str | None, reason: EndReason) -> None:
    assert end_reason(text) is reason


def test_a_record_without_times_gets_a_synthetic_clock_and_says_so() -> None:
    turns = [ImportedTurn("caller", "one two three"), ImportedTurn("agent", "ok")]
    result = to_conversation(call(turns=turns, tool_calls=[], duration=None))
    starts = [t.start for t in result.turns]
    assert starts[0] == 0.0
    assert starts[1] > result.turns[0].end - 1e-9
    entry = import_entry(result)
    assert entry is not None
    assert entry["synthetic_clock"] is True
    assert result.end.time == result.turns[-1].end


def test_metadata_and_unmapped_fields_survive_the_json_round_trip() -> None:
    result = to_conversation(call())
    again = ConversationResult.model_validate_json(result.model_dump_json())
    entry = import_entry(again)
    assert entry is not None
    assert entry["source_format"] == "test"
    assert entry["metadata"] == {"cost": 0.12}
    assert entry["started_at"] == "2026-11-02T09:30:00+00:00"
    assert entry["ended_reason"] == "customer-ended-call"
    assert entry["turn_extra"] == {"2": {"confidence": 0.9}}
    assert entry["synthetic_clock"] is False


def pipeline(fmt: Format, value: object) -> ConversationResult | RecordError:
    """What the import does with one record once its format is known."""
    try:
        return convert_record(parse_record(fmt, value))
    except RecordError as exc:
        return exc


@settings(max_examples=150, deadline=None)
@given(json_values() | chat_messages() | st.text(max_size=100))
def test_any_record_in_any_format_is_stored_or_a_record_error(value: Any) -> None:
    for fmt in FORMATS:
        outcome = pipeline(fmt, value)
        if isinstance(outcome, ConversationResult):
            ConversationResult.model_validate_json(outcome.model_dump_json())
        else:
            assert isinstance(outcome, RecordError)
