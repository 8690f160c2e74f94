"""OpenAI chat messages: turns, tool calls joined to their results, system prompts kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports import ImportedCall, RecordError
from polygon_voice.imports.formats.openai import FORMAT
from tests.imports.strategies import chat_messages, json_values

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a booking agent."},
    {"role": "user", "content": "Move me to Friday."},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "reschedule", "arguments": '{"day":"fri"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"ok":true}'},
    {"role": "assistant", "content": "Done, you're on Friday."},
]


def test_a_list_of_messages_is_one_call_with_its_tool_call_joined() -> None:
    assert FORMAT.detect(MESSAGES)
    call = FORMAT.parse(MESSAGES)
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("caller", "Move me to Friday."),
        ("agent", "Done, you're on Friday."),
    ]
    [tool] = call.tool_calls
    assert (tool.call_id, tool.tool, tool.args, tool.result) == (
        "call_1",
        "reschedule",
        {"day": "fri"},
        {"ok": True},
    )
    assert tool.after_turn == 0
    assert call.metadata == {"system": ["You are a booking agent."]}
    assert call.call_id.startswith("openai-")


def test_the_same_messages_get_the_same_id_and_an_object_keeps_its_own() -> None:
    assert FORMAT.parse(MESSAGES).call_id == FORMAT.parse(list(MESSAGES)).call_id
    record = {"id": "conv-9", "messages": MESSAGES, "channel": "phone"}
    assert FORMAT.detect(record)
    call = FORMAT.parse(record)
    assert call.call_id == "conv-9"
    assert call.metadata["channel"] == "phone"


def test_content_parts_are_joined() -> None:
    parts = [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]
    call = FORMAT.parse([{"role": "user", "content": parts}])
    assert call.turns[0].text == "Hello"


@pytest.mark.parametrize(
    ("messages", "where", "message"),
    [
        ([{"role": "bot", "content": "x"}], "[0].role", "expected one of"),
        ([{"role": "tool", "tool_call_id": "nope", "content": "x"}], "[0].tool_call_id", "nope"),
        (
            [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f",
              "arguments": "{not json"}}]}],
            "[0].tool_calls[0].function.arguments",
            "expected JSON arguments",
        ),
        ([{"role": "user", "content": 5}], "[0].content", "expected text"),
        (["hello"], "[0]", "expected a message"),
    ],
)  # fmt: skip
def test_bad_messages_name_the_field(messages: list[Any], where: str, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        FORMAT.parse(messages)
    assert caught.value.where == where
    assert message in caught.value.message


def test_detection_wants_chat_roles() -> None:
    assert not FORMAT.detect([{"role": "bot", "message": "hi"}])
    assert not FORMAT.detect({"messages": "no"})
    assert not FORMAT.detect("text")
    assert not FORMAT.detect([])


def parse_or_error(value: Any) -> ImportedCall | RecordError:
    try:
        return FORMAT.parse(value)
    except RecordError as exc:
        return exc


@settings(max_examples=300, deadline=None)
@given(json_values() | chat_messages())
def test_any_json_value_gives_a_call_or_a_record_error(value: Any) -> None:
    FORMAT.detect(value)  # never raises
    outcome = parse_or_error(value)
    if isinstance(outcome, RecordError):
        assert str(outcome)
    else:
        assert isinstance(outcome, ImportedCall)
        json.dumps([t.text for t in outcome.turns])
