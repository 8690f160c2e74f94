"""Root causes: each detector on its trace, the layer to repair, and the detector order."""

from __future__ import annotations

import pytest

from polygon_voice.checks import LAYERS, summarise
from polygon_voice.checks.causes import DETECTORS
from polygon_voice.model import (
    CallEnd,
    CaseScore,
    ConversationResult,
    EndReason,
    FaultKind,
    Layer,
    RootCause,
    Scenario,
)
from tests.checks.cases import (
    WRONG_4281,
    corr04_opening,
    corr04_robust_trace,
    corr04_stale_trace,
    corr07_trace,
    failed_axes,
    int01_trace,
    int03_inflight_trace,
    scenario,
    score,
    te02_trace,
    te05_trace,
    te07_trace,
    te08_trace,
    te09_claims_success_trace,
    view,
)
from tests.checks.trace_builder import TraceBuilder

DOCUMENTED_ORDER = [
    "noise_taken_as_interruption",
    "unchecked_tool_result",
    "inflight_call_not_cancelled",
    "stale_tool_args",
    "wrong_field_or_record",
    "unsafe_retry_after_backend_error",
    "missing_idempotency_key",
    "call_broken_off",
    "success_claimed_without_write",
    "confirmed_before_result",
    "request_dropped",
]


def cause_of(result: ConversationResult, case: Scenario) -> RootCause:
    """The root cause of a failed case."""
    scored = score(result, case)
    assert not scored.e2e
    assert scored.root_cause is not None
    return scored.root_cause


def evidence_from(result: ConversationResult, case: Scenario) -> dict[str, object]:
    """Which detectors find evidence in the trace (not only the first)."""
    case_view = view(result, case)
    return {name: found for name, detect in DETECTORS if (found := detect(case_view))}


def test_detectors_run_in_the_documented_order() -> None:
    assert [name for name, _ in DETECTORS] == DOCUMENTED_ORDER
    assert set(LAYERS) == {*DOCUMENTED_ORDER, "unclassified"}


def test_a_passing_case_has_no_root_cause() -> None:
    scored = score(corr04_robust_trace().build(), scenario("corr-04"))

    assert scored.e2e
    assert scored.root_cause is None


def test_noise_taken_as_interruption() -> None:
    cause = cause_of(int01_trace(rollback=True).build(), scenario("int-01"))

    assert cause.cause == "noise_taken_as_interruption"
    assert cause.layer is Layer.CONVERSATION
    assert cause.evidence == {
        "time": 9.0,
        "state_updates": [{"field": "quantity", "value": 2, "version": 3}],
    }


def test_unchecked_tool_result() -> None:
    # The update happens to carry the right arguments: only AX-1 fails.
    result = te02_trace(reread=False).build()

    cause = cause_of(result, scenario("te-02"))

    assert failed_axes(score(result, scenario("te-02"))) == ["captured"]
    assert cause.cause == "unchecked_tool_result"
    assert cause.layer is Layer.EXECUTION
    assert cause.evidence == {
        "call_id": "lookup_order-1",
        "tool": "lookup_order",
        "fault": "wrong_record",
        "result": WRONG_4281,
        "used_by": {"call_id": "update_order-3", "args": {"order_id": "4821", "quantity": 7}},
    }


def test_unchecked_empty_result_used_by_nothing() -> None:
    result = (
        TraceBuilder("te-03")
        .caller("Please add one more item to order 5590.", at=1.0, end=3.0)
        .call("lookup_order-1", "lookup_order", {"order_id": "5590"}, sent=3.0, completed=3.3,
              fault=FaultKind.EMPTY_RESULT)
        .build()
    )  # fmt: skip

    cause = cause_of(result, scenario("te-03"))

    assert cause.cause == "unchecked_tool_result"
    assert cause.evidence["fault"] == "empty_result"
    assert cause.evidence["used_by"] is None


def test_inflight_call_not_cancelled() -> None:
    cause = cause_of(int03_inflight_trace().build(), scenario("int-03"))

    assert cause.cause == "inflight_call_not_cancelled"
    assert cause.layer is Layer.EXECUTION
    assert cause.evidence == {
        "call_id": "update_order-2",
        "sent_at": 11.0,
        "args": {"order_id": "5590", "quantity": 3},
        "wanted": {"order_id": "5590", "quantity": 5},
        "built_on_version": 2,
        "version_at_send": 2,
        "event_turn": 3,
        "event_at": 11.0,
    }


