"""The built-in three-layer suite, scoring helpers, and hand-built traces used by several tests.

The records of the suite's backend the traces below rely on:

    orders  5590 {quantity: 2, delivery_date: 2026-12-03}   5599 {quantity: 1, ...2026-12-10}
            4821 {quantity: 5, delivery_date: 2026-12-01}   4281 {quantity: 3, ...2026-12-05}
            7310 {quantity: 4, delivery_date: 2026-12-07}
    refunds (empty)

Each `*_trace` function returns an unbuilt `TraceBuilder`, so a test can add to it.
"""

from __future__ import annotations

import copy
from typing import Any

from polygon_voice.checks import score_case
from polygon_voice.checks.evidence import CaseView, Records
from polygon_voice.model import CaseScore, ConversationResult, FaultKind, Scenario, Suite
from polygon_voice.runner import merged_records
from polygon_voice.scenario import load_suite
from polygon_voice.suites import builtin_suite_path
from tests.checks.trace_builder import TraceBuilder

_PATH = builtin_suite_path("three-layer")
assert _PATH is not None
SUITE: Suite = load_suite(_PATH).suite
SCENARIOS: dict[str, Scenario] = {s.id: s for s in SUITE.scenarios}

GREETING = "Hello, you are through to the order service. How can I help?"


def scenario(case_id: str) -> Scenario:
    """A case of the built-in suite."""
    return SCENARIOS[case_id]


def make_case(
    case_id: str,
    category: str,
    tool: str,
    args: dict[str, Any],
    *,
    should_execute: bool = True,
    **setup: Any,
) -> Scenario:
    """A case of our own: `setup` keys (`field`, `initial_value`, `corrected_value`, `noise`)
    as in the suite file, the action `tool` and `args`, and what a correct system does."""
    expected = dict.fromkeys(
        (
            "captured",
            "active_state_correct",
            "tool_args_correct",
            "stale_write_prevented",
            "backend_correct",
            "confirmation_matches_backend",
        ),
        True,
    )
    return Scenario.model_validate(
        {
            "id": case_id,
            "category": category,
            "setup": {**setup, "action": {"tool": tool, "args": args}},
            "expected": {**expected, "should_execute": should_execute},
        }
    )


def initial_records(case: Scenario) -> Records:
    """The records the call started from (the suite's, with the case's own on top)."""
    return copy.deepcopy(merged_records(SUITE.backend, case.backend))


def score(result: ConversationResult, case: Scenario) -> CaseScore:
    """The case's score, as the runner computes it."""
    return score_case(result, case, SUITE.tools, initial_records(case))


def view(result: ConversationResult, case: Scenario) -> CaseView:
    """The case's view of a conversation (what the axes and detectors read)."""
    return CaseView(result, case, SUITE.tools, initial_records(case))


def failed_axes(case_score: CaseScore) -> list[str]:
    """The names of the axes that do not hold."""
    return [name for name, verdict in case_score.axes.items() if not verdict.passed]


# --- corr-04: "change order 5590 to 2 items" -> "sorry, I meant order 5599" (during prep) -----


def corr04_opening() -> TraceBuilder:
    """Up to the read-back: the agent looked order 5590 up and builds the update."""
    return (
        TraceBuilder("corr-04")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 5590 to 2 items.", at=5.1, end=7.9)
        .state("quantity", 2, version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .call("lookup_order-1", "lookup_order", {"order_id": "5590"}, version=2, sent=7.9,
              completed=8.2)
        .agent("I'll change order 5590 to 2 items.", at=8.2, end=11.0)
    )  # fmt: skip


def corr04_robust_trace(*, read_back: bool = True) -> TraceBuilder:
    """The robust agent: drops the stale update, sends a new one on v3, reads the write
    back (16.0 to 16.3 s, unless not `read_back`) and confirms at 16.3 s."""
    builder = (
        corr04_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 2}, version=2,
              prepared=11.0, cancelled=13.0)
        .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
        .state("order_id", "5599", version=3, at=13.0)
        .call("update_order-3", "update_order", {"order_id": "5599", "quantity": 2}, version=3,
              key="corr-04:v3", sent=13.0, completed=16.0)
        .write("orders", "5599", "quantity", 1, 2, call="update_order-3", at=16.0)
    )  # fmt: skip
    if read_back:
        builder.call("lookup_order-4", "lookup_order", {"order_id": "5599"}, version=3,
                     sent=16.0, completed=16.3)  # fmt: skip
    return (
        builder.agent("Done: order 5599 now has 2 items.", at=16.3, end=19.0)
        .caller("Thanks, bye.", at=19.3, end=20.1)
        .agent("Thank you for calling. Goodbye!", at=20.1, end=22.1)
    )


