"""SGD dialogues: USER / SYSTEM turns, service calls as tool calls made before the SYSTEM turn
that carries them, NOTIFY_FAILURE as a failed call, and the dialogue acts kept."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.formats.sgd import FORMAT
from polygon_voice.imports.run import convert_record
from polygon_voice.model import CallStatus
from tests.imports.fixtures.research_checks import (
    any_or_near_records,
    assert_detected_alone,
    assert_every_damage_parses_or_names_an_error,
    detect_and_parse,
    near_records,
)
from tests.imports.fixtures.vendor_checks import error_of, load, with_value


def minimal() -> Any:
    return load("sgd", "minimal")


def test_user_is_the_caller_and_system_the_agent() -> None:
    call = FORMAT.parse(minimal())
    assert call.call_id == "sgd-9_00001"
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("caller", "Book me a table at Sol for two at 7 pm."),
        ("agent", "Your table at Sol is booked for 7 pm."),
        ("caller", "Thanks, that's all."),
        ("agent", "Enjoy your meal."),
    ]


def test_a_service_call_is_made_before_the_system_turn_that_tells_its_result() -> None:
    [tool] = FORMAT.parse(minimal()).tool_calls
    assert tool.tool == "ReserveRestaurant"
    assert tool.args == {"restaurant_name": "Sol", "party_size": "2", "time": "19:00"}
    assert tool.result == [
        {"restaurant_name": "Sol", "party_size": "2", "time": "19:00", "phone_number": "555-0100"}
    ]
    assert tool.after_turn == 0  # after the user's request, before "Your table ... is booked"
    assert tool.error is None
    assert tool.extra["service"] == "Restaurants_1"


def test_notify_failure_makes_the_call_a_failed_one() -> None:
    call = FORMAT.parse(load("sgd", "failure"))
    transfer, weather = call.tool_calls
    assert transfer.tool == "TransferMoney"
    assert transfer.error is not None
    assert "NOTIFY_FAILURE" in transfer.error
    assert weather.error is None
    assert weather.after_turn == 2
    stored = convert_record(call)
    assert [c.status for c in stored.tool_calls] == [CallStatus.FAILED, CallStatus.COMPLETED]


def test_acts_slots_and_states_stay_with_each_turn_and_the_services_with_the_call() -> None:
    record = load("sgd", "failure")
    call = FORMAT.parse(record)
    assert call.metadata == {
        "dialogue_id": "12_00044",
        "services": ["Banks_1", "Weather_1"],
        "_source_file": "dialogues_012.json",
    }
    frames = call.turns[3].extra["frames"]
    assert [f["service"] for f in frames] == ["Banks_1", "Weather_1"]
    assert frames[1]["actions"][0]["slot"] == "temperature"
    assert "service_call" not in frames[1]  # moved into the tool call, not kept twice
    first = call.turns[0].extra["frames"][0]
    assert first["actions"][0]["act"] == "INFORM_INTENT"


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["dialogue_id"], None, "dialogue_id"),
        (["dialogue_id"], {"a": 1}, "dialogue_id"),
        (["turns"], {"speaker": "USER"}, "turns"),
        (["turns", 0], "hello", "turns[0]"),
        (["turns", 0, "speaker"], "ASSISTANT", "turns[0].speaker"),
        (["turns", 0, "speaker"], None, "turns[0].speaker"),
        (["turns", 1, "utterance"], 7, "turns[1].utterance"),
        (["turns", 1, "frames"], "x", "turns[1].frames"),
        (["turns", 1, "frames", 0, "service_call"], "Reserve", "turns[1].frames[0].service_call"),
        (
            ["turns", 1, "frames", 0, "service_call", "method"],
            None,
            "turns[1].frames[0].service_call.method",
        ),
        (
            ["turns", 1, "frames", 0, "service_call", "parameters"],
            ["Sol"],
            "turns[1].frames[0].service_call.parameters",
        ),
        (["turns", 1, "frames", 0, "actions"], "NOTIFY", "turns[1].frames[0].actions"),
    ],
)
def test_a_bad_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(FORMAT.parse, with_value(minimal(), path, value))
    assert error.where == where, error


def test_detection_takes_dialogues_and_nothing_else() -> None:
    assert_detected_alone("sgd")


def test_every_single_step_damage_parses_or_names_an_error() -> None:
    assert_every_damage_parses_or_names_an_error("sgd")


SGD_KEYS = ["dialogue_id", "services", "turns", "speaker", "utterance", "frames", "service"]
SGD_KEYS += ["actions", "act", "slots", "state", "service_call", "method", "parameters"]
SGD_KEYS += ["service_results"]
SGD_VALUES = ["USER", "SYSTEM", "NOTIFY_FAILURE", "ReserveHotel", "1_0001"]


@settings(max_examples=300, deadline=None)
@given(any_or_near_records(SGD_KEYS, SGD_VALUES))
def test_fuzz_any_json_gives_a_call_or_a_record_error(record: object) -> None:
    detect_and_parse(FORMAT, record)


@settings(max_examples=200, deadline=None)
@given(near_records(SGD_KEYS, SGD_VALUES))
def test_fuzz_a_dialogue_with_damaged_turns(turns: object) -> None:
    detect_and_parse(FORMAT, {"dialogue_id": "d", "turns": turns})
