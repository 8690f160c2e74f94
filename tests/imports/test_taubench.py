"""tau-bench trajectories: the chat read as the openai format reads it, tau-bench's failed
tools, reused tool call ids, the labels kept, and the gold actions turned into `expect:`."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports.convert import import_entry
from polygon_voice.imports.formats.taubench import FORMAT, WRITE_TOOLS, domain_of
from polygon_voice.imports.run import convert_record
from polygon_voice.model import CallStatus
from polygon_voice.model.expect import Expect, ToolsExpectation
from tests.imports.fixtures.research_checks import (
    any_or_near_records,
    assert_detected_alone,
    assert_every_damage_parses_or_names_an_error,
    detect_and_parse,
    near_records,
)
from tests.imports.fixtures.vendor_checks import error_of, fixture_names, load, with_value, without

AIRLINE_WRITES = sorted(WRITE_TOOLS["airline"])


def minimal() -> Any:
    return load("taubench", "minimal")


def test_the_trajectory_is_the_conversation_with_its_tool_calls_joined() -> None:
    call = FORMAT.parse(minimal())
    assert call.call_id == "tau-7-t1"
    assert call.source_format == "taubench"
    assert [(t.speaker, t.text) for t in call.turns] == [
        ("caller", "Hi, please cancel my booking QX7Y21."),
        ("agent", "I found QX7Y21. Shall I cancel it? Please answer yes."),
        ("caller", "Yes."),
        ("agent", "Done: QX7Y21 is cancelled."),
        ("caller", "###STOP###"),
    ]
    tools = [(c.tool, c.args["reservation_id"], c.after_turn) for c in call.tool_calls]
    assert tools == [
        ("get_reservation_details", "QX7Y21", 0),
        ("cancel_reservation", "QX7Y2l", 2),
        ("cancel_reservation", "QX7Y21", 2),
    ]
    assert call.tool_calls[0].result == {"reservation_id": "QX7Y21", "status": "active"}
    assert call.tool_calls[2].result == {"reservation_id": "QX7Y21", "status": "cancelled"}


def test_a_tool_answer_starting_with_error_is_a_failed_call() -> None:
    failed, done = FORMAT.parse(minimal()).tool_calls[1:]
    assert failed.error == "Error: reservation not found"
    assert done.error is None
    stored = convert_record(FORMAT.parse(minimal()))
    assert [c.status for c in stored.tool_calls] == [
        CallStatus.COMPLETED,
        CallStatus.FAILED,
        CallStatus.COMPLETED,
    ]


def test_a_reused_tool_call_id_names_the_latest_call_that_has_it() -> None:
    first, _failed, again = FORMAT.parse(minimal()).tool_calls
    assert first.call_id == "call_a"
    assert again.call_id == "call_a#2"
    assert again.extra["id_in_record"] == "call_a"
    assert "id_in_record" not in first.extra


def test_the_labels_and_the_policy_are_kept_as_metadata() -> None:
    record = minimal()
    call = FORMAT.parse(record)
    assert call.metadata["system"] == [record["traj"][0]["content"]]
    assert call.metadata["reward"] == 1.0
    assert call.metadata["task_id"] == 7
    assert call.metadata["trial"] == 1
    assert call.metadata["info"] == record["info"]


def test_the_gold_writes_become_exactly_over_the_domains_write_tools() -> None:
    expect = FORMAT.parse(minimal()).expect
    assert expect == {
        "tools": {
            "exactly": [{"tool": "cancel_reservation", "args": {"reservation_id": "QX7Y21"}}],
            "exactly_among": AIRLINE_WRITES,
        }
    }


def test_retail_writes_are_watched_and_outputs_must_be_said() -> None:
    call = FORMAT.parse(load("taubench", "retail"))
    assert call.call_id == "tau-r-12"  # no trial: no suffix
    assert call.tool_calls[0].args == {"email": "lee@example.com"}  # arguments as an object
    assert call.expect is not None
    tools = call.expect["tools"]
    assert [(a["tool"], a["args"]["order_id"]) for a in tools["exactly"]] == [
        ("modify_pending_order_address", "#W100"),
        ("modify_pending_order_address", "#W101"),
    ]
    assert tools["exactly_among"] == sorted(WRITE_TOOLS["retail"])
    assert call.expect["says"] == ["12"]


def test_the_domain_is_told_by_the_tools_only_one_domain_has() -> None:
    assert domain_of({"get_user_details", "search_direct_flight"}) == "airline"
    assert domain_of({"get_user_details", "get_order_details"}) == "retail"
    assert domain_of({"get_user_details", "calculate", "think"}) is None
    assert domain_of({"cancel_reservation", "cancel_pending_order"}) is None


def test_in_an_unknown_domain_only_the_gold_writes_are_watched() -> None:
    record = minimal()
    record["info"]["task"]["actions"] = [
        {"name": "get_policy", "kwargs": {}},
        {"name": "open_ticket", "kwargs": {"topic": "refund"}},
        {"name": "think", "kwargs": {"thought": "x"}},
    ]
    record["traj"] = record["traj"][:2]
    expect = FORMAT.parse(record).expect
    assert expect == {
        "tools": {
            "exactly": [{"tool": "open_ticket", "args": {"topic": "refund"}}],
            "exactly_among": ["open_ticket"],
        }
    }


def test_a_task_without_writes_expects_no_write_at_all() -> None:
    record = minimal()
    record["info"]["task"]["actions"] = [
        {"name": "get_reservation_details", "kwargs": {"reservation_id": "QX7Y21"}}
    ]
    expect = FORMAT.parse(record).expect
    assert expect == {"tools": {"exactly": [], "exactly_among": AIRLINE_WRITES}}


def test_a_record_without_a_task_has_no_expectation() -> None:
    assert FORMAT.parse(without(minimal(), ["info"])).expect is None
    assert FORMAT.parse(with_value(minimal(), ["info"], {"source": "user"})).expect is None


def test_the_expectation_is_kept_on_the_stored_call() -> None:
    call = FORMAT.parse(minimal())
    entry = import_entry(convert_record(call))
    assert entry is not None
    assert entry["expect"] == call.expect
    assert entry["source_format"] == "taubench"


@pytest.mark.skipif(
    "exactly" not in ToolsExpectation.model_fields, reason="expect.tools.exactly not in the model"
)
@pytest.mark.parametrize("name", fixture_names("taubench"))
def test_the_expectation_is_a_valid_expect_block(name: str) -> None:
    expect = FORMAT.parse(load("taubench", name)).expect
    assert expect is not None
    assert Expect.model_validate(expect).states_anything()


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["task_id"], None, "task_id"),
        (["task_id"], [1], "task_id"),
        (["trial"], "first", "trial"),
        (["traj"], {"role": "user"}, "traj"),
        (["traj", 1, "role"], "human", "traj[1].role"),
        (["traj", 3, "tool_call_id"], "nope", "traj[3].tool_call_id"),
        (["traj", 2, "tool_calls", 0, "function", "arguments"], "{", "traj[2].tool_calls[0]"),
        (["info"], "labels", "info"),
        (["info", "task"], [], "info.task"),
        (["info", "task", "actions"], {"name": "x"}, "info.task.actions"),
        (["info", "task", "actions", 1, "name"], None, "info.task.actions[1].name"),
        (["info", "task", "actions", 1, "name"], "", "info.task.actions[1].name"),
        (["info", "task", "actions", 1, "kwargs"], [1], "info.task.actions[1].kwargs"),
        (["info", "task", "outputs"], [{"a": 1}], "info.task.outputs[0]"),
        (["info", "task", "outputs"], [float("nan")], "info.task.outputs[0]"),
    ],
)
def test_a_bad_field_is_named(path: list[str | int], value: Any, where: str) -> None:
    error = error_of(FORMAT.parse, with_value(minimal(), path, value))
    assert error.where.startswith(where), error


def test_detection_takes_trajectories_and_nothing_else() -> None:
    # Among them: a results file, a list of trajectories, is a record per item, not one record.
    assert_detected_alone("taubench")
    assert not FORMAT.detect({"task_id": 1, "messages": []})  # the chat must be `traj`


def test_every_single_step_damage_parses_or_names_an_error() -> None:
    assert_every_damage_parses_or_names_an_error("taubench")


TAU_KEYS = ["task_id", "trial", "reward", "info", "task", "actions", "name", "kwargs", "outputs"]
TAU_KEYS += ["traj", "role", "content", "tool_calls", "tool_call_id", "id", "function"]
TAU_VALUES = ["user", "assistant", "tool", "system", "Error: no", "cancel_reservation", "{}"]


@settings(max_examples=300, deadline=None)
@given(any_or_near_records(TAU_KEYS, TAU_VALUES))
def test_fuzz_any_json_gives_a_call_or_a_record_error(record: object) -> None:
    detect_and_parse(FORMAT, record)


@settings(max_examples=200, deadline=None)
@given(near_records(TAU_KEYS, TAU_VALUES))
def test_fuzz_a_trajectory_with_a_damaged_chat(traj: object) -> None:
    record = copy.deepcopy(minimal())
    record["traj"] = traj
    detect_and_parse(FORMAT, record)