def test_stale_tool_args() -> None:
    cause = cause_of(corr04_stale_trace().build(), scenario("corr-04"))

    assert cause.cause == "stale_tool_args"
    assert cause.layer is Layer.EXECUTION
    assert cause.evidence == {
        "call_id": "update_order-2",
        "sent_at": 13.0,
        "args": {"order_id": "5590", "quantity": 2},
        "wanted": {"order_id": "5599", "quantity": 2},
        "built_on_version": 2,
        "version_at_send": 3,
    }


def test_stale_tool_args_sent_although_called_off() -> None:
    cause = cause_of(corr07_trace(called_off=True, sent=True).build(), scenario("corr-07"))

    assert cause.cause == "stale_tool_args"
    assert cause.evidence["call_id"] == "update_order-2"
    assert cause.evidence["wanted"] is None
    assert (cause.evidence["built_on_version"], cause.evidence["version_at_send"]) == (2, 3)


def test_unsafe_retry_after_backend_error() -> None:
    # The agent uses keys, but its retry dropped the one of the request it repeats.
    cause = cause_of(te05_trace(retry_key=None, first_key="te-05:first").build(), scenario("te-05"))

    assert cause.cause == "unsafe_retry_after_backend_error"
    assert cause.layer is Layer.STATE
    assert cause.evidence == {
        "failed_call": "issue_refund-2",
        "error": "http_500",
        "failed_key": "te-05:first",
        "retry_call": "issue_refund-3",
        "retry_key": None,
        "write_times": [14.0, 20.6],
    }


def test_a_retry_after_a_500_with_no_key_ever_is_a_missing_key() -> None:
    # No attempt ever carried a key: what to repair is the missing key, not the retry.
    cause = cause_of(te05_trace(retry_key=None, first_key=None).build(), scenario("te-05"))

    assert cause.cause == "missing_idempotency_key"
    assert cause.layer is Layer.STATE
    assert cause.evidence == {
        "call_id": "issue_refund-2",
        "retry_call": "issue_refund-3",
        "write_times": [14.0, 20.6],
    }


def test_a_retry_with_a_new_key_is_unsafe_too() -> None:
    result = te05_trace(retry_key="te-05:second", first_key="te-05:first").build()

    cause = cause_of(result, scenario("te-05"))

    assert cause.cause == "unsafe_retry_after_backend_error"
    assert cause.evidence["retry_key"] == "te-05:second"


def test_missing_idempotency_key() -> None:
    cause = cause_of(te07_trace(key=None).build(), scenario("te-07"))

    assert cause.cause == "missing_idempotency_key"
    assert cause.layer is Layer.STATE
    assert cause.evidence == {
        "call_id": "issue_refund-1",
        "retry_call": None,
        "write_times": [14.0, 14.05],
    }


def test_confirmed_before_result() -> None:
    cause = cause_of(te08_trace().build(), scenario("te-08"))

    assert cause.cause == "confirmed_before_result"
    assert cause.layer is Layer.STATE
    assert cause.evidence == {
        "turn": 2,
        "said_at": 17.0,
        "write_at": 19.0,
        "claimed": {"delivery_date": "2026-12-06"},
    }


def test_confirmed_with_no_answer_and_no_write() -> None:
    # The timed-out update never writes; the agent confirms anyway.
    result = (
        TraceBuilder("te-08")
        .caller("Order 4821 should come on 2026-12-06.", at=5.1, end=7.9)
        .state("delivery_date", "2026-12-06", version=1, at=7.9)
        .state("order_id", "4821", version=2, at=7.9)
        .call("update_order-1", "update_order",
              {"order_id": "4821", "delivery_date": "2026-12-06"}, version=2, sent=11.0,
              timed_out=17.0)
        .agent("Done: order 4821 will now arrive on 2026-12-06.", at=17.0, end=21.0)
        .build()
    )  # fmt: skip

    cause = cause_of(result, scenario("te-08"))

    assert cause.cause == "confirmed_before_result"
    assert cause.evidence == {
        "turn": 1,
        "said_at": 17.0,
        "write_at": None,
        "claimed": {"delivery_date": "2026-12-06"},
    }


def test_success_claimed_after_a_failed_call_that_wrote_nothing() -> None:
    # The 500 answered before the agent spoke: it knew the change had failed.
    cause = cause_of(te09_claims_success_trace().build(), scenario("te-09"))

    assert cause.cause == "success_claimed_without_write"
    assert cause.layer is Layer.STATE
    assert cause.evidence == {
        "turn": 2,
        "said_at": 11.0,
        "said": "Done: order 7310 now has 3 items.",
        "claimed": {"quantity": "3"},
        "calls": {"update_order-1": "failed"},
    }


