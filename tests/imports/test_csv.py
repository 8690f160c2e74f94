"""CSV turns and plain `Speaker: text` lines: speakers mapped, times read, calls grouped."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.imports import ImportedCall, RecordError
from polygon_voice.imports.formats.csv_lines import (
    CSV_FORMAT,
    LINES_FORMAT,
    CsvFormat,
    LinesFormat,
)
from tests.imports.strategies import json_values

CSV = "speaker,text,start,end,channel\nagent,Hello,0,1.5,pstn\ncustomer,Hi there,1.8,2.4,\n"


def test_a_csv_file_is_one_call_with_times_and_extra_columns_kept() -> None:
    assert CSV_FORMAT.detect(CSV)
    call = CSV_FORMAT.parse(CSV)
    assert [(t.speaker, t.text, t.start, t.end) for t in call.turns] == [
        ("agent", "Hello", 0.0, 1.5),
        ("caller", "Hi there", 1.8, 2.4),
    ]
    assert call.turns[0].extra == {"channel": "pstn"}
    assert call.call_id.startswith("csv-")


def test_role_and_content_columns_and_a_byte_order_mark_are_understood() -> None:
    call = CSV_FORMAT.parse("\ufeffRole,Content\nassistant,Hi\nuser,Yes\n")
    assert [t.speaker for t in call.turns] == ["agent", "caller"]


def test_rows_are_grouped_by_call_id_and_keep_their_line_numbers() -> None:
    text = "call_id,speaker,text\na,agent,Hi\nb,agent,Yo\na,caller,Hey\nb,bob,What\n"
    parts = CSV_FORMAT.split(text)
    assert [label for label, _ in parts] == ["call_id a", "call_id b"]
    first = CSV_FORMAT.parse(parts[0][1])
    assert first.call_id == "a"
    assert [t.text for t in first.turns] == ["Hi", "Hey"]
    with pytest.raises(RecordError) as caught:
        CSV_FORMAT.parse(parts[1][1])
    assert caught.value.where == "line 5.speaker"
    assert "--agent-label" in caught.value.message


def test_an_agent_label_makes_every_other_speaker_the_caller() -> None:
    call = CSV_FORMAT.with_agent_label("Maya").parse("speaker,text\nMaya,Hi\nBob,Hello\n")
    assert [t.speaker for t in call.turns] == ["agent", "caller"]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("speaker,text,start\nagent,Hi,abc\n", "line 2.start", 'expected a number, got "abc"'),
        ("speaker,text,start\nagent,Hi,-1\n", "line 2.start", "not negative"),
        ("speaker,text\nagent,Hi,extra\n", "line 2", "more cells"),
        ("name,value\n", "line 1", "header"),
    ],
)
def test_bad_csv_names_the_line_and_column(text: str, where: str, message: str) -> None:
    with pytest.raises(RecordError) as caught:
        CSV_FORMAT.parse(text)
    assert caught.value.where == where
    assert message in caught.value.message


def test_lines_make_turns_and_a_line_without_a_name_continues_the_turn() -> None:
    text = "Agent: Hello, how can I help?\n\nCaller: I need a table\nfor two, at 8.\nAgent: Sure.\n"
    assert LINES_FORMAT.detect(text)
    call = LINES_FORMAT.parse(text)
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("agent", "Hello, how can I help?"),
        ("caller", "I need a table\nfor two, at 8."),
        ("agent", "Sure."),
    ]


def test_lines_with_an_agent_label() -> None:
    call = LINES_FORMAT.with_agent_label("Front desk").parse("Front desk: Hi\nJohn Smith: Hello")
    assert [t.speaker for t in call.turns] == ["agent", "caller"]


def test_lines_with_an_unknown_speaker_say_what_to_do() -> None:
    with pytest.raises(RecordError) as caught:
        LINES_FORMAT.parse("Agent: Hi\nReceptionist: Hello")
    assert caught.value.where == "line 2.speaker"
    assert "--agent-label" in caught.value.message
    with pytest.raises(RecordError):
        LINES_FORMAT.parse("just some text without a speaker")


def test_detection_is_for_text_only() -> None:
    assert not CSV_FORMAT.detect({"speaker": "agent"})
    assert not LINES_FORMAT.detect(["Agent: hi"])
    assert not LINES_FORMAT.detect("")


CELLS = st.sampled_from(["agent", "user", "x", "", "1.5", "-2", "a,b", '"q', "\n"])
CSVISH = st.lists(st.lists(CELLS, max_size=5), max_size=6).map(
    lambda rows: "speaker,text,start,end,call_id\n" + "\n".join(",".join(r) for r in rows)
)


def parse_all(fmt: CsvFormat | LinesFormat, value: Any) -> list[ImportedCall] | RecordError:
    try:
        parts = fmt.split(value) if isinstance(fmt, CsvFormat) else [("", value)]
        return [fmt.parse(part) for _label, part in parts]
    except RecordError as exc:
        return exc


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | CSVISH | json_values(5))
def test_any_input_gives_calls_or_a_record_error(value: Any) -> None:
    for fmt in (CSV_FORMAT, LINES_FORMAT):
        fmt.detect(value)  # never raises
        outcome = parse_all(fmt, value)
        if isinstance(outcome, RecordError):
            assert str(outcome)
        else:
            assert all(isinstance(call, ImportedCall) for call in outcome)
