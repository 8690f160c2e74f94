"""Retell call objects and webhooks: utterances, word times, tool results judged by content."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats import retell
from polygon_voice.imports.formats._vendor import MAX_ITEMS
from tests.imports.fixtures.vendor_checks import (
    VENDOR_VALUES,
    error_of,
    load,
    parse_or_error,
    with_value,
    without,
)


def test_minimal_call_object_uses_transcript_object_and_word_times() -> None:
    call = retell.parse(load("retell", "minimal"))
    assert call.call_id == "retell-min-1"
    assert call.ended_reason == "user_hangup"
    assert call.duration == pytest.approx(20.0)  # duration_ms
    assert call.started_at == datetime.fromtimestamp(1_700_000_000, tz=UTC)  # epoch ms
    assert [(t.speaker, t.text, t.start, t.end) for t in call.turns] == [
        ("agent", "Hi, how can I help?", 0.4, 1.9),
        ("caller", "Just checking, bye.", 2.1, 3.4),
    ]
    assert call.metadata["call_status"] == "ended"


def test_webhook_tool_calls_are_joined_and_content_judged() -> None:
    call = retell.parse(load("retell", "rich"))
    cancel, refund, email = call.tool_calls
    assert (cancel.call_id, cancel.tool, cancel.args) == (
        "tc_1",
        "cancel_order",
        {"order_id": "W12"},
    )
    assert cancel.result == {"status": "cancelled"}
    assert cancel.error is None
    assert (cancel.start, cancel.end) == (3.9, 4.3)  # time_sec, kept though the SDK omits it
    assert cancel.after_turn == 1
    # `successful: true` around an error in the content: the content wins, the flag is kept.
    assert refund.result == {"error": "payment provider unavailable"}
    assert refund.error == "payment provider unavailable"
    assert refund.extra["successful"] is True
    assert email.error == "timeout"
    assert email.extra["successful"] is False


def test_webhook_keeps_roles_events_and_unknown_fields() -> None:
    call = retell.parse(load("retell", "rich"))
    assert call.call_id == "retell-rich-1"
    assert [t.speaker for t in call.turns] == ["agent", "caller", "agent", "caller", "agent"]
    assert call.turns[-1].extra["role"] == "transfer_target"
    roles = [event["role"] for event in call.metadata["events"]]
    assert roles == ["node_transition", "dtmf"]
    assert call.metadata["events"][1]["after_turn"] == 3
    assert call.metadata["envelope"] == {"event": "call_analyzed"}
    assert call.metadata["new_field"] == [1, 2]
    assert call.metadata["call_analysis"]["call_successful"] is True
    assert "transcript_with_tool_calls" not in call.metadata


def test_overlapping_words_mark_a_barge_in() -> None:
    call = retell.parse(load("retell", "rich"))
    assert call.turns[2].interrupted  # the caller said "Thanks." at 6.6 s, the agent ran to 6.8 s
    assert not call.turns[0].interrupted


def test_empty_words_borrow_times_from_transcript_object() -> None:
    minimal = load("retell", "minimal")
    record = dict(
        minimal,
        transcript_with_tool_calls=[
            {"role": "agent", "content": "Hi, how can I help?", "words": []},
            {"role": "user", "content": "Something else.", "words": []},
        ],
    )
    call = retell.parse(record)
    assert (call.turns[0].start, call.turns[0].end) == (0.4, 1.9)
    assert (call.turns[1].start, call.turns[1].end) == (None, None)  # text differs: not borrowed


def test_call_without_transcript_has_no_turns() -> None:
    record = without(load("retell", "minimal"), ["transcript_object"])
    call = retell.parse(record)
    assert call.turns == []
    assert call.call_id == "retell-min-1"


TOOLS = ["call", "transcript_with_tool_calls"]
MALFORMED: list[tuple[str, list[str | int], Any, str]] = [
    ("minimal", ["call_id"], None, "call_id"),
    ("minimal", ["call_id"], {"a": 1}, "call_id"),
    ("minimal", ["start_timestamp"], "soon", "start_timestamp"),
    ("minimal", ["duration_ms"], "long", "duration_ms"),
    ("minimal", ["transcript_object"], "Agent: hi", "transcript_object"),
    ("minimal", ["transcript_object", 0, "role"], None, "transcript_object[0].role"),
    ("minimal", ["transcript_object", 0, "content"], 5, "transcript_object[0].content"),
    ("minimal", ["transcript_object", 0, "words", 0], "Hi", "transcript_object[0].words[0]"),
    (
        "minimal",
        ["transcript_object", 1, "words", 1, "end"],
        "x",
        "transcript_object[1].words[1].end",
    ),
    ("rich", ["call"], [], "call"),
    ("rich", [*TOOLS, 2, "arguments"], "{oops", "call.transcript_with_tool_calls[2].arguments"),
    ("rich", [*TOOLS, 2, "tool_call_id"], None, "call.transcript_with_tool_calls[2].tool_call_id"),
    ("rich", [*TOOLS, 3, "successful"], "yes", "call.transcript_with_tool_calls[3].successful"),
    ("rich", [*TOOLS, 3, "time_sec"], "later", "call.transcript_with_tool_calls[3].time_sec"),
]


@pytest.mark.parametrize(("fixture", "path", "value", "where"), MALFORMED)
def test_malformed_field_is_named(
    fixture: str, path: list[str | int], value: Any, where: str
) -> None:
    error = error_of(retell.parse, with_value(load("retell", fixture), path, value))
    assert error.where == where


def test_oversized_transcript_is_refused_with_the_reason() -> None:
    items = [{}] * (MAX_ITEMS + 1)
    error = error_of(retell.parse, {"call_id": "c", "transcript_with_tool_calls": items})
    assert error.where == "transcript_with_tool_calls"
    assert "limit" in error.message


@settings(max_examples=300, deadline=None)
@given(VENDOR_VALUES)
def test_fuzz_retell_like_json(record: object) -> None:
    parse_or_error(retell.parse, record)
    parse_or_error(retell.parse, {"call_id": "c", "transcript_with_tool_calls": [record]})
    parse_or_error(retell.parse, {"event": "call_ended", "call": record})


def test_a_v3_list_page_is_a_call_per_item() -> None:
    page = load("retell", "list_page")
    assert retell.FORMAT.detect(page)
    parts = retell.FORMAT.split(page)
    assert [label for label, _item in parts] == ["items[0]", "items[1]"]
    calls = [retell.parse(item) for _label, item in parts]
    assert [c.call_id for c in calls] == ["call_p1", "call_p2"]
    assert calls[1].tool_calls[0].result == {"ok": True}
    assert retell.FORMAT.split(load("retell", "minimal")) == [("", load("retell", "minimal"))]


def test_a_list_page_given_whole_to_the_parser_says_to_import_its_items() -> None:
    error = error_of(retell.parse, load("retell", "list_page"))
    assert error.where == "items"


def test_a_list_page_imports_each_call_and_names_a_bad_item(tmp_path: Any) -> None:
    import json

    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store, resolve_db_url

    page = load("retell", "list_page")
    page["items"].append({"call_id": 5, "call_status": "ended", "transcript_object": "x"})
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    store = Store(resolve_db_url(str(tmp_path / "p.db")))
    try:
        summary = import_calls(store, ImportOptions((str(path),)))
    finally:
        store.close()
    assert summary.imported == 2
    [failure] = summary.failed
    assert failure.source == f"{path} (items[2])"
    assert failure.where == "transcript_object"