def corr04_stale_trace() -> TraceBuilder:
    """The flawed agent: sends the update built on v2 after the caller's correction made v3,
    so order 5590 is written, and it confirms order 5599 as if it had been changed."""
    return (
        corr04_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 2}, version=2,
              prepared=11.0, sent=13.0, completed=16.0)
        .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
        .state("order_id", "5599", version=3, at=13.0)
        .agent("Understood, order id 5599.", at=13.0, end=14.6)
        .write("orders", "5590", "quantity", 2, 2, call="update_order-2", at=16.0)
        .agent("Done: order 5599 now has quantity 2.", at=16.0, end=20.4)
        .caller("Thanks, bye.", at=20.7, end=21.5)
        .agent("Thank you for calling. Goodbye!", at=21.5, end=23.5)
    )  # fmt: skip


# --- int-01: background noise over the read-back of "order 5590 to 3 items" ------------------


def int01_trace(*, rollback: bool) -> TraceBuilder:
    """Noise at 9.0 s. With `rollback` the agent (like the flawed one) takes it for an
    interruption and rolls the quantity back to the stored 2, then writes and confirms 2."""
    quantity = 2 if rollback else 3
    version = 3 if rollback else 2
    builder = (
        TraceBuilder("int-01")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 5590 to 3 items.", at=5.1, end=7.9)
        .state("quantity", 3, version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .agent("I'll change order 5590 to 3 items.", at=7.9, end=10.7)
        .barge_in(None, at=9.0)
    )
    if rollback:
        builder.state("quantity", 2, version=3, at=9.0)
    return (
        builder.caller("Hello? Yes, go ahead.", at=11.0, end=12.0)
        .call("update_order-1", "update_order", {"order_id": "5590", "quantity": quantity},
              version=version, key="int-01:v2", sent=12.0, completed=15.0)
        .write("orders", "5590", "quantity", 2, quantity, call="update_order-1", at=15.0)
        .call("lookup_order-2", "lookup_order", {"order_id": "5590"}, sent=15.0, completed=15.3)
        .agent(f"Done: order 5590 now has {quantity} items.", at=15.3, end=18.0)
    )  # fmt: skip


# --- int-03: "order 5590 to 3 items" -> "wait, make it 5 items" after the update was sent -----


def int03_opening() -> TraceBuilder:
    """The update for 3 items goes out at 11.0 s; the caller says "5 items" from 11.0 s."""
    return (
        TraceBuilder("int-03")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 5590 to 3 items.", at=5.1, end=7.9)
        .state("quantity", 3, version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .agent("I'll change order 5590 to quantity 3.", at=8.2, end=11.0)
        .barge_in("Wait, make it 5 items.", at=11.0, end=13.0, point="after_tool_fired")
        .state("quantity", 5, version=3, at=13.0)
    )


def int03_inflight_trace() -> TraceBuilder:
    """The flawed agent: the running update is never cancelled; it writes 3 and the agent
    confirms 5."""
    return (
        int03_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              sent=11.0, completed=14.2)
        .agent("Understood, quantity 5.", at=13.0, end=14.2)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-2", at=14.0)
        .agent("Done: order 5590 now has quantity 5.", at=14.2, end=18.6)
    )  # fmt: skip


# --- te-05: the refund is booked but the backend answers 500 ---------------------------------


def te05_trace(*, retry_key: str | None, first_key: str | None) -> TraceBuilder:
    """issue_refund-2 fails with a 500 although refund 1 was booked; issue_refund-3 retries.
    With the first call's key the backend answers the first response (no second write);
    otherwise the retry books refund 2."""
    builder = (
        TraceBuilder("te-05")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please refund 25 euros on order 5590.", at=5.1, end=7.9)
        .state("amount", 25, version=1, at=7.9)
        .state("order_id", "5590", version=2, at=7.9)
        .agent("I'll refund 25 euros on order 5590.", at=8.2, end=11.0)
        .call("issue_refund-2", "issue_refund", {"order_id": "5590", "amount": 25}, version=2,
              key=first_key, sent=11.0, failed=14.0, fault=FaultKind.HTTP_500)
        .create("refunds", "1", {"order_id": "5590", "amount": 25}, call="issue_refund-2",
                at=14.0)
        .agent("Sorry, that did not work. Let me try again.", at=14.0, end=17.6)
        .call("issue_refund-3", "issue_refund", {"order_id": "5590", "amount": 25}, version=2,
              key=retry_key, sent=17.6, completed=20.6)
    )  # fmt: skip
    deduplicated = retry_key is not None and retry_key == first_key
    refund = "1" if deduplicated else "2"
    if not deduplicated:
        builder.create(
            "refunds", "2", {"order_id": "5590", "amount": 25}, call="issue_refund-3", at=20.6
        )
    return (
        builder.call("get_refund-4", "get_refund", {"refund_id": refund}, sent=20.6,
                     completed=20.9)
        .agent("Done: your refund of 25 euros for order 5590 is booked.", at=20.9, end=26.9)
    )  # fmt: skip


# --- te-07: the network delivers the refund request twice ------------------------------------


def te07_trace(*, key: str | None, again_at: float = 14.05) -> TraceBuilder:
    """issue_refund-1 (60 euros on 4281) reaches the backend at 14.0 s and again at `again_at`
    (refund 2); the agent confirms at 14.3 s after reading refund 1 back."""
    refund = {"order_id": "4281", "amount": 60}
    return (
        TraceBuilder("te-07")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please refund 60 euros on order 4281.", at=5.1, end=7.9)
        .state("amount", 60, version=1, at=7.9)
        .state("order_id", "4281", version=2, at=7.9)
        .call("issue_refund-1", "issue_refund", refund, version=2, key=key, sent=11.0,
              completed=14.0, fault=FaultKind.DUPLICATE_WRITE)
        .create("refunds", "1", refund, call="issue_refund-1", at=14.0)
        .create("refunds", "2", refund, call="issue_refund-1", at=again_at)
        .call("get_refund-2", "get_refund", {"refund_id": "1"}, sent=14.0, completed=14.3)
        .agent("Done: your refund of 60 euros for order 4281 is booked.", at=14.3, end=19.0)
    )  # fmt: skip


# --- te-08: the update times out; its write lands later --------------------------------------


def te08_trace() -> TraceBuilder:
    """update_order-1 (4821 to 2026-12-06) times out at 17.0 s; the agent confirms right away;
    the write lands at 19.0 s."""
    return (
        TraceBuilder("te-08")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Order 4821 should come on 2026-12-06.", at=5.1, end=7.9)
        .state("delivery_date", "2026-12-06", version=1, at=7.9)
        .state("order_id", "4821", version=2, at=7.9)
        .call("update_order-1", "update_order",
              {"order_id": "4821", "delivery_date": "2026-12-06"}, version=2, sent=11.0,
              timed_out=17.0, fault=FaultKind.LATE_SUCCESS)
        .agent("Done: order 4821 will now arrive on 2026-12-06.", at=17.0, end=21.0)
        .write("orders", "4821", "delivery_date", "2026-12-01", "2026-12-06",
               call="update_order-1", at=19.0)
    )  # fmt: skip


# --- te-09: the update fails with a 500 and nothing is written -------------------------------


def te09_claims_success_trace() -> TraceBuilder:
    """update_order-1 (7310 to 3 items) fails and writes nothing, yet the agent says it is
    done: the backend still holds quantity 4."""
    return (
        TraceBuilder("te-09")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Change order 7310 to 3 items.", at=5.1, end=7.9)
        .state("quantity", 3, version=1, at=7.9)
        .state("order_id", "7310", version=2, at=7.9)
        .call("update_order-1", "update_order", {"order_id": "7310", "quantity": 3}, version=2,
              sent=8.0, failed=11.0, fault=FaultKind.HTTP_500)
        .agent("Done: order 7310 now has 3 items.", at=11.0, end=14.0)
    )  # fmt: skip


# --- te-02 (wrong record), corr-07 (called off), int-03 (cancelled in flight) ------------------

WRONG_4281 = {"order_id": "4281", "quantity": 3, "delivery_date": "2026-12-05", "total": 60,
              "status": "processing"}  # fmt: skip
RIGHT_4821 = {"order_id": "4821", "quantity": 5, "delivery_date": "2026-12-01", "total": 40,
              "status": "processing"}  # fmt: skip


def te02_trace(*, reread: bool, order_id: str = "4821") -> TraceBuilder:
    """lookup_order-1 answers another order's record (wrong_record). With `reread` the agent
    looks 4821 up again before it builds the update; the update goes to `order_id`."""
    builder = (
        TraceBuilder("te-02")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Change order 4821 to 7 items.", at=5.1, end=7.9)
        .state("quantity", 7, version=1, at=7.9)
        .state("order_id", "4821", version=2, at=7.9)
        .call("lookup_order-1", "lookup_order", {"order_id": "4821"}, version=2, sent=7.9,
              completed=8.2, fault=FaultKind.WRONG_RECORD, result=WRONG_4281)
    )  # fmt: skip
    if reread:
        builder.call("lookup_order-2", "lookup_order", {"order_id": "4821"}, version=2,
                     sent=8.2, completed=8.5, result=RIGHT_4821)  # fmt: skip
    old = 5 if order_id == "4821" else 3
    return (
        builder.call("update_order-3", "update_order", {"order_id": order_id, "quantity": 7},
                     version=2, sent=9.0, completed=12.0)
        .write("orders", order_id, "quantity", old, 7, call="update_order-3", at=12.0)
        .agent(f"Done: order {order_id} now has 7 items.", at=12.0, end=15.0)
    )  # fmt: skip


def corr07_trace(*, called_off: bool, sent: bool) -> TraceBuilder:
    """corr-07: "change 4281 to 6 items" -> "no, don't" while the update is being built. With
    `called_off` the agent reports execute=false; with `sent` the update still goes out."""
    builder = (
        TraceBuilder("corr-07")
        .agent(GREETING, at=0.0, end=4.8)
        .caller("Please change order 4281 to 6 items.", at=5.1, end=7.9)
        .state("quantity", 6, version=1, at=7.9)
        .state("order_id", "4281", version=2, at=7.9)
        .agent("I'll change order 4281 to 6 items.", at=7.9, end=11.0)
        .barge_in("No, don't, leave it as it is.", at=11.0, end=13.0, point="during_tool_prep")
    )
    if called_off:
        builder.state("execute", False, version=3, at=13.0)
    args = {"order_id": "4281", "quantity": 6}
    if sent:
        return (
            builder.call("update_order-2", "update_order", args, version=2, prepared=11.0,
                         sent=13.0, completed=16.0)
            .write("orders", "4281", "quantity", 3, 6, call="update_order-2", at=16.0)
            .agent("Done: order 4281 now has 6 items.", at=16.0, end=19.0)
        )  # fmt: skip
    return builder.call(
        "update_order-2", "update_order", args, version=2, prepared=11.0, cancelled=13.0
    ).agent("Okay, I have left order 4281 as it is.", at=13.0, end=16.0)


def int03_cancelled_trace(*, first_write_landed: bool) -> TraceBuilder:
    """The robust agent on int-03: it cancels the running update for 3 items when the caller
    says 5, and sends a new one. With `first_write_landed` the cancelled call's write had
    already reached the backend at 12.5 s (a cancel cannot take back a landed write)."""
    builder = int03_opening().call(
        "update_order-2", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
        sent=11.0, cancelled=13.0,
    )  # fmt: skip
    old = 2
    if first_write_landed:
        builder.write("orders", "5590", "quantity", 2, 3, call="update_order-2", at=12.5)
        old = 3
    return (
        builder.call("update_order-3", "update_order", {"order_id": "5590", "quantity": 5},
                     version=3, key="int-03:v3", sent=13.0, completed=16.0)
        .write("orders", "5590", "quantity", old, 5, call="update_order-3", at=16.0)
        .call("lookup_order-4", "lookup_order", {"order_id": "5590"}, sent=16.0, completed=16.3)
        .agent("Done: order 5590 now has 5 items.", at=16.3, end=19.0)
    )  # fmt: skip
