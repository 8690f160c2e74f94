"""Taskmaster dialogues: user / assistant turns (any case), Taskmaster-4's API annotations and
Taskmaster-3's `apis` as tool calls joined to their answers, lenient about the corpus's bad
request text, and the labels kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats.taskmaster import FORMAT
from tests.imports.fixtures.research_checks import (
    any_or_near_records,
    assert_detected_alone,
    assert_every_damage_parses_or_names_an_error,
    detect_and_parse,
    formats_detecting,
    near_records,
)
from tests.imports.fixtures.vendor_checks import error_of, load, with_value


def tm4() -> Any:
    return load("taskmaster", "tm4")


def test_user_is_the_caller_and_assistant_the_agent() -> None:
    call = FORMAT.parse(tm4())
    assert call.call_id == "dlg-0000-coffee-1"
    assert [t.speaker for t in call.turns] == ["agent", "caller", "agent", "caller", "agent"]
    assert call.turns[1].text == "A latte with oat milk, please."
    upper = FORMAT.parse(load("taskmaster", "tm1"))
    assert [t.speaker for t in upper.turns] == ["caller", "agent", "caller", "agent"]


def test_api_annotations_are_calls_joined_to_their_answers_after_their_turn() -> None:
    calls = FORMAT.parse(tm4()).tool_calls
    assert [(c.tool, c.after_turn) for c in calls] == [
        ("get_menu_items", 1),
        ("add_order_item", 1),
        ("finish_order", 3),
    ]
    menu = calls[0]
    assert menu.args == {"query": "Latte"}
    assert menu.result == {"menu_items": [{"menu_item_id": "latte-1", "name": "Latte"}]}
    assert len({c.call_id for c in calls}) == 3


def test_a_request_that_is_not_json_keeps_its_text_and_the_dialogue_imports() -> None:
    added = FORMAT.parse(tm4()).tool_calls[1]
    assert added.args == {}
    assert added.extra["request"] == '{"menu_item_id": ""latte-1"", "quantity": "1"}'
    assert added.result == {"order_id": "901"}


def test_an_answer_saying_success_false_is_a_failed_call() -> None:
    calls = FORMAT.parse(tm4()).tool_calls
    assert calls[2].error is not None
    assert "store closed" in calls[2].error
    assert calls[0].error is None


def test_taskmaster_3_apis_are_tool_calls_too() -> None:
    call = FORMAT.parse(load("taskmaster", "tm3"))
    [booking] = call.tool_calls
    assert booking.tool == "book_tickets"
    assert booking.args["num.tickets"] == "2"
    assert booking.result == {"status": "success"}
    assert booking.after_turn == 1
    assert booking.extra == {"index": 1}


def test_labels_segments_and_other_annotations_are_kept() -> None:
    call = FORMAT.parse(tm4())
    assert call.metadata == {
        "vertical": "Coffee",
        "scenario": "Order one drink",
        "instructions": "Order a small latte with oat milk.",
    }
    assert call.turns[1].extra["annotations"] == [
        {"name": "sentiment", "value": "polite", "context": "mood"}
    ]
    assert call.turns[1].extra["index"] == 1
    tm1 = FORMAT.parse(load("taskmaster", "tm1"))
    assert tm1.metadata == {"instruction_id": "restaurant-table-9"}
    assert tm1.turns[2].extra["segments"][0]["text"] == "Luigi's"


ANNOTATIONS = ["utterances", 1, "annotations"]


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["conversation_id"], None, "conversation_id"),
        (["utterances"], "hi", "utterances"),
        (["utterances", 0], ["assistant", "hi"], "utterances[0]"),
        (["utterances", 0, "speaker"], "agent", "utterances[0].speaker"),
        (["utterances", 0, "speaker"], 1, "utterances[0].speaker"),
        (["utterances", 0, "text"], ["hi"], "utterances[0].text"),
        (ANNOTATIONS, "api_call", "utterances[1].annotations"),
        ([*ANNOTATIONS, 0, "context"], "call0", "utterances[1].annotations[0].context"),
        ([*ANNOTATIONS, 0, "context"], None, "utterances[1].annotations[0].context"),
        ([*ANNOTATIONS, 0, "value"], 5, "utterances[1].annotations[0].value"),
    ],
)
def test_a_bad_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(FORMAT.parse, with_value(tm4(), path, value))
    assert error.where == where, error


def test_a_response_with_no_call_name_is_an_error_naming_the_annotations() -> None:
    record = tm4()
    record["utterances"][1]["annotations"] = [
        {"name": "response", "value": "{}", "context": "api_response_4"}
    ]
    error = error_of(FORMAT.parse, record)
    assert error.where == "utterances[1].annotations"
    assert "api_call name" in error.message


def test_detection_takes_dialogues_but_not_the_rating_files() -> None:
    assert_detected_alone("taskmaster")
    rating = {
        "conversation_id": "dlg-r1",
        "context": '[{"role": "user", "text": "a latte"}]',
        "generation": "Sure, a latte.",
        "reward": 1,
    }
    assert formats_detecting(rating) == []


def test_every_single_step_damage_parses_or_names_an_error() -> None:
    assert_every_damage_parses_or_names_an_error("taskmaster")


TM_KEYS = ["conversation_id", "utterances", "index", "speaker", "text", "segments"]
TM_KEYS += ["annotations", "name", "value", "context", "apis", "args", "response"]
TM_VALUES = ["user", "ASSISTANT", "api_call", "request", "api_response", "response"]
TM_VALUES += ["api_call_0", "api_response_0", '{"a": 1}', '{"success": false}']


@settings(max_examples=300, deadline=None)
@given(any_or_near_records(TM_KEYS, TM_VALUES))
def test_fuzz_any_json_gives_a_call_or_a_record_error(record: object) -> None:
    detect_and_parse(FORMAT, record)


@settings(max_examples=200, deadline=None)
@given(near_records(TM_KEYS, TM_VALUES))
def test_fuzz_a_dialogue_with_damaged_utterances(utterances: object) -> None:
    detect_and_parse(FORMAT, {"conversation_id": "dlg-x", "utterances": utterances})
