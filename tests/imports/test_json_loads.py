"""The import's JSON reader (imports/base.py `loads`): pydantic's parser first, `json.loads`
for whatever it refuses. A record must read exactly as `json.loads` reads it, or fail with
`json.loads`'s own error."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn, loads
from polygon_voice.imports.convert import to_conversation
from polygon_voice.model import CallStatus, EndReason, Speaker
from polygon_voice.model.events import ToolErrorKind

# Pieces of JSON and of near-JSON: escapes (a lone surrogate among them), literals json takes
# and the standard does not (NaN, Infinity), control characters, trailing commas.
PIECES = [
    *'{}[]:,"\\ntrufalse0123456789.eE+- \t\r/bu',
    "\\u00e9", "\\ud800", "\\udc00", "é", "\x00", "\x1f", "\u2028",
    "true", "null", "NaN", "Infinity", '"a"', "1e5", "-0", "1e400", "\ufeff",
]  # fmt: skip


def outcome(read: Any, text: str) -> tuple[str, str]:
    """What reading `text` gives: its value's repr (NaN equals NaN that way), or the error."""
    try:
        return "value", repr(read(text))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14).map("".join))
def test_near_json_reads_as_json_loads_reads_it(text: str) -> None:
    assert outcome(loads, text) == outcome(json.loads, text)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(st.characters(codec="utf-8")),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_any_json_document_reads_as_json_loads_reads_it(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=bool(len(repr(value)) % 2))
    assert outcome(loads, text) == outcome(json.loads, text)


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # a lone surrogate: json keeps it, pydantic's parser refuses it
        "[" * 500 + "]" * 500,  # deeper than pydantic's parser goes, within json's reach
        "1" * 5000,  # more digits than Python converts: json's own error
        '{"a": 1, "a": 2}',  # the last of a repeated key, in the first one's place
        "[NaN, Infinity, -Infinity, 1e400, -0.0, 5e-324]",
        '{"a": "x\ny"}',  # a raw control character: refused by both
        '{"a": 1} {"b": 2}',
        "",
    ],
)
def test_the_cases_the_two_parsers_differ_on_read_as_json_loads(text: str) -> None:
    assert outcome(loads, text) == outcome(json.loads, text)


def test_the_stored_call_holds_the_models_enums_after_plain_values_were_validated() -> None:
    # convert.py hands pydantic the enums' values; the record must hold the enums themselves.
    call = ImportedCall(
        call_id="c1",
        source_format="vapi",
        turns=[
            ImportedTurn(speaker="agent", text="Hello.", start=0.0, end=1.0),
            ImportedTurn(speaker="caller", text="Hi.", start=1.2, end=2.0),
        ],
        tool_calls=[
            ImportedToolCall(call_id="t1", tool="get_order", args={}, error="request timed out"),
            ImportedToolCall(call_id="t2", tool="get_order", args={}, result={"ok": True}),
        ],
        ended_reason="assistant-ended-call",
    )
    result = to_conversation(call)
    assert [t.speaker for t in result.turns] == [Speaker.AGENT, Speaker.CALLER]
    assert all(isinstance(t.speaker, Speaker) for t in result.turns)
    failed, completed = result.tool_calls
    assert failed.status is CallStatus.FAILED
    assert failed.error is ToolErrorKind.TIMEOUT
    assert completed.status is CallStatus.COMPLETED
    assert completed.error is None
    assert [h.status for h in failed.history] == [
        CallStatus.PREPARED,
        CallStatus.SENT,
        CallStatus.FAILED,
    ]
    assert result.end.reason is EndReason.AGENT_HANGUP
