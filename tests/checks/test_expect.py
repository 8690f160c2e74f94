"""The expectation check on hand-built records: each part of `expect:` holds or fails for the
reason it states, read from the write log and the trace only."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.checks.expect import check_expectations, final_records, same_value
from polygon_voice.model import (
    CallStatus,
    EndReason,
    Expect,
    Scenario,
    StatusChange,
    TraceEntry,
)
from tests.judge.calls import call, conversation, turns, write

INITIAL = {"orders": {"5590": {"quantity": 2}, "5599": {"quantity": 1}}}


def scenario(**expect: Any) -> Scenario:
    return Scenario(id="s-1", expect=Expect.model_validate(expect))


def checked(sc: Scenario, **parts: Any) -> Any:
    result = check_expectations(conversation(**parts), sc, INITIAL)
    assert result is not None
    return result


def test_a_scenario_that_states_nothing_is_not_checked() -> None:
    lines = turns(("agent", "Hello"))
    assert check_expectations(conversation(lines), Scenario(id="s-1"), INITIAL) is None
    assert check_expectations(conversation(lines), scenario(), INITIAL) is None


def test_doing_nothing_fails_the_backend_and_call_expectations() -> None:
    sc = scenario(
        outcome="success",
        backend={"orders": {"5590": {"quantity": 3}}},
        tools={"called": [{"tool": "update_order", "args": {"order_id": "5590"}}]},
    )
    result = checked(
        sc, lines=turns(("agent", "Hello"), ("caller", "Order 5590 to 3"), ("agent", "Thanks, bye"))
    )
    assert not result.met
    assert [c.name for c in result.failed()] == ["backend", "called"]
    assert "holds {'quantity': 2}" in result.failed()[0].why
    assert result.checks[0].name == "outcome"
    assert result.checks[0].passed


def test_the_change_landing_meets_the_expectation() -> None:
    sc = scenario(
        outcome="success",
        backend={"orders": {"5590": {"quantity": 3}, "5599": {"quantity": 1}}},
        tools={"called": [{"tool": "update_order", "args": {"order_id": 5590}}]},
    )
    lines = turns(("caller", "Order 5590 to 3"), ("agent", "Done"))
    result = checked(
        sc,
        lines=lines,
        calls=[call("c1", {"order_id": "5590", "quantity": 3}, at=1.0)],
        writes=[write("5590", "quantity", 3, at=1.5)],
    )
    assert result.met, result.failed()


def test_a_write_to_the_wrong_record_breaks_the_untouched_one() -> None:
    sc = scenario(backend={"orders": {"5599": {"quantity": 4}, "5590": {"quantity": 2}}})
    result = checked(
        sc,
        lines=turns(("agent", "Done")),
        calls=[call("c1", {"order_id": "5590", "quantity": 4}, at=1.0)],
        writes=[write("5590", "quantity", 4, at=1.5)],
    )
    assert [c.why for c in result.failed()] == [
        "orders/5599 holds {'quantity': 1}; wanted {'quantity': 4}",
        "orders/5590 holds {'quantity': 4}; wanted {'quantity': 2}",
    ]


def test_a_prepared_call_that_never_went_out_was_not_called() -> None:
    prepared = call("c1", {"order_id": "5590"}, at=1.0)
    prepared.history = [StatusChange(status=CallStatus.PREPARED, time=1.0)]
    prepared.status = CallStatus.PREPARED
    sc = scenario(tools={"called": [{"tool": "update_order"}]})
    result = checked(sc, lines=turns(("agent", "One moment")), calls=[prepared])
    assert not result.met
    assert result.failed()[0].why == "no sent call matches update_order"


def test_a_forbidden_call_fails_and_names_it() -> None:
    sc = scenario(tools={"not_called": [{"tool": "update_order", "args": {"order_id": "5590"}}]})
    result = checked(
        sc, lines=turns(("agent", "Done")), calls=[call("c9", {"order_id": "5590"}, at=1.0)]
    )
    assert result.failed()[0].why == "c9 sent {'order_id': '5590'}"
    other = checked(
        sc, lines=turns(("agent", "Done")), calls=[call("c9", {"order_id": "5599"}, at=1.0)]
    )
    assert other.met


@pytest.mark.parametrize(
    ("outcome", "end", "writes", "met"),
    [
        ("transfer", EndReason.TRANSFERRED, False, True),
        ("transfer", EndReason.AGENT_HANGUP, False, False),
        ("success", EndReason.TRANSFERRED, False, False),
        ("success", EndReason.ERROR, False, False),
        ("success", EndReason.LOOP_DETECTED, False, False),
        ("success", EndReason.TURN_LIMIT, False, False),
        ("success", EndReason.CALLER_HANGUP, False, True),
        ("refusal", EndReason.AGENT_HANGUP, True, False),
        ("refusal", EndReason.AGENT_HANGUP, False, True),
        ("callback", EndReason.CALLER_HANGUP, False, True),
    ],
)
def test_the_ending(outcome: str, end: EndReason, writes: bool, met: bool) -> None:
    landed = [write("5590", "quantity", 3, at=1.0)] if writes else []
    result = checked(
        scenario(outcome=outcome), lines=turns(("agent", "Bye")), end=end, writes=landed
    )
    assert result.met is met


def test_no_write_names_the_first_write() -> None:
    result = checked(
        scenario(no_write=True),
        lines=turns(("agent", "Bye")),
        writes=[write("5590", "quantity", 3, at=1.0, call_id="upd-1")],
    )
    assert result.failed()[0].why == "1 write(s); the first by upd-1: orders/5590.quantity"


def test_a_record_that_must_not_exist_and_any_created_record() -> None:
    sc = scenario(backend={"orders": {"7777": None, "*": {"quantity": 9}}})
    result = checked(
        sc, lines=turns(("agent", "Bye")), writes=[write("8888", "quantity", 9, at=1.0)]
    )
    assert result.met, result.failed()
    made = checked(sc, lines=turns(("agent", "Bye")), writes=[write("7777", "quantity", 1, at=1.0)])
    assert [c.why for c in made.failed()] == [
        "orders/7777 still exists: {'quantity': 1}",
        "no record of orders holds {'quantity': 9}",
    ]


def test_values_compare_as_text_but_booleans_and_null_only_with_themselves() -> None:
    assert same_value("5590", 5590)
    assert same_value(3, "3")
    assert not same_value(True, "True")
    assert not same_value(1, True)
    assert not same_value(None, "None")
    assert same_value(None, None)
    assert same_value(False, False)


def test_the_end_state_includes_writes_after_the_hang_up() -> None:
    result = conversation(turns(("agent", "Bye")), writes=[write("5590", "quantity", 7, at=99.0)])
    assert final_records(result, INITIAL, "orders")["5590"] == {"quantity": 7}
    assert INITIAL["orders"]["5590"] == {"quantity": 2}  # the initial records are not touched


def test_says_accepts_number_words_and_misses_what_was_not_said() -> None:
    sc = scenario(says=[3, "5590"])
    result = checked(sc, lines=turns(("agent", "Order 5590 now has three items.")))
    assert result.met, result.failed()
    missing = checked(sc, lines=turns(("agent", "Your order now has three items.")))
    assert [c.why for c in missing.failed()] == ["the agent never said '5590'"]


def unplayed(record: Any, **step: Any) -> Any:
    note = TraceEntry(
        seq=0, time=9.0, source="caller", kind="script_unplayed", data={"barge_ins": [step]}
    )
    record.trace.append(note)
    return record


def test_a_barge_in_waiting_for_a_call_that_never_came_is_not_exercised() -> None:
    # The agent sent one update; the script waited for the second (a retry it never needed).
    sc = scenario(backend={"orders": {"5590": {"quantity": 3}}})
    record = conversation(
        turns(("caller", "Order 5590 to 3"), ("agent", "Sorry, the system is down.")),
        calls=[call("c1", {"order_id": "5590", "quantity": 3}, at=1.0, status=CallStatus.FAILED)],
    )
    step = {"at": "during_tool_prep", "say": "No, 5599", "tool": "update_order", "on_call": 2}
    result = check_expectations(unplayed(record, **step), sc, INITIAL)
    assert result is not None
    assert result.not_exercised is not None
    assert "call 2 to update_order" in result.not_exercised
    assert not result.met


def test_an_agent_that_never_attempted_the_action_is_not_excused() -> None:
    sc = scenario(backend={"orders": {"5590": {"quantity": 3}}})
    record = conversation(turns(("caller", "Order 5590 to 3"), ("agent", "Thanks, bye.")))
    step = {"at": "during_tool_prep", "say": "No, 5599", "tool": "update_order"}
    result = check_expectations(unplayed(record, **step), sc, INITIAL)
    assert result is not None
    assert result.not_exercised is None
    assert not result.met


def test_a_phantom_claim_is_not_excused_by_a_script_that_did_not_play() -> None:
    # It sent one call, got a 500, and said it was done: its own failure, whatever the script.
    sc = scenario(backend={"orders": {"5590": {"quantity": 3}}})
    record = conversation(
        turns(("caller", "Order 5590 to 3"), ("agent", "All set, your order is updated.")),
        calls=[call("c1", {"order_id": "5590", "quantity": 3}, at=1.0, status=CallStatus.FAILED)],
    )
    step = {"at": "during_tool_prep", "say": "No, 5599", "tool": "update_order", "on_call": 2}
    result = check_expectations(unplayed(record, **step), sc, INITIAL)
    assert result is not None
    assert result.not_exercised is None
    assert not result.met


def test_a_second_write_by_a_retry_breaks_writes_at_most_one() -> None:
    sc = scenario(backend={"orders": {"5590": {"quantity": 10}}}, writes_at_most=1)
    once = [write("5590", "quantity", 10, at=3.0, call_id="c1")]
    assert checked(sc, lines=turns(("agent", "Done")), writes=once).met
    twice = [*once, write("5590", "quantity", 10, at=9.0, call_id="c1-retry")]
    result = checked(sc, lines=turns(("agent", "Done")), writes=twice)
    assert [c.why for c in result.failed()] == [
        "2 write operation(s) landed (by c1, c1-retry); at most 1 allowed"
    ]
