"""Held out: trace shapes the cause and claim rules were not tuned on.

These traces were written from the documented rules only (docs/three-layer.md), after the
rules were done, with other timings, orderings, languages, wordings and number styles than
the tuned shapes in `test_trace_shapes.py` and `test_confirmation_claims.py`. A failure here
is a rule to fix, not a test to adjust.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.model import CaseScore
from tests.checks.cases import make_case, score
from tests.checks.trace_builder import TraceBuilder

HELLO = "Good morning, order desk, what can I do for you?"


def opening(case_id: str, said: str, state: dict[str, Any], language: str = "en") -> TraceBuilder:
    builder = (
        TraceBuilder(case_id, language=language)
        .agent(HELLO, at=0.0, end=3.0)
        .caller(said, at=3.5, end=6.5)
    )
    for version, (name, value) in enumerate(state.items(), start=1):
        builder.state(name, value, version=version, at=6.6)
    return builder


def cause_name(scored: CaseScore) -> str | None:
    return scored.root_cause.cause if scored.root_cause else None


Q3 = make_case("h-q3", "tool_error", "update_order", {"order_id": "5590", "quantity": 3})


def test_german_confirmation_in_number_words_passes() -> None:
    builder = (
        opening("h-q3", "Bitte Bestellung 5590 auf 3 Stück ändern.",
                {"order_id": "5590", "quantity": 3}, language="de")
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h1",
              sent=6.8, completed=8.1)
        .write("orders", "5590", "quantity", 2, 3, call="u-1", at=8.1)
        .call("g-2", "lookup_order", {"order_id": "5590"}, sent=8.1, completed=8.4)
        .agent("Erledigt: Ihre Bestellung 5590 hat jetzt drei Stück.", at=8.4, end=11.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert scored.e2e, {k: v.why for k, v in scored.axes.items() if not v.passed}


def test_a_promise_of_a_text_message_within_hours_does_not_spoil_the_confirmation() -> None:
    builder = (
        opening("h-q3", "Three items on order fifty-five ninety, please.",
                {"quantity": 3, "order_id": "5590"})
        .agent("One moment.", at=6.6, end=7.2)
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h2",
              sent=7.2, completed=9.9)
        .write("orders", "5590", "quantity", 2, 3, call="u-1", at=9.9)
        .call("g-2", "lookup_order", {"order_id": "5590"}, sent=9.9, completed=10.4)
        .agent_chunks([("That's done, you now have 3 items on it.", 10.4),
                       ("You'll get a text within 2 hours; call 0800 123 456 with questions.",
                        12.0)], end=15.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert scored.e2e, {k: v.why for k, v in scored.axes.items() if not v.passed}


def test_a_bare_all_set_before_the_late_result_is_an_early_confirmation() -> None:
    builder = (
        opening("h-q3", "Change 5590 to 3 please.", {"order_id": "5590", "quantity": 3})
        .agent_chunks([("Sending that now.", 6.6), ("All set!", 7.4)], end=8.0)
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h3",
              sent=7.4, completed=12.0)
        .write("orders", "5590", "quantity", 2, 3, call="u-1", at=12.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert cause_name(scored) == "confirmed_before_result"
    assert scored.root_cause is not None
    assert scored.root_cause.evidence["write_at"] == 12.0


Q7 = make_case("h-q7", "correction", "update_order", {"order_id": "4821", "quantity": 7},
               field="quantity", initial_value=6, corrected_value=7)  # fmt: skip


def test_a_stale_quantity_confirmed_in_words_is_stale() -> None:
    builder = (
        opening("h-q7", "Order 4821, six pieces please.", {"order_id": "4821", "quantity": 6})
        .call("u-1", "update_order", {"order_id": "4821", "quantity": 6}, version=2,
              prepared=6.8, sent=9.0, completed=10.5)
        .barge_in("Make that seven.", at=6.8, end=9.0, point="during_tool_prep")
        .state("quantity", 7, version=3, at=9.0)
        .write("orders", "4821", "quantity", 5, 6, call="u-1", at=10.5)
        .agent("Done, seven pieces on order 4821.", at=10.5, end=13.0)
    )  # fmt: skip

    scored = score(builder.build(), Q7)

    assert cause_name(scored) == "stale_tool_args"
    assert not scored.passed("confirmation_matches_backend")


def test_cancelling_the_call_and_then_saying_it_is_changed_is_a_claim_without_write() -> None:
    builder = (
        opening("h-q3", "Could you make order 5590 three items?",
                {"quantity": 3, "order_id": "5590"})
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h5",
              sent=6.8, cancelled=7.5)
        .agent("I have changed it to three items for you.", at=7.5, end=10.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert cause_name(scored) == "success_claimed_without_write"
    assert scored.root_cause is not None
    assert scored.root_cause.evidence["calls"] == {"u-1": "cancelled"}


R25 = make_case("h-r25", "tool_error", "issue_refund", {"order_id": "5590", "amount": 25})


def test_a_refund_booked_on_an_order_nobody_named_is_the_wrong_record() -> None:
    builder = (
        opening("h-r25", "I'd like 25 euros back for order 5590.",
                {"order_id": "5590", "amount": 25})
        .call("r-1", "issue_refund", {"order_id": "5599", "amount": 25}, version=2, key="h6",
              sent=7.0, completed=9.0)
        .create("refunds", "1", {"order_id": "5599", "amount": 25}, call="r-1", at=9.0)
        .agent("Your refund of twenty-five euros is booked.", at=9.0, end=12.0)
    )  # fmt: skip

    scored = score(builder.build(), R25)

    assert cause_name(scored) == "wrong_field_or_record"


def test_giving_up_after_a_failed_lookup_without_acting_is_a_dropped_request() -> None:
    builder = (
        opening("h-q3", "Please set order 5590 to 3 items.", {"order_id": "5590", "quantity": 3})
        .call("g-1", "lookup_order", {"order_id": "5590"}, version=2, sent=6.8, failed=7.8)
        .agent("Sorry, I can't reach our system right now. Goodbye.", at=7.8, end=10.0)
        .end(10.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert cause_name(scored) == "request_dropped"


OFF = make_case("h-off", "correction", "update_order", {"order_id": "4281", "quantity": 6},
                should_execute=False, field="execute", initial_value=True,
                corrected_value=False)  # fmt: skip


def test_a_no_that_comes_after_the_write_landed_is_not_exercised() -> None:
    builder = (
        opening("h-off", "Send 6 items for order 4281.", {"order_id": "4281", "quantity": 6})
        .call("u-1", "update_order", {"order_id": "4281", "quantity": 6}, version=2, key="h8",
              sent=6.8, completed=8.0)
        .write("orders", "4281", "quantity", 3, 6, call="u-1", at=8.0)
        .agent("Right, sending it.", at=6.8, end=8.5)
        .barge_in("No, don't!", at=8.5, end=9.5, point="mid_speech")
        .state("execute", False, version=3, at=9.5)
        .agent("I'm sorry, it had already gone through.", at=9.5, end=12.0)
    )  # fmt: skip

    scored = score(builder.build(), OFF)

    assert scored.not_exercised is not None
    assert scored.root_cause is None


R60 = make_case("h-r60", "tool_error", "issue_refund", {"order_id": "4281", "amount": 60})


def test_a_request_delivered_twice_without_a_key_confirmed_in_words() -> None:
    refund = {"order_id": "4281", "amount": 60}
    builder = (
        opening("h-r60", "Refund sixty euros on 4281.", {"amount": 60, "order_id": "4281"})
        .call("r-1", "issue_refund", refund, version=2, sent=6.8, completed=9.0)
        .create("refunds", "1", refund, call="r-1", at=9.0)
        .create("refunds", "2", refund, call="r-1", at=9.4)
        .agent("Sixty euros are on their way back to you.", at=9.0, end=12.0)
    )  # fmt: skip

    scored = score(builder.build(), R60)

    assert cause_name(scored) == "missing_idempotency_key"


def test_a_russian_confirmation_after_the_read_back_passes() -> None:
    builder = (
        opening("h-q3", "Поменяйте, пожалуйста, заказ 5590 на три штуки.",
                {"order_id": "5590", "quantity": 3}, language="ru")
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h10",
              sent=6.8, completed=8.0)
        .write("orders", "5590", "quantity", 2, 3, call="u-1", at=8.0)
        .call("g-2", "lookup_order", {"order_id": "5590"}, sent=8.0, completed=8.3)
        .agent("Готово: в заказе 5590 теперь 3 штуки.", at=8.3, end=11.0)
    )  # fmt: skip

    scored = score(builder.build(), Q3)

    assert scored.e2e, {k: v.why for k, v in scored.axes.items() if not v.passed}


D19 = make_case("h-d19", "tool_error", "update_order",
                {"order_id": "7310", "delivery_date": "2026-12-19"})  # fmt: skip


def test_a_timeout_retried_with_its_key_and_confirmed_after_a_read_back_passes() -> None:
    args = {"order_id": "7310", "delivery_date": "2026-12-19"}
    builder = (
        opening("h-d19", "Can order 7310 come on the nineteenth of December?",
                {"order_id": "7310", "delivery_date": "2026-12-19"})
        .call("u-1", "update_order", args, version=2, key="h11", sent=6.8, timed_out=16.8)
        .write("orders", "7310", "delivery_date", "2026-12-07", "2026-12-19", call="u-1",
               at=15.0)
        .agent("Still working on it.", at=16.8, end=18.0)
        .call("u-2", "update_order", args, version=2, key="h11", sent=18.0, completed=18.5)
        .call("g-3", "lookup_order", {"order_id": "7310"}, sent=18.5, completed=18.8)
        .agent("All done: order 7310 arrives on December 19th.", at=18.8, end=21.0)
    )  # fmt: skip

    scored = score(builder.build(), D19)

    assert scored.e2e, {k: v.why for k, v in scored.axes.items() if not v.passed}


N3 = make_case("h-n3", "interruption", "update_order", {"order_id": "5590", "quantity": 3},
               noise=True)  # fmt: skip


def test_noise_ignored_and_a_confirmation_in_words_with_a_phone_number_passes() -> None:
    builder = (
        opening("h-n3", "Order 5590, three items instead of two.",
                {"order_id": "5590", "quantity": 3})
        .agent("So that's three items on order 5590.", at=6.6, end=9.0)
        .barge_in(None, at=7.5)
        .call("u-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2, key="h12",
              sent=9.0, completed=11.0)
        .write("orders", "5590", "quantity", 2, 3, call="u-1", at=11.0)
        .call("g-2", "lookup_order", {"order_id": "5590"}, sent=11.0, completed=11.2)
        .agent("Updated: three items. Questions? Ring 0800 555 010.", at=11.2, end=14.0)
    )  # fmt: skip

    scored = score(builder.build(), N3)

    assert scored.e2e, {k: v.why for k, v in scored.axes.items() if not v.passed}
