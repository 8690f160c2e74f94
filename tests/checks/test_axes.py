"""The six axes (docs/three-layer.md), each on a passing and a failing hand-built trace."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.model import AxisVerdict, ConversationResult, FaultKind, Scenario
from tests.checks.cases import (
    RIGHT_4821,
    corr04_opening,
    corr04_robust_trace,
    corr04_stale_trace,
    corr07_trace,
    int01_trace,
    int03_cancelled_trace,
    make_case,
    scenario,
    score,
    te02_trace,
    te05_trace,
    te07_trace,
    te08_trace,
    view,
)
from tests.checks.trace_builder import TraceBuilder

CORR04 = scenario("corr-04")
CORR07 = scenario("corr-07")  # "change 4281 to 6 items" -> "no, don't" (should_execute: false)
INT03 = scenario("int-03")
TE02 = scenario("te-02")  # "change 4821 to 7 items"; the first lookup answers 4281's record
TE05 = scenario("te-05")


def axis(result: ConversationResult, case: Scenario, name: str) -> AxisVerdict:
    """One axis of a scored case."""
    return score(result, case).axes[name]


# --- AX-1 captured ---------------------------------------------------------------------------


class TestCaptured:
    def test_correction_reported_after_the_caller_said_it(self) -> None:
        verdict = axis(corr04_robust_trace().build(), CORR04, "captured")

        assert verdict.passed
        assert "order_id='5599'" in verdict.why
        assert "v3" in verdict.why
        assert "turn 3" in verdict.why

    def test_correction_never_reported(self) -> None:
        result = (
            corr04_opening()
            .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
            .agent("Okay.", at=13.0, end=14.0)
            .build()
        )

        verdict = axis(result, CORR04, "captured")

        assert not verdict.passed
        assert "'5599'" in verdict.why
        assert "turn 3" in verdict.why

    def test_a_value_reported_before_the_caller_brought_it_does_not_count(self) -> None:
        result = (
            corr04_opening()
            .state("order_id", "5599", version=3, at=9.0)  # a guess, before the caller said it
            .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
            .build()
        )

        verdict = axis(result, CORR04, "captured")

        assert not verdict.passed
        assert "no state update to '5599'" in verdict.why

    def test_the_caller_never_brought_the_new_information(self) -> None:
        result = corr04_opening().caller("Thanks, bye.", at=11.0, end=12.0).build()

        verdict = axis(result, CORR04, "captured")

        assert not verdict.passed
        assert "never brought the new information" in verdict.why

    def test_call_off_reported_as_execute_false(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07, "captured")

        assert verdict.passed
        assert "execute=False" in verdict.why

    def test_call_off_not_reported(self) -> None:
        verdict = axis(corr07_trace(called_off=False, sent=False).build(), CORR07, "captured")

        assert not verdict.passed
        assert "no state update to False" in verdict.why

    def test_noise_left_the_state_alone(self) -> None:
        verdict = axis(int01_trace(rollback=False).build(), scenario("int-01"), "captured")

        assert verdict.passed
        assert "changed nothing" in verdict.why

    def test_noise_taken_as_an_interruption(self) -> None:
        verdict = axis(int01_trace(rollback=True).build(), scenario("int-01"), "captured")

        assert not verdict.passed
        assert "9.00s" in verdict.why
        assert "quantity=2" in verdict.why

    def test_a_later_update_is_not_a_response_to_the_noise(self) -> None:
        # The caller speaks between the noise and the update: the update answers the caller.
        result = (
            int01_trace(rollback=False)
            .caller("And make it 3 items, yes.", at=9.5, end=10.5)
            .state("quantity", 3, version=3, at=10.5)
            .build()
        )

        assert axis(result, scenario("int-01"), "captured").passed

    def test_noise_in_a_case_of_our_own(self) -> None:
        case = make_case(
            "noise-own", "interruption", "update_order", {"order_id": "7310", "quantity": 1},
            noise=True,
        )  # fmt: skip
        result = (
            TraceBuilder("noise-own")
            .caller("Order 7310, 1 item please.", at=1.0, end=3.0)
            .state("order_id", "7310", version=1, at=3.0)
            .state("quantity", 1, version=2, at=3.0)
            .barge_in(None, at=4.0)
            .state("order_id", "7130", version=3, at=4.0)
            .build()
        )

        verdict = axis(result, case, "captured")

        assert not verdict.passed
        assert "order_id='7130'" in verdict.why

    def test_wrong_record_read_again_before_use(self) -> None:
        verdict = axis(te02_trace(reread=True).build(), TE02, "captured")

        assert verdict.passed
        assert "read again" in verdict.why

    def test_wrong_record_used_without_a_second_look(self) -> None:
        verdict = axis(te02_trace(reread=False).build(), TE02, "captured")

        assert not verdict.passed
        assert "wrong_record" in verdict.why
        assert "lookup_order-1" in verdict.why

    def test_empty_result_read_again_with_other_arguments_is_not_a_second_look(self) -> None:
        case = scenario("te-03")  # "add one more item to 5590": the lookup answers nothing
        result = (
            TraceBuilder("te-03")
            .caller("Please add one more item to order 5590.", at=1.0, end=3.0)
            .call("lookup_order-1", "lookup_order", {"order_id": "5590"}, sent=3.0,
                  completed=3.3, fault=FaultKind.EMPTY_RESULT)
            .call("lookup_order-2", "lookup_order", {"order_id": "5599"}, sent=3.3,
                  completed=3.6)
            .build()
        )  # fmt: skip

        verdict = axis(result, case, "captured")

        assert not verdict.passed
        assert "empty_result from lookup_order-1" in verdict.why

    def test_errors_announce_themselves(self) -> None:
        case = scenario("te-10")  # the lookup fails with a 500 once
        result = (
            TraceBuilder("te-10")
            .caller("Order 7130 should come on 2026-12-19.", at=1.0, end=3.0)
            .call("lookup_order-1", "lookup_order", {"order_id": "7130"}, sent=3.0, failed=3.3,
                  fault=FaultKind.HTTP_500)
            .build()
        )  # fmt: skip

        assert axis(result, case, "captured").passed

    def test_a_read_after_the_result_was_relied_on_is_not_a_second_look(self) -> None:
        # The update is built from the unchecked lookup; the same lookup only runs again
        # afterwards, to read the write back.
        result = (
            te02_trace(reread=False)
            .call("lookup_order-4", "lookup_order", {"order_id": "4821"}, sent=12.0,
                  completed=12.3, result={**RIGHT_4821, "quantity": 7})
            .build()
        )  # fmt: skip

        assert not axis(result, TE02, "captured").passed


# --- AX-2 active_state_correct -----------------------------------------------------------------


class TestActiveStateCorrect:
    def test_final_state_is_the_action(self) -> None:
        verdict = axis(corr04_robust_trace().build(), CORR04, "active_state_correct")

        assert verdict.passed
        assert "'order_id': '5599'" in verdict.why

    def test_final_state_still_holds_the_old_order(self) -> None:
        result = corr04_opening().build()

        verdict = axis(result, CORR04, "active_state_correct")

        assert not verdict.passed
        assert "{'order_id': '5590'}" in verdict.why
        assert "'order_id': '5599'" in verdict.why  # what the customer wants

    def test_the_last_reported_value_counts(self) -> None:
        ok = corr04_robust_trace().state("quantity", 3, version=4, at=17.0).build()

        verdict = axis(ok, CORR04, "active_state_correct")

        assert not verdict.passed
        assert "{'quantity': 3}" in verdict.why

    def test_values_compare_as_text(self) -> None:
        result = corr04_robust_trace().state("order_id", 5599, version=4, at=17.0).build()

        assert axis(result, CORR04, "active_state_correct").passed

    def test_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07,
                       "active_state_correct")  # fmt: skip

        assert verdict.passed
        assert "'execute': False" in verdict.why

    def test_not_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=False, sent=False).build(), CORR07,
                       "active_state_correct")  # fmt: skip

        assert not verdict.passed
        assert "{'execute': None}" in verdict.why


# --- AX-3 tool_args_correct ------------------------------------------------------------------


class TestToolArgsCorrect:
    def test_one_current_call_with_the_wanted_arguments(self) -> None:
        # update_order-2 was cancelled before it was sent: it never took effect.
        verdict = axis(corr04_robust_trace().build(), CORR04, "tool_args_correct")

        assert verdict.passed
        assert "1 call(s)" in verdict.why

    def test_the_old_order_number_went_out(self) -> None:
        verdict = axis(corr04_stale_trace().build(), CORR04, "tool_args_correct")

        assert not verdict.passed
        assert "update_order-2" in verdict.why
        assert "'order_id': '5590'" in verdict.why

    def test_right_arguments_built_on_an_older_version(self) -> None:
        result = (
            corr04_opening()
            .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
            .state("order_id", "5599", version=3, at=13.0)
            .call("update_order-2", "update_order", {"order_id": "5599", "quantity": 2},
                  version=2, sent=13.0, completed=16.0)
            .build()
        )  # fmt: skip

        verdict = axis(result, CORR04, "tool_args_correct")

        assert not verdict.passed
        assert "update_order-2 was built on v2, current was v3" in verdict.why

    def test_an_extra_argument_is_not_the_wanted_call(self) -> None:
        args = {"order_id": "5599", "quantity": 2, "delivery_date": "2026-12-10"}
        result = corr04_opening().call("update_order-2", "update_order", args, sent=13.0).build()

        verdict = axis(result, CORR04, "tool_args_correct")

        assert not verdict.passed
        assert "'delivery_date': '2026-12-10'" in verdict.why

    def test_no_call_went_out(self) -> None:
        verdict = axis(corr04_opening().build(), CORR04, "tool_args_correct")

        assert not verdict.passed
        assert "no update_order call went out" in verdict.why

    def test_a_sent_call_cancelled_after_its_write_landed_took_effect(self) -> None:
        result = int03_cancelled_trace(first_write_landed=True).build()

        verdict = axis(result, INT03, "tool_args_correct")

        assert not verdict.passed
        assert "update_order-2" in verdict.why
        assert "'quantity': 3" in verdict.why

    def test_a_sent_call_cancelled_before_it_wrote_did_not_take_effect(self) -> None:
        result = int03_cancelled_trace(first_write_landed=False).build()

        verdict = axis(result, INT03, "tool_args_correct")

        assert verdict.passed
        assert "1 call(s)" in verdict.why

    def test_a_call_that_failed_before_writing_did_not_take_effect(self) -> None:
        # The first attempt carried the wrong quantity, but failed before writing anything.
        result = (
            corr04_robust_trace()
            .call("update_order-0", "update_order", {"order_id": "5599", "quantity": 3},
                  version=3, sent=13.0, failed=13.5, fault=FaultKind.HTTP_500)
            .build()
        )  # fmt: skip

        assert axis(result, CORR04, "tool_args_correct").passed

    def test_nothing_goes_out_when_the_caller_calls_it_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07,
                       "tool_args_correct")  # fmt: skip

        assert verdict.passed
        assert "no action went out" in verdict.why

    def test_a_call_goes_out_although_the_caller_called_it_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=True).build(), CORR07,
                       "tool_args_correct")  # fmt: skip

        assert not verdict.passed
        assert "update_order-2 went out although the caller called it off" in verdict.why


# --- AX-4 stale_write_prevented --------------------------------------------------------------


class TestStaleWritePrevented:
    def test_one_write_from_a_current_correct_call(self) -> None:
        verdict = axis(corr04_robust_trace().build(), CORR04, "stale_write_prevented")

        assert verdict.passed

    def test_the_stale_call_wrote(self) -> None:
        verdict = axis(corr04_stale_trace().build(), CORR04, "stale_write_prevented")

        assert not verdict.passed
        assert "update_order-2 wrote {'order_id': '5590', 'quantity': 2} at 16.00s" in verdict.why

    def test_a_cancelled_call_whose_write_landed_fails(self) -> None:
        result = int03_cancelled_trace(first_write_landed=True).build()
        case_view = view(result, INT03)

        verdict = axis(result, INT03, "stale_write_prevented")

        # The cancelled call counts as having taken effect ...
        assert "update_order-2" in [c.call_id for c in case_view.action_calls()]
        # ... so its write is a stale write, although the backend ends up right.
        assert not verdict.passed
        assert "update_order-2 was cancelled, but its write landed at 12.50s" in verdict.why
        assert axis(result, INT03, "backend_correct").passed

    def test_a_cancel_in_time_keeps_the_stale_write_out(self) -> None:
        result = int03_cancelled_trace(first_write_landed=False).build()

        assert axis(result, INT03, "stale_write_prevented").passed

    def test_a_correct_change_written_twice(self) -> None:
        verdict = axis(te05_trace(retry_key=None, first_key=None).build(), TE05,
                       "stale_write_prevented")  # fmt: skip

        assert not verdict.passed
        assert "written 2 times" in verdict.why

    def test_a_duplicated_delivery_is_a_repeated_write(self) -> None:
        verdict = axis(te07_trace(key=None).build(), scenario("te-07"), "stale_write_prevented")

        assert not verdict.passed
        assert "written 2 times" in verdict.why

    def test_a_retry_with_the_same_key_writes_once(self) -> None:
        result = te05_trace(retry_key="te-05:refund", first_key="te-05:refund").build()

        assert axis(result, TE05, "stale_write_prevented").passed

    def test_a_write_from_an_unknown_call(self) -> None:
        result = (
            corr04_opening()
            .write("orders", "5599", "quantity", 1, 2, call="ghost-1", at=12.0)
            .build()
        )

        verdict = axis(result, CORR04, "stale_write_prevented")

        assert not verdict.passed
        assert "ghost-1 wrote {} at 12.00s" in verdict.why

    def test_nothing_written_when_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07,
                       "stale_write_prevented")  # fmt: skip

        assert verdict.passed

    def test_written_although_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=True).build(), CORR07,
                       "stale_write_prevented")  # fmt: skip

        assert not verdict.passed
        assert "update_order-2 wrote although the caller called it off" in verdict.why


# --- AX-5 backend_correct --------------------------------------------------------------------


class TestBackendCorrect:
    def test_orders_match_the_gold_replay(self) -> None:
        verdict = axis(corr04_robust_trace().build(), CORR04, "backend_correct")

        assert verdict.passed
        assert "orders matches the gold replay" in verdict.why

    def test_the_customers_order_kept_its_old_quantity(self) -> None:
        verdict = axis(corr04_stale_trace().build(), CORR04, "backend_correct")

        assert not verdict.passed
        assert "'5599': {'stored': {'quantity': 1" in verdict.why
        assert "'gold': {'quantity': 2" in verdict.why

    def test_another_order_changed_too(self) -> None:
        result = (
            corr04_robust_trace()
            .write("orders", "5590", "quantity", 2, 3, call="update_order-3", at=16.0)
            .build()
        )

        verdict = axis(result, CORR04, "backend_correct")

        assert not verdict.passed
        assert "'5590'" in verdict.why
        assert "'5599'" not in verdict.why

    def test_a_refund_is_compared_without_its_generated_key(self) -> None:
        refund = {"order_id": "5590", "amount": 25}
        result = (
            TraceBuilder("te-05")
            .call("issue_refund-1", "issue_refund", refund, sent=1.0, completed=4.0)
            .create("refunds", "17", refund, call="issue_refund-1", at=4.0)
            .build()
        )

        assert axis(result, TE05, "backend_correct").passed

    def test_two_refunds_where_one_was_wanted(self) -> None:
        verdict = axis(te05_trace(retry_key=None, first_key=None).build(), TE05,
                       "backend_correct")  # fmt: skip

        assert not verdict.passed
        assert verdict.why.startswith("refunds holds")
        assert verdict.why.count("('amount', '25')") == 3  # two stored, one in the gold replay

    def test_a_refund_of_the_wrong_amount(self) -> None:
        refund = {"order_id": "5590", "amount": 20}
        result = (
            TraceBuilder("te-05")
            .call("issue_refund-1", "issue_refund", refund, sent=1.0, completed=4.0)
            .create("refunds", "1", refund, call="issue_refund-1", at=4.0)
            .build()
        )

        verdict = axis(result, TE05, "backend_correct")

        assert not verdict.passed
        assert "('amount', '20')" in verdict.why

    def test_untouched_when_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07,
                       "backend_correct")  # fmt: skip

        assert verdict.passed

    def test_changed_although_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=True).build(), CORR07,
                       "backend_correct")  # fmt: skip

        assert not verdict.passed
        assert "'4281': {'stored': {'quantity': 6" in verdict.why


# --- AX-6 confirmation_matches_backend ---------------------------------------------------------


class TestConfirmationMatchesBackend:
    def test_confirmed_what_was_stored_then_and_after(self) -> None:
        verdict = axis(corr04_robust_trace().build(), CORR04, "confirmation_matches_backend")

        assert verdict.passed
        assert "turn 4 says {'quantity': '2'}" in verdict.why

    def test_claims_success_while_the_backend_holds_the_old_value(self) -> None:
        # Order 5599 still has quantity 1: the stale update changed order 5590.
        verdict = axis(corr04_stale_trace().build(), CORR04, "confirmation_matches_backend")

        assert not verdict.passed
        assert "turn 5 says {'quantity': '2'}" in verdict.why
        assert "at 16.00s the backend held {'quantity': 1}" in verdict.why

    def test_claims_success_for_a_write_that_never_lands(self) -> None:
        # te-08 without the late write: the timed-out update never reaches the backend.
        result = (
            TraceBuilder("te-08")
            .caller("Order 4821 should come on 2026-12-06.", at=5.1, end=7.9)
            .call("update_order-1", "update_order",
                  {"order_id": "4821", "delivery_date": "2026-12-06"}, sent=11.0,
                  timed_out=17.0)
            .agent("Done: order 4821 will now arrive on 2026-12-06.", at=17.0, end=21.0)
            .build()
        )  # fmt: skip

        verdict = axis(result, scenario("te-08"), "confirmation_matches_backend")

        assert not verdict.passed
        assert "the backend held {'delivery_date': '2026-12-01'}" in verdict.why

    def test_confirmed_before_the_write_landed(self) -> None:
        verdict = axis(te08_trace().build(), scenario("te-08"), "confirmation_matches_backend")

        assert not verdict.passed
        assert "turn 2 says {'delivery_date': '2026-12-06'}" in verdict.why
        assert "at 17.00s the backend held {'delivery_date': '2026-12-01'}" in verdict.why

    def test_a_duplicate_made_the_confirmation_untrue_later(self) -> None:
        result = te07_trace(key=None, again_at=15.0).build()

        verdict = axis(result, scenario("te-07"), "confirmation_matches_backend")

        assert not verdict.passed
        assert "{'amount': '60', 'order_id': '4281'}" in verdict.why
        assert "at the end the backend held no single match" in verdict.why

    def test_never_names_the_stored_value(self) -> None:
        result = (
            corr04_robust_trace()
            .agent("All done, anything else?", at=25.0)  # the goodbye turn names nothing
            .build()
        )
        no_claim = (
            corr04_opening()
            .call("update_order-2", "update_order", {"order_id": "5599", "quantity": 2},
                  version=2, sent=11.0, completed=14.0)
            .write("orders", "5599", "quantity", 1, 2, call="update_order-2", at=14.0)
            .agent("All done, anything else?", at=14.0)
            .build()
        )  # fmt: skip

        assert axis(result, CORR04, "confirmation_matches_backend").passed  # turn 4 still counts
        verdict = axis(no_claim, CORR04, "confirmation_matches_backend")
        assert not verdict.passed
        assert "never told the caller the stored value" in verdict.why

    def test_a_read_back_before_the_call_went_out_is_no_confirmation(self) -> None:
        # "I'll change order 5590 to 2 items." was said before update_order-2 was sent.
        result = (
            corr04_opening()
            .call("update_order-2", "update_order", {"order_id": "5599", "quantity": 2},
                  version=2, sent=12.0, completed=15.0)
            .write("orders", "5599", "quantity", 1, 2, call="update_order-2", at=15.0)
            .build()
        )  # fmt: skip

        verdict = axis(result, CORR04, "confirmation_matches_backend")

        assert not verdict.passed
        assert "never told" in verdict.why

    @pytest.mark.parametrize(
        ("first", "last", "passed"),
        [("3 items", "2 items", True), ("2 items", "3 items", False)],
    )
    def test_the_last_statement_counts(self, first: str, last: str, passed: bool) -> None:
        result = (
            corr04_robust_trace()
            .agent(f"Order 5599 has {first}.", at=26.0)
            .agent(f"Sorry: order 5599 has {last}.", at=29.0)
            .build()
        )

        verdict = axis(result, CORR04, "confirmation_matches_backend")

        assert verdict.passed is passed
        assert "turn 8 says" in verdict.why

    def test_nothing_written_when_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=False).build(), CORR07,
                       "confirmation_matches_backend")  # fmt: skip

        assert verdict.passed
        assert "nothing was written" in verdict.why

    def test_written_although_called_off(self) -> None:
        verdict = axis(corr07_trace(called_off=True, sent=True).build(), CORR07,
                       "confirmation_matches_backend")  # fmt: skip

        assert not verdict.passed
        assert "written although" in verdict.why


def test_every_axis_has_a_verdict_with_a_reason() -> None:
    scored = score(corr04_stale_trace().build(), CORR04)
    reasons: dict[str, Any] = {name: v.why for name, v in scored.axes.items()}

    assert list(reasons) == [
        "captured",
        "active_state_correct",
        "tool_args_correct",
        "stale_write_prevented",
        "backend_correct",
        "confirmation_matches_backend",
    ]
    assert all(reasons.values())
