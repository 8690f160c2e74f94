"""ABCD chats: agent / customer turns, `action` lines as the agent's tool calls named from the
chat's own labels (or, without them, from the action's text), and the intent labels kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats.abcd import FORMAT, UNKNOWN_ACTION
from tests.imports.fixtures.research_checks import (
    any_or_near_records,
    assert_detected_alone,
    assert_every_damage_parses_or_names_an_error,
    detect_and_parse,
    formats_detecting,
    near_records,
)
from tests.imports.fixtures.vendor_checks import error_of, load, with_value


def labelled() -> Any:
    return load("abcd", "labelled")


def test_agent_and_customer_lines_are_the_turns() -> None:
    call = FORMAT.parse(labelled())
    assert call.call_id == "abcd-101"
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("agent", "Hello, how may I help?"),
        ("caller", "I forgot my username."),
        ("agent", "May I have your full name?"),
        ("caller", "Jo Lane"),
        ("agent", "Your username is jlane1."),
    ]


def test_action_lines_are_tool_calls_named_and_valued_by_the_labels() -> None:
    pulled, verified = FORMAT.parse(labelled()).tool_calls
    assert (pulled.tool, pulled.args, pulled.after_turn) == (
        "pull-up-account",
        {"values": ["jo lane"]},
        3,
    )
    # The label has values the text does not show: the label wins.
    assert (verified.tool, verified.args) == ("verify-identity", {"values": ["jo lane", "5551234"]})
    assert pulled.extra["text"] == "Account has been pulled up for Jo Lane."
    assert pulled.extra["delexed"]["targets"][1] == "take_action"
    assert pulled.call_id != verified.call_id


def test_without_labels_the_action_is_read_from_its_text() -> None:
    calls = FORMAT.parse(load("abcd", "unlabelled")).tool_calls
    assert [(c.tool, c.args["values"]) for c in calls] == [
        ("search-faq", []),
        ("search-timing", []),
        ("select-faq", ["timing_2"]),
        ("notify-team", ["website team"]),
        (UNKNOWN_ACTION, []),
    ]
    assert calls[-1].extra["text"] == "Something the tool never says."
    assert all(c.after_turn == 0 for c in calls)


def test_flow_subflow_and_the_scenario_are_kept_as_metadata() -> None:
    record = labelled()
    call = FORMAT.parse(record)
    assert call.metadata["flow"] == "account_access"
    assert call.metadata["subflow"] == "recover_username"
    assert call.metadata["scenario"] == record["scenario"]
    assert "delexed" not in call.metadata  # matched line by line: kept with each turn
    assert call.turns[1].extra["delexed"]["text"] == "i forgot my username."


def test_delexed_lines_that_do_not_match_the_original_are_kept_whole() -> None:
    record = labelled()
    record["delexed"] = record["delexed"][:3]
    call = FORMAT.parse(record)
    assert call.metadata["delexed"] == record["delexed"]
    assert call.tool_calls[1].tool == "verify-identity"  # read from its text instead
    assert call.tool_calls[1].args == {"values": []}


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["convo_id"], None, "convo_id"),
        (["convo_id"], 1.5, "convo_id"),
        (["original"], {"agent": "hi"}, "original"),
        (["original", 2], "agent: hi", "original[2]"),
        (["original", 2], ["agent"], "original[2]"),
        (["original", 2, 0], "system", "original[2][0]"),
        (["original", 2, 0], None, "original[2][0]"),
        (["original", 2, 1], {"t": 1}, "original[2][1]"),
    ],
)
def test_a_bad_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(FORMAT.parse, with_value(labelled(), path, value))
    assert error.where == where, error


def test_detection_takes_chats_and_nothing_else() -> None:
    assert_detected_alone("abcd")


def test_every_single_step_damage_parses_or_names_an_error() -> None:
    assert_every_damage_parses_or_names_an_error("abcd")


ABCD_KEYS = ["convo_id", "scenario", "flow", "subflow", "original", "delexed", "speaker"]
ABCD_KEYS += ["text", "targets", "turn_count", "candidates"]
ABCD_VALUES = ["agent", "customer", "action", "take_action", "pull-up-account"]
ABCD_VALUES += ["Account has been pulled up for x.", "System Action: search boots"]


@settings(max_examples=300, deadline=None)
@given(any_or_near_records(ABCD_KEYS, ABCD_VALUES))
def test_fuzz_any_json_gives_a_call_or_a_record_error(record: object) -> None:
    detect_and_parse(FORMAT, record)


@settings(max_examples=200, deadline=None)
@given(near_records(ABCD_KEYS, ABCD_VALUES), near_records(ABCD_KEYS, ABCD_VALUES))
def test_fuzz_a_chat_with_damaged_lines(original: object, delexed: object) -> None:
    detect_and_parse(FORMAT, {"convo_id": 1, "original": original, "delexed": delexed})


def test_the_corpus_file_as_published_is_a_call_per_chat_of_each_split() -> None:
    corpus = {"train": [labelled()], "dev": [], "test": [load("abcd", "unlabelled")]}
    assert FORMAT.detect(corpus)
    assert formats_detecting(corpus) == ["abcd"]
    parts = FORMAT.split(corpus)
    assert [label for label, _chat in parts] == ["train[0]", "test[0]"]
    assert [FORMAT.parse(chat).call_id for _label, chat in parts] == ["abcd-101", "abcd-x-7"]
    assert FORMAT.split(labelled()) == [("", labelled())]
    assert error_of(FORMAT.parse, corpus).message.startswith("the whole corpus")
    assert not FORMAT.detect({"train": "x"})
    assert not FORMAT.detect({"train": [], "extra": []})
