"""Vapi end-of-call reports and call objects: roles, units, tool joins, kept fields, errors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.imports.formats import vapi
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
    without,
)


def test_minimal_report_gives_turns_in_seconds_from_start() -> None:
    call = vapi.parse(load("vapi", "minimal"))
    assert call.call_id == "vapi-min-1"
    assert call.source_format == "vapi"
    assert call.ended_reason == "customer-ended-call"
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("agent", "Hi, how can I help?"),
        ("caller", "When are you open?"),
    ]
    first = call.turns[0]
    assert first.start == pytest.approx(1.84)
    assert first.end == pytest.approx(1.84 + 0.78)  # duration is milliseconds
    assert call.metadata["analysis"]["summary"] == "Caller asked for opening hours."
    # No startedAt: the first message's epoch time less its offset.
    assert call.started_at == datetime.fromtimestamp(1741093885.838 - 1.84, tz=UTC)


def test_rich_report_joins_tool_calls_to_results_by_id() -> None:
    call = vapi.parse(load("vapi", "rich"))
    reschedule, sms = call.tool_calls
    assert (reschedule.call_id, reschedule.tool, reschedule.args) == (
        "call_9",
        "reschedule",
        {"day": "fri"},
    )
    assert reschedule.result == {"ok": True}
    assert (reschedule.start, reschedule.end) == (pytest.approx(7.4), pytest.approx(8.1))
    assert reschedule.after_turn == 1  # after the caller asked
    assert sms.args == {"text": "Moved"}  # arguments given as an object are accepted too
    # Vapi has no failure flag on a result: the failure text is kept for the judge to read.
    assert sms.result == "Error: SMS gateway timeout"
    assert sms.extra["result_message"]["metadata"] == {"error": True}


def test_rich_report_keeps_roles_times_and_unknown_fields() -> None:
    call = vapi.parse(load("vapi", "rich"))
    assert [t.speaker for t in call.turns] == ["agent", "caller", "agent", "caller"]
    assert call.turns[2].extra["role"] == "assistant"  # the older name, read as the agent
    assert call.turns[3].extra["futureField"] == "kept"
    assert call.started_at == datetime(2025, 3, 4, 13, 11, 22, tzinfo=UTC)
    assert call.duration == pytest.approx(48.0)
    assert call.metadata["someNewTopLevel"] == {"x": 1}
    assert call.metadata["artifact"]["recordingUrl"].endswith("rec.wav")
    assert call.metadata["system_messages"][0]["message"] == "You are a booking agent."


def test_speech_over_the_agent_marks_it_interrupted() -> None:
    call = vapi.parse(load("vapi", "rich"))
    done = call.turns[2]
    assert done.interrupted  # the caller started at 10.4 s, the agent spoke until 10.7 s
    assert done.extra["interrupted_by"] == "overlapping speech"
    assert not call.turns[1].interrupted


def test_bare_call_object() -> None:
    call = vapi.parse(load("vapi", "bare_call"))
    assert call.call_id == "vapi-call-2"
    assert call.ended_reason == "assistant-ended-call"
    assert call.duration == pytest.approx(18.0)
    assert [t.speaker for t in call.turns] == ["agent", "caller"]
    assert call.metadata["status"] == "ended"


def test_duration_falls_back_to_epoch_milliseconds() -> None:
    record = without(load("vapi", "minimal"), ["message", "artifact", "messages", 0, "duration"])
    call = vapi.parse(record)
    assert call.turns[0].end == pytest.approx(1.84 + 0.78)


def test_unknown_role_is_kept_not_fatal() -> None:
    record = with_value(
        load("vapi", "minimal"),
        ["message", "artifact", "messages", 1, "role"],
        "whisper",
    )
    call = vapi.parse(record)
    assert len(call.turns) == 1
    assert call.metadata["other_messages"][0]["message"]["role"] == "whisper"


MSG = ["message", "artifact", "messages"]
MALFORMED: list[tuple[list[str | int], Any, str]] = [
    (["message", "call"], None, "message.call"),
    (["message", "call", "id"], 7.5, "message.call.id"),
    (["message", "artifact"], "x", "message.artifact"),
    ([*MSG], {"a": 1}, "message.artifact.messages"),
    ([*MSG, 1], "hello", "message.artifact.messages[1]"),
    ([*MSG, 1, "role"], 3, "message.artifact.messages[1].role"),
    ([*MSG, 1, "message"], ["x"], "message.artifact.messages[1].message"),
    ([*MSG, 1, "secondsFromStart"], "abc", "message.artifact.messages[1].secondsFromStart"),
    ([*MSG, 0, "duration"], -5, "message.artifact.messages[0].duration"),
    (["message", "startedAt"], "yesterday", "message.startedAt"),
    (["message", "endedReason"], 12, "message.endedReason"),
]


@pytest.mark.parametrize(("path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(vapi.parse, with_value(load("vapi", "minimal"), path, value))
    assert error.where == where


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["toolCalls", 0, "function"], None, "message.artifact.messages[3].toolCalls[0].function"),
        (
            ["toolCalls", 0, "function", "arguments"],
            "{not json",
            "message.artifact.messages[3].toolCalls[0].function.arguments",
        ),
        (["toolCalls", 0, "id"], None, "message.artifact.messages[3].toolCalls[0].id"),
    ],
)
def test_malformed_tool_call_is_named(path: list[str | int], value: Any, where: str) -> None:
    record = with_value(load("vapi", "rich"), [*MSG, 3, *path], value)
    assert error_of(vapi.parse, record).where == where


def test_result_without_a_call_is_kept() -> None:
    record = with_value(load("vapi", "rich"), [*MSG, 4, "toolCallId"], "call_missing")
    call = vapi.parse(record)
    orphan = next(t for t in call.tool_calls if t.call_id == "call_missing")
    assert orphan.extra["orphan_result"] is True
    assert orphan.result == {"ok": True}


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(
        vapi.parse,
        {
            "message": {
                "type": "end-of-call-report",
                "call": {"id": "c"},
                "artifact": {"messages": items},
            }
        },
    )
    assert error.where == "message.artifact.messages"
    assert "limit" in error.message


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_vapi_like_json(record: object) -> None:
    parse_or_error(vapi.parse, record)
    parse_or_error(
        vapi.parse,
        {
            "message": {
                "type": "end-of-call-report",
                "call": {"id": "x"},
                "artifact": {"messages": [record]},
            }
        },
    )


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ('{"error": "backend timeout"}', "backend timeout"),
        ({"error": {"code": 503}}, '{"code": 503}'),
        ("Error: backend timeout", None),  # plain text: kept as the result, no failure read in
        ('{"ok": true, "error": null}', None),
    ],
)
def test_a_result_that_holds_an_error_is_a_failed_call(result: object, error: str | None) -> None:
    report = load("vapi", "rich")
    messages = report["message"]["artifact"]["messages"]
    reschedule = next(m for m in messages if m.get("toolCallId") == "call_9")
    reschedule["result"] = result
    call = vapi.parse(report)
    [tool_call] = [c for c in call.tool_calls if c.call_id == "call_9"]
    assert tool_call.error == error


_TIMES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-5, max_value=10**6),
    st.booleans(),
    st.none(),
    st.just("1.5"),
)


@settings(max_examples=400, deadline=None)
@given(
    start=_TIMES,
    duration=_TIMES,
    said=st.one_of(st.text(max_size=20), st.none(), st.integers()),
    role=st.sampled_from(["user", "bot", "assistant"]),
    more=st.dictionaries(st.sampled_from(["time", "endTime", "x"]), st.integers(), max_size=2),
)
def test_a_plain_turn_is_the_turn_the_checked_reading_makes(
    start: object, duration: object, said: object, role: str, more: dict[str, Any]
) -> None:
    # The fast reading of a turn gives the same turn as `_turn`, or leaves it to `_turn`
    # (which names what is wrong): never another turn, never a value `_turn` refuses.
    message: dict[str, Any] = {"role": role, "message": said, **more}
    message |= {"secondsFromStart": start, "duration": duration}
    plain = vapi._plain_turn(dict(message), role)
    if plain is None:
        return
    assert plain == vapi._turn(dict(message), "m[0]", role)
