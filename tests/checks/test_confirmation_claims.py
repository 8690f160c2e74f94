"""What the agent's confirmation claims (AX-6): a value it ties to a field, said after the
action went out; not any number that happens to equal some stored value."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.checks.axes import find_claim
from polygon_voice.model import AxisVerdict, ConversationResult, Scenario
from tests.checks.cases import (
    GREETING,
    corr04_robust_trace,
    make_case,
    scenario,
    score,
    view,
)
from tests.checks.trace_builder import TraceBuilder

CORR04 = scenario("corr-04")
INT03 = scenario("int-03")
DATE_20 = make_case("own-date", "tool_error", "update_order",
                    {"order_id": "5590", "delivery_date": "2026-12-20"})  # fmt: skip


def ax6(result: ConversationResult, case: Scenario) -> AxisVerdict:
    return score(result, case).axes["confirmation_matches_backend"]


def test_a_number_no_cue_ties_to_a_field_is_no_claim() -> None:
    # Order 5599 held quantity 1 before: "1 hour" used to count as the quantity claimed.
    result = corr04_robust_trace().agent("You'll get an email within 1 hour.", at=23.0).build()

    verdict = ax6(result, CORR04)

    assert verdict.passed, verdict.why
    assert "{'quantity': '2'}" in verdict.why


@pytest.mark.parametrize(("words", "passed"), [("two items", True), ("three items", False)])
def test_numbers_in_words_are_claims(words: str, passed: bool) -> None:
    result = corr04_robust_trace().agent(f"To confirm: order 5599 now has {words}.",
                                         at=23.0).build()  # fmt: skip

    verdict = ax6(result, CORR04)

    assert verdict.passed is passed, verdict.why


def date_trace(confirmation: str) -> TraceBuilder:
    return (
        TraceBuilder("own-date")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please deliver order 5590 on December 20.", at=5.1, end=7.9)
        .state("delivery_date", "2026-12-20", version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .call("update_order-1", "update_order",
              {"order_id": "5590", "delivery_date": "2026-12-20"}, version=2, key="k",
              sent=8.0, completed=11.0)
        .write("orders", "5590", "delivery_date", "2026-12-03", "2026-12-20",
               call="update_order-1", at=11.0)
        .call("lookup_order-2", "lookup_order", {"order_id": "5590"}, sent=11.0, completed=11.3)
        .agent(confirmation, at=11.3, end=14.0)
    )  # fmt: skip


@pytest.mark.parametrize(
    ("confirmation", "passed"),
    [
        ("Done: order 5590 will now arrive on December 20, 2026.", True),
        ("Done: order 5590 will now arrive on the 20th of December.", True),
        ("Done: order 5590 will now arrive on 20.12.2026.", True),
        ("Done: order 5590 will now arrive on December 21, 2026.", False),
    ],
)
def test_dates_in_any_common_form_are_claims(confirmation: str, passed: bool) -> None:
    verdict = ax6(date_trace(confirmation).build(), DATE_20)

    assert verdict.passed is passed, verdict.why


def test_an_acknowledgement_is_not_the_confirmation() -> None:
    # "Understood, quantity 5." only says what was heard; the confirmation names no value, so
    # it claims the request itself, which the backend holds.
    worded = (
        TraceBuilder("int-03")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 5590 to 3 items.", at=5.1, end=7.9)
        .state("quantity", 3, version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              key="a", sent=11.0, cancelled=13.0)
        .barge_in("Wait, make it 5 items.", at=11.0, end=13.0, point="after_tool_fired")
        .state("quantity", 5, version=3, at=13.0)
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 5}, version=3,
              key="b", sent=13.0, completed=16.0)
        .agent("Understood, 3 became 5 items.", at=13.0, end=15.0)
        .write("orders", "5590", "quantity", 2, 5, call="update_order-2", at=16.0)
        .call("lookup_order-3", "lookup_order", {"order_id": "5590"}, sent=16.0, completed=16.3)
        .agent("All set, your order is updated.", at=16.3, end=18.0)
        .build()
    )  # fmt: skip

    found = find_claim(view(worded, INT03))
    verdict = ax6(worded, INT03)

    assert found is not None
    assert (found.text, found.named, found.claimed) == (
        "All set, your order is updated.", False, {"quantity": "5"},
    )  # fmt: skip
    assert verdict.passed, verdict.why


def test_a_question_is_no_claim() -> None:
    result = corr04_robust_trace().agent("Should order 5599 have 3 items instead?",
                                         at=23.0).build()  # fmt: skip

    assert ax6(result, CORR04).passed


def test_a_promise_or_a_failure_with_values_is_no_claim() -> None:
    promise = corr04_robust_trace().agent("I will set order 5599 to 3 items next week.",
                                          at=23.0).build()  # fmt: skip
    failure = corr04_robust_trace().agent("I could not set order 5599 to 3 items.",
                                          at=23.0).build()  # fmt: skip

    assert ax6(promise, CORR04).passed
    assert ax6(failure, CORR04).passed


def test_an_amount_of_change_is_not_the_new_value() -> None:
    # "one more item" on 5599 (quantity 1 before) says +1, not "quantity 1".
    result = corr04_robust_trace().agent("Done, one more item for order 5599.",
                                         at=23.0).build()  # fmt: skip

    claim = find_claim(view(result, CORR04))

    assert claim is not None
    assert claim.text == "Done, one more item for order 5599."
    assert claim.named is False  # no value tied: the bare "done" claims the request


def test_a_bare_done_is_checked_against_the_backend() -> None:
    # Nothing was written to 5599: "done" claims the request, which the backend does not hold.
    result = (
        TraceBuilder("corr-04")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 5590 to 2 items.", at=5.1, end=7.9)
        .call("update_order-1", "update_order", {"order_id": "5599", "quantity": 2}, sent=8.0,
              failed=11.0)
        .agent("All done!", at=11.0, end=12.0)
        .build()
    )  # fmt: skip

    verdict = ax6(result, CORR04)

    assert not verdict.passed
    assert "says it is done" in verdict.why
    assert "the backend held {'quantity': 1}" in verdict.why


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=1, max_size=4))
def test_any_words_after_the_send_give_a_verdict_and_never_an_error(said: list[str]) -> None:
    builder = corr04_robust_trace()
    for position, text in enumerate(said):
        builder.agent(text, at=23.0 + 3 * position)

    verdict = ax6(builder.build(), CORR04)

    assert verdict.why
    # Whatever was added, the robust agent's own confirmation was true: a pass can only turn
    # into a fail through a later claim of another value, never through an error.
    if verdict.passed:
        assert "as stored then and after" in verdict.why


def test_a_megabyte_sentence_is_still_read_to_its_confirmation() -> None:
    result = corr04_robust_trace().agent("x " * 500_000 + "Done, 2 items.", at=23.0).build()

    assert ax6(result, CORR04).passed
