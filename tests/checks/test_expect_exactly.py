"""`expect.tools.exactly` and `exactly_among`: the completed calls to the watched tools are
exactly the listed ones, as a multiset in any order, each with equal arguments."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from polygon_voice.checks.expect import args_equal, check_expectations
from polygon_voice.model import CallStatus, Expect, ExpectCheck, Scenario, ToolCall
from tests.judge.calls import call, conversation, turns


def to(tool: str, call_id: str, args: dict[str, Any], **kw: Any) -> ToolCall:
    made = call(call_id, args, at=1.0 + len(call_id), **kw)
    made.tool = tool
    return made


def exactly(
    calls: list[ToolCall], wanted: list[dict[str, Any]], among: list[str] | None = None
) -> ExpectCheck:
    tools: dict[str, Any] = {"exactly": wanted}
    if among is not None:
        tools["exactly_among"] = among
    sc = Scenario(id="s-1", expect=Expect.model_validate({"tools": tools}))
    result = check_expectations(conversation(turns(("agent", "Done")), calls=calls), sc, {})
    assert result is not None
    [check] = [c for c in result.checks if c.name == "exactly"]
    return check


BOOK = {"tool": "book", "args": {"flight": "HAT001", "cabin": "economy"}}
CANCEL = {"tool": "cancel", "args": {"reservation_id": "ABC123"}}


def test_the_same_calls_in_another_order_hold() -> None:
    calls = [
        to("cancel", "c1", {"reservation_id": "ABC123"}),
        to("book", "c2", {"cabin": "economy", "flight": "HAT001"}),
    ]
    check = exactly(calls, [BOOK, CANCEL])
    assert check.passed, check.why


def test_a_missing_call_fails_and_is_named() -> None:
    check = exactly([to("book", "c1", BOOK["args"])], [BOOK, CANCEL])
    assert not check.passed
    assert check.why == "missing cancel(reservation_id=ABC123)"


def test_an_extra_completed_call_to_a_watched_tool_fails() -> None:
    calls = [to("book", "c1", BOOK["args"]), to("cancel", "c2", {"reservation_id": "XYZ"})]
    check = exactly(calls, [BOOK], among=["book", "cancel"])
    assert not check.passed
    assert check.why == "extra cancel(reservation_id=XYZ)"


def test_a_second_identical_call_is_extra_as_a_multiset() -> None:
    calls = [to("book", "c1", BOOK["args"]), to("book", "c2", BOOK["args"])]
    check = exactly(calls, [BOOK])
    assert not check.passed
    assert check.why.startswith("extra book(")


@pytest.mark.parametrize(
    "status", [CallStatus.FAILED, CallStatus.CANCELLED, CallStatus.TIMED_OUT, CallStatus.PREPARED]
)
def test_a_call_that_did_not_complete_does_not_count(status: CallStatus) -> None:
    calls = [
        to("book", "c1", BOOK["args"]),
        to("cancel", "c2", {"reservation_id": "X"}, status=status),
    ]
    assert exactly(calls, [BOOK], among=["cancel"]).passed
    # ... nor does it stand in for a wanted call.
    assert not exactly([to("cancel", "c2", CANCEL["args"], status=status)], [CANCEL]).passed


def test_a_tool_not_watched_is_ignored() -> None:
    calls = [to("book", "c1", BOOK["args"]), to("get_user", "c2", {"user_id": "u1"})]
    assert exactly(calls, [BOOK], among=["cancel"]).passed


def test_one_nested_value_differing_fails() -> None:
    wanted = {"tool": "book", "args": {"passengers": [{"name": "Ann", "dob": "1990-01-01"}]}}
    right = to("book", "c1", {"passengers": [{"name": "Ann", "dob": "1990-01-01"}]})
    wrong = to("book", "c1", {"passengers": [{"name": "Ann", "dob": "1990-01-02"}]})
    assert exactly([right], [wanted]).passed
    check = exactly([wrong], [wanted])
    assert not check.passed
    assert "missing book(" in check.why
    assert "extra book(" in check.why


def test_an_argument_more_or_less_is_not_equal() -> None:
    assert not exactly([to("book", "c1", {**BOOK["args"], "seat": "1A"})], [BOOK]).passed
    assert not exactly([to("book", "c1", {"flight": "HAT001"})], [BOOK]).passed


def test_numbers_and_their_text_are_equal() -> None:
    assert exactly(
        [to("cancel", "c1", {"reservation_id": 5590})],
        [{"tool": "cancel", "args": {"reservation_id": "5590"}}],
    ).passed
    assert args_equal({"n": 5}, {"n": 5.0})
    assert args_equal([1, "2"], ["1", 2])
    assert not args_equal([1, 2], [2, 1])  # lists keep their order
    assert not args_equal({"flag": True}, {"flag": "True"})
    assert not args_equal({"x": None}, {"x": "None"})
    assert not args_equal({"x": [1]}, {"x": "[1]"})


def test_an_empty_exactly_means_no_completed_call_to_the_watched_tools() -> None:
    assert exactly([to("get_user", "c1", {})], [], among=["book", "cancel"]).passed
    check = exactly([to("cancel", "c1", CANCEL["args"])], [], among=["book", "cancel"])
    assert not check.passed
    assert "extra cancel" in check.why


def test_the_reason_stays_short_for_long_arguments() -> None:
    huge = {"note": "x" * 5000, "items": list(range(500))}
    calls = [to("book", f"c{i}", {**huge, "i": i}) for i in range(30)]
    check = exactly(calls, [BOOK])
    assert not check.passed
    assert len(check.why) <= 600
    assert "more" in check.why


def test_an_empty_exactly_alone_is_refused_and_among_alone_means_none_of_them() -> None:
    with pytest.raises(ValidationError, match="watches no tool"):
        Expect.model_validate({"tools": {"exactly": []}})
    among = Expect.model_validate({"tools": {"exactly_among": ["book"]}})
    assert among.states_anything()
    # Dumped without defaults (the empty `exactly`), it reads back as the same expectation.
    again = Expect.model_validate(among.model_dump(exclude_defaults=True))
    assert again == among
    assert not exactly([to("book", "c1", BOOK["args"])], [], among=["book"]).passed