def test_unclassified_lists_the_failed_axes() -> None:
    # Everything is right except the state the agent reports at the end.
    result = corr04_robust_trace().state("quantity", 3, version=4, at=25.0).build()

    cause = cause_of(result, scenario("corr-04"))

    assert cause.cause == "unclassified"
    assert cause.evidence == {"failed_axes": ["active_state_correct"]}


def test_unclassified_names_no_layer_to_repair() -> None:
    result = corr04_robust_trace().state("quantity", 3, version=4, at=25.0).build()
    scored = score(result, scenario("corr-04"))

    (row,) = summarise([scored]).fix_list()

    assert row["cause"] == "unclassified"
    assert row["layer"] not in {layer.value for layer in Layer}


# --- several causes in one trace: the first detector wins --------------------------------------


@pytest.mark.parametrize(
    ("name", "result", "case_id", "first", "also"),
    [
        ("noise, then a call built on the rolled-back state", int01_trace(rollback=True).build(),
         "int-01", "noise_taken_as_interruption", "wrong_field_or_record"),
        ("wrong record, then the wrong order updated",
         te02_trace(reread=False, order_id="4281").build(), "te-02",
         "unchecked_tool_result", "wrong_field_or_record"),
        ("running call never cancelled", int03_inflight_trace().build(), "int-03",
         "inflight_call_not_cancelled", "wrong_field_or_record"),
        ("duplicate delivery after the confirmation", te07_trace(key=None, again_at=15.0).build(),
         "te-07", "missing_idempotency_key", "confirmed_before_result"),
    ],
)  # fmt: skip
def test_the_first_detector_in_order_names_the_cause(
    name: str, result: ConversationResult, case_id: str, first: str, also: str
) -> None:
    case = scenario(case_id)

    found = evidence_from(result, case)
    cause = cause_of(result, case)

    assert {first, also} <= set(found), name
    assert cause.cause == first
    assert cause.evidence == found[first]
    assert cause.layer is LAYERS[first]


def test_wrong_record_used_for_the_wrong_order_names_its_use() -> None:
    result = te02_trace(reread=False, order_id="4281").build()

    cause = cause_of(result, scenario("te-02"))

    assert cause.evidence["used_by"] == {
        "call_id": "update_order-3",
        "args": {"order_id": "4281", "quantity": 7},
    }


def test_every_failed_case_gets_exactly_one_cause() -> None:
    traces = [
        (corr04_stale_trace().build(), "corr-04"),
        (int01_trace(rollback=True).build(), "int-01"),
        (int03_inflight_trace().build(), "int-03"),
        (te05_trace(retry_key=None, first_key=None).build(), "te-05"),
        (te07_trace(key=None).build(), "te-07"),
        (te08_trace().build(), "te-08"),
        (te09_claims_success_trace().build(), "te-09"),
    ]
    scores: list[CaseScore] = [score(result, scenario(case_id)) for result, case_id in traces]

    assert all(s.root_cause is not None and s.root_cause.cause in LAYERS for s in scores)
    assert sum(row["count"] for row in summarise(scores).fix_list()) == len(scores)


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        (EndReason.LOOP_DETECTED, "the agent said the same reply 2 times in a row"),
        (EndReason.ERROR, "agent raised KeyError: 'result'"),
        (EndReason.TURN_LIMIT, "reached 40 turns"),
    ],
)
def test_a_call_the_agent_broke_off_before_the_change_is_call_broken_off(
    reason: EndReason, message: str
) -> None:
    result = corr04_opening().build()
    result.end = CallEnd(reason=reason, time=12.0, message=message)
    cause = cause_of(result, scenario("corr-04"))
    assert cause.cause == "call_broken_off"
    assert cause.layer is Layer.CONVERSATION
    assert cause.evidence["end_reason"] == reason.value
    assert cause.evidence["message"] == message
    assert cause.evidence["action_writes"] == 0


def test_a_harness_failure_is_not_blamed_on_the_agent() -> None:
    result = corr04_opening().build()
    result.end = CallEnd(
        reason=EndReason.ERROR, time=12.0, message="internal error in the engine: ValueError"
    )
    assert cause_of(result, scenario("corr-04")).cause != "call_broken_off"
