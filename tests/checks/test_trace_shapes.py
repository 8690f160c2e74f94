"""Trace shapes the root causes used to misread, each built by hand: what the trace shows
decides the cause, not how the agent worded it.

The records these traces rely on are listed in `tests/checks/cases.py`.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.model import Layer, RootCause, Scenario
from tests.checks.cases import GREETING, corr04_opening, failed_axes, make_case, scenario, score
from tests.checks.trace_builder import TraceBuilder

CHANGE_3 = make_case("own-change", "tool_error", "update_order",
                     {"order_id": "5590", "quantity": 3})  # fmt: skip
DATE_12 = make_case("own-date", "tool_error", "update_order",
                    {"order_id": "5590", "delivery_date": "2026-12-12"})  # fmt: skip
ORDER_5599 = make_case("own-record", "correction", "update_order",
                       {"order_id": "5599", "quantity": 2}, field="order_number",
                       initial_value="5590", corrected_value="5599")  # fmt: skip
NOISE_3 = make_case("own-noise", "interruption", "update_order",
                    {"order_id": "5590", "quantity": 3}, noise=True)  # fmt: skip


def cause(builder: TraceBuilder, case: Scenario) -> RootCause:
    """The root cause of a failed case."""
    scored = score(builder.build(), case)
    assert not scored.e2e
    assert scored.not_exercised is None
    assert scored.root_cause is not None
    return scored.root_cause


def request(case_id: str, said: str, state: dict[str, Any]) -> TraceBuilder:
    """The greeting, the caller's request (5.1 to 7.9 s) and the agent's state after it."""
    builder = TraceBuilder(case_id).agent(GREETING, at=0.0, end=4.8).caller(said, at=5.1, end=7.9)
    for version, (name, value) in enumerate(state.items(), start=1):
        builder.state(name, value, version=version, at=7.9)
    return builder


def change_3() -> TraceBuilder:
    return request("own-change", "Please change order 5590 to 3 items.",
                   {"quantity": 3, "order_id": "5590"})  # fmt: skip


# --- a confirmation in the read-back's turn, after the send, before the result ---------------


def test_a_confirmation_in_the_read_back_turn_after_the_send_came_before_the_result() -> None:
    builder = (
        change_3()
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              key="k", sent=10.7, completed=13.7)
        .agent_chunks([("I'll change order 5590 to 3 items.", 7.9),
                       ("Done, order 5590 now has 3 items.", 10.7)], end=13.5)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-1", at=13.7)
        .call("lookup_order-2", "lookup_order", {"order_id": "5590"}, sent=13.7, completed=14.0)
    )  # fmt: skip

    found = cause(builder, CHANGE_3)

    assert found.cause == "confirmed_before_result"
    assert found.evidence == {
        "turn": 2, "said_at": 10.7, "write_at": 13.7, "claimed": {"quantity": "3"},
    }  # fmt: skip


def test_the_same_words_after_the_result_are_a_true_confirmation() -> None:
    builder = (
        change_3()
        .agent("I'll change order 5590 to 3 items.", at=7.9, end=10.7)
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              key="k", sent=10.7, completed=13.7)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-1", at=13.7)
        .call("lookup_order-2", "lookup_order", {"order_id": "5590"}, sent=13.7, completed=14.0)
        .agent("Done, order 5590 now has 3 items.", at=14.0, end=16.0)
    )  # fmt: skip

    scored = score(builder.build(), CHANGE_3)

    assert scored.e2e, failed_axes(scored)


# --- a value in another field, or another record, on the current version ---------------------


def test_a_value_written_into_the_wrong_field_is_not_stale() -> None:
    builder = (
        request("own-date", "Please move order 5590 to the 12th.",
                {"delivery_date": "2026-12-12", "order_id": "5590"})
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 12}, version=2,
              key="k", sent=8.0, completed=11.0)
        .write("orders", "5590", "quantity", 2, 12, call="update_order-1", at=11.0)
        .agent("Done, your order 5590 is updated.", at=11.0, end=13.0)
    )  # fmt: skip

    found = cause(builder, DATE_12)

    assert found.cause == "wrong_field_or_record"
    assert found.layer is Layer.EXECUTION
    assert found.evidence["built_on_version"] == found.evidence["version_at_send"] == 2
    assert found.evidence["wrong_fields"] == {
        "delivery_date": {"sent": None, "wanted": "2026-12-12"},
        "quantity": {"sent": 12, "wanted": None},
    }
    assert found.evidence["written"] == [
        {"collection": "orders", "record": "5590", "fields": {"quantity": 12}, "time": 11.0}
    ]


def order_5599(*, sent_order: str, version: int | None) -> TraceBuilder:
    """The caller corrects 5590 to 5599 before any call; the update goes to `sent_order`,
    built on `version` (3 is current)."""
    return (
        request("own-record", "Please change order 5590 to 2 items.",
                {"quantity": 2, "order_id": "5590"})
        .caller("Sorry, I meant order 5599.", at=8.5, end=10.0)
        .state("order_id", "5599", version=3, at=10.0)
        .call("update_order-1", "update_order", {"order_id": sent_order, "quantity": 2},
              version=version, key="k", sent=10.2, completed=13.2)
        .write("orders", sent_order, "quantity", 1, 2, call="update_order-1", at=13.2)
        .agent(f"Done, order {sent_order} now has 2 items.", at=13.2, end=15.0)
    )  # fmt: skip


def test_a_record_nobody_asked_for_is_the_wrong_record() -> None:
    found = cause(order_5599(sent_order="4281", version=3), ORDER_5599)

    assert found.cause == "wrong_field_or_record"
    assert found.evidence["wrong_fields"] == {"order_id": {"sent": "4281", "wanted": "5599"}}


def test_the_record_the_caller_gave_up_on_the_current_version_is_the_wrong_record() -> None:
    # Built on v3, as current, yet to 5590: the payload contradicts the state it names.
    found = cause(order_5599(sent_order="5590", version=3), ORDER_5599)

    assert found.cause == "wrong_field_or_record"
    assert found.evidence["wrong_fields"] == {"order_id": {"sent": "5590", "wanted": "5599"}}


def test_a_call_without_a_version_carrying_the_given_up_record_is_stale() -> None:
    # No version to go by: the value the caller had replaced makes it stale.
    found = cause(order_5599(sent_order="5590", version=None), ORDER_5599)

    assert found.cause == "stale_tool_args"


def test_a_running_call_cancelled_only_after_its_write_landed_was_not_cancelled() -> None:
    # The caller's change is heard at 13.0 s; the old call writes at 13.5 s and is cancelled
    # at 14.0 s, after the new one went out: too late to keep the write out.
    from tests.checks.cases import int03_opening

    builder = (
        int03_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              sent=11.0, cancelled=14.0)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-2", at=13.5)
        .call("update_order-3", "update_order", {"order_id": "5590", "quantity": 5}, version=3,
              key="b", sent=13.2, completed=16.0)
        .write("orders", "5590", "quantity", 3, 5, call="update_order-3", at=16.0)
        .agent("Done: order 5590 now has 5 items.", at=16.0, end=18.0)
    )  # fmt: skip

    found = cause(builder, scenario("int-03"))

    assert found.cause == "inflight_call_not_cancelled"
    assert found.evidence["call_id"] == "update_order-2"


def test_a_wrong_record_on_an_older_version_is_stale() -> None:
    found = cause(order_5599(sent_order="4281", version=2), ORDER_5599)

    assert found.cause == "stale_tool_args"
    assert (found.evidence["built_on_version"], found.evidence["version_at_send"]) == (2, 3)


# --- success claimed with no write at all ----------------------------------------------------


def test_success_claimed_without_any_call() -> None:
    builder = change_3().agent("All set, updated. Goodbye!", at=7.9, end=10.0)

    found = cause(builder, CHANGE_3)

    assert found.cause == "success_claimed_without_write"
    assert found.layer is Layer.STATE
    assert found.evidence == {
        "turn": 2,
        "said_at": 7.9,
        "said": "All set, updated.",
        "claimed": {"quantity": "3"},  # a bare "done" claims the request
        "calls": {},
    }


def test_success_claimed_with_a_call_prepared_but_never_sent() -> None:
    builder = (
        change_3()
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              prepared=7.9)
        .agent("Your order 5590 now has 3 items.", at=7.9, end=10.0)
    )  # fmt: skip

    found = cause(builder, CHANGE_3)

    assert found.cause == "success_claimed_without_write"
    assert found.evidence["calls"] == {"update_order-1": "prepared"}
    assert found.evidence["claimed"] == {"quantity": "3"}


# --- the request dropped after background noise ----------------------------------------------


def dropped_after_noise() -> TraceBuilder:
    return (
        request("own-noise", "Please change order 5590 to 3 items.",
                {"quantity": 3, "order_id": "5590"})
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              prepared=7.9, cancelled=9.0)
        .agent("I'll change order 5590 to 3 items.", at=7.9, end=9.0)
        .barge_in(None, at=9.0)
        .caller("Hello? Yes, go ahead.", at=11.0, end=12.0)
        .agent("Thank you for calling. Goodbye!", at=12.0, end=14.0)
        .end(14.0)
    )  # fmt: skip


def test_the_request_dropped_after_noise_without_a_word() -> None:
    scored = score(dropped_after_noise().build(), NOISE_3)

    # Noise changed nothing in the state: the agent heard right and then did nothing.
    assert scored.passed("captured")
    assert scored.root_cause is not None
    assert scored.root_cause.cause == "request_dropped"
    assert scored.root_cause.layer is Layer.CONVERSATION
    assert scored.root_cause.evidence == {
        "request_turn": 1,
        "calls": {"update_order-1": "cancelled"},
        "noise_at": [9.0],
        "last_agent_turn": 4,
        "last_said": "Thank you for calling. Goodbye!",
        "end_reason": "agent_hangup",
        "ended_at": 14.0,
    }


def test_a_dropped_request_with_a_claim_of_success_is_the_claim() -> None:
    builder = dropped_after_noise().agent("All done, your order is updated.", at=14.0, end=16.0)

    assert cause(builder, NOISE_3).cause == "success_claimed_without_write"


# --- a retry after a 500 --------------------------------------------------------------------


def te05_shape(first_key: str | None, retry_key: str | None) -> TraceBuilder:
    refund = {"order_id": "5590", "amount": 25}
    builder = (
        request("te-05", "Please refund 25 euros on order 5590.",
                {"amount": 25, "order_id": "5590"})
        .call("issue_refund-1", "issue_refund", refund, version=2, key=first_key, sent=8.0,
              failed=11.0)
        .create("refunds", "1", refund, call="issue_refund-1", at=11.0)
        .call("issue_refund-2", "issue_refund", refund, version=2, key=retry_key, sent=11.5,
              completed=14.5)
    )  # fmt: skip
    if retry_key is None or retry_key != first_key:
        builder.create("refunds", "2", refund, call="issue_refund-2", at=14.5)
    return builder.agent("Done: your refund of 25 euros for order 5590 is booked.", at=14.5)


def test_keys_decide_between_a_missing_key_and_an_unsafe_retry() -> None:
    te05 = scenario("te-05")

    assert cause(te05_shape(None, None), te05).cause == "missing_idempotency_key"
    assert cause(te05_shape("a", None), te05).cause == "unsafe_retry_after_backend_error"
    assert cause(te05_shape("a", "b"), te05).cause == "unsafe_retry_after_backend_error"
    assert cause(te05_shape(None, "b"), te05).cause == "unsafe_retry_after_backend_error"
    # The same key: the backend answers the first response, nothing is written twice.
    assert score(te05_shape("a", "a").build(), te05).e2e


def test_the_same_request_sent_twice_without_a_key_is_a_missing_key() -> None:
    # No error, no retry: the agent itself sent the change twice, and nothing told the
    # backend the second was the same request.
    args = {"order_id": "5590", "quantity": 3}
    builder = (
        change_3()
        .call("update_order-1", "update_order", args, version=2, sent=8.0, completed=11.0)
        .call("update_order-2", "update_order", args, version=2, sent=8.1, completed=11.1)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-1", at=11.0)
        .write("orders", "5590", "quantity", 3, 3, call="update_order-2", at=11.1)
        .agent("Done, order 5590 now has 3 items.", at=11.1, end=13.0)
    )  # fmt: skip

    found = cause(builder, CHANGE_3)

    assert found.cause == "missing_idempotency_key"
    assert found.evidence == {
        "call_id": "update_order-1", "retry_call": "update_order-2", "write_times": [11.0, 11.1],
    }  # fmt: skip


def test_a_call_built_before_the_change_and_sent_after_it_is_stale_whatever_its_version() -> None:
    # The agent hears "5599" at 13.0 s, first sends the update it had built for 5590, and
    # reports the new number only then: the version at send is still 2, but the call was
    # built before the change.
    builder = (
        corr04_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 2}, version=2,
              prepared=11.0, sent=13.0, completed=16.0)
        .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
        .state("order_id", "5599", version=3, at=13.5)
        .write("orders", "5590", "quantity", 2, 2, call="update_order-2", at=16.0)
        .agent("Done: order 5599 now has 2 items.", at=16.0, end=18.0)
    )  # fmt: skip

    found = cause(builder, scenario("corr-04"))

    assert found.cause == "stale_tool_args"
    assert (found.evidence["built_on_version"], found.evidence["version_at_send"]) == (2, 2)


def test_a_retry_barge_in_unfired_because_the_first_call_was_never_sent_is_the_agents() -> None:
    # The script waits for the second update_order call (a retry); the agent built the first
    # and never sent it, then said it was saved.
    step = {"at": "during_tool_prep", "say": "Make it 4.", "tool": "update_order", "on_call": 2}
    builder = (
        change_3()
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              prepared=7.9)
        .agent("Saved: order 5590 now has 3 items.", at=7.9, end=10.0)
        .note("script_unplayed", {"barge_ins": [step]}, at=12.0)
    )  # fmt: skip

    found = cause(builder, CHANGE_3)

    assert found.cause == "success_claimed_without_write"
    assert "the agent prepared 1 update_order call(s)" in found.evidence["script_unplayed"][0]
