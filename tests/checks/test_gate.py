"""The release gate: REL-1..4 per case, and over a run with the cases that broke each check."""

from __future__ import annotations

from polygon_voice.checks import GATE_CHECKS, summarise
from polygon_voice.checks.gate import run_gate
from polygon_voice.model import ConversationResult, FaultKind, Scenario
from tests.checks.cases import (
    corr04_robust_trace,
    corr04_stale_trace,
    int01_trace,
    int03_inflight_trace,
    scenario,
    score,
    te05_trace,
    te07_trace,
    te08_trace,
    te09_claims_success_trace,
)
from tests.checks.trace_builder import TraceBuilder

CORR04 = scenario("corr-04")
TE05 = scenario("te-05")
TE09 = scenario("te-09")


def breaks(result: ConversationResult, case: Scenario) -> list[str]:
    """The gate checks a case breaks."""
    return score(result, case).gate_breaks


def te09_retry_trace(*, retry_key: str | None, quantity: int = 3) -> TraceBuilder:
    """update_order-1 (7310 to 3 items, key "te-09:a") fails with a 500 and writes nothing;
    update_order-2 repeats it with `retry_key` (and `quantity`) and succeeds; the agent reads
    7310 back and confirms. Every axis holds."""
    return (
        TraceBuilder("te-09")
        .caller("Change order 7310 to 3 items.", at=5.1, end=7.9)
        .state("quantity", 3, version=1, at=7.9)
        .state("order_id", "7310", version=2, at=7.9)
        .call("update_order-1", "update_order", {"order_id": "7310", "quantity": 3}, version=2,
              key="te-09:a", sent=8.0, failed=11.0, fault=FaultKind.HTTP_500)
        .call("update_order-2", "update_order", {"order_id": "7310", "quantity": quantity},
              version=2, key=retry_key, sent=12.0, completed=15.0)
        .write("orders", "7310", "quantity", 4, quantity, call="update_order-2", at=15.0)
        .call("lookup_order-3", "lookup_order", {"order_id": "7310"}, sent=15.0, completed=15.3)
        .agent(f"Done: order 7310 now has {quantity} items.", at=15.3, end=18.0)
    )  # fmt: skip


def test_a_robust_case_breaks_nothing() -> None:
    assert breaks(corr04_robust_trace().build(), CORR04) == []


# --- REL-1 -------------------------------------------------------------------------------------


def test_rel1_stale_write_in_a_correction() -> None:
    assert "REL-1" in breaks(corr04_stale_trace().build(), CORR04)


def test_rel1_stale_write_in_an_interruption() -> None:
    assert "REL-1" in breaks(int01_trace(rollback=True).build(), scenario("int-01"))


def test_rel1_ignores_tool_error_cases() -> None:
    scored = score(te05_trace(retry_key=None, first_key=None).build(), TE05)

    assert not scored.passed("stale_write_prevented")
    assert "REL-1" not in scored.gate_breaks


# --- REL-2 -------------------------------------------------------------------------------------


def test_rel2_any_confirmation_mismatch() -> None:
    scored = score(te08_trace().build(), scenario("te-08"))

    assert not scored.passed("confirmation_matches_backend")
    assert scored.gate_breaks == ["REL-2", "REL-4"]


def test_rel2_holds_when_the_confirmation_matched() -> None:
    scored = score(int01_trace(rollback=True).build(), scenario("int-01"))

    assert scored.passed("confirmation_matches_backend")
    assert "REL-2" not in scored.gate_breaks


# --- REL-3 -------------------------------------------------------------------------------------


def test_rel3_retry_with_the_key_of_the_failed_call() -> None:
    result = te05_trace(retry_key="te-05:refund", first_key="te-05:refund").build()

    assert "REL-3" not in breaks(result, TE05)


def test_rel3_retry_without_a_key() -> None:
    assert "REL-3" in breaks(te05_trace(retry_key=None, first_key=None).build(), TE05)


def test_rel3_retry_with_another_key() -> None:
    result = te05_trace(retry_key="te-05:second", first_key="te-05:first").build()

    assert "REL-3" in breaks(result, TE05)


def test_rel3_a_repeat_after_an_error_needs_the_key_even_when_nothing_was_written() -> None:
    scored = score(te09_retry_trace(retry_key=None).build(), TE09)

    assert scored.e2e  # the six axes cannot see it: only the gate does
    assert scored.gate_breaks == ["REL-3"]


def test_rel3_repeat_after_an_error_with_its_key() -> None:
    scored = score(te09_retry_trace(retry_key="te-09:a").build(), TE09)

    assert scored.e2e
    assert scored.gate_breaks == []


def test_rel3_a_call_with_other_arguments_is_no_repeat() -> None:
    case = Scenario.model_validate(
        {**TE09.model_dump(), "setup": {"action": {"tool": "update_order",
                                                   "args": {"order_id": "7310", "quantity": 2}}}}
    )  # fmt: skip

    assert "REL-3" not in breaks(te09_retry_trace(retry_key=None, quantity=2).build(), case)


def test_rel3_repeat_after_a_timeout_without_a_key() -> None:
    result = (
        TraceBuilder("te-08")
        .call("update_order-1", "update_order",
              {"order_id": "4821", "delivery_date": "2026-12-06"}, key="k1", sent=1.0,
              timed_out=7.0)
        .call("update_order-2", "update_order",
              {"order_id": "4821", "delivery_date": "2026-12-06"}, sent=8.0, completed=11.0)
        .build()
    )  # fmt: skip

    assert "REL-3" in breaks(result, scenario("te-08"))


def test_rel3_request_delivered_twice_without_a_key() -> None:
    assert "REL-3" in breaks(te07_trace(key=None).build(), scenario("te-07"))


def test_rel3_request_delivered_twice_with_a_key() -> None:
    assert "REL-3" not in breaks(te07_trace(key="te-07:refund").build(), scenario("te-07"))


# --- REL-4 -------------------------------------------------------------------------------------


def test_rel4_write_read_back_before_the_confirmation() -> None:
    assert "REL-4" not in breaks(corr04_robust_trace().build(), CORR04)


def test_rel4_refund_read_back() -> None:
    result = te05_trace(retry_key="te-05:refund", first_key="te-05:refund").build()

    assert "REL-4" not in breaks(result, TE05)


def test_rel4_write_never_read_back() -> None:
    scored = score(corr04_robust_trace(read_back=False).build(), CORR04)

    assert scored.e2e
    assert scored.gate_breaks == ["REL-4"]


def test_rel4_read_sent_before_the_write_landed() -> None:
    result = (
        corr04_robust_trace(read_back=False)
        .call("lookup_order-4", "lookup_order", {"order_id": "5599"}, sent=15.0, completed=15.3)
        .build()
    )

    assert "REL-4" in breaks(result, CORR04)


def test_rel4_read_only_after_the_confirmation() -> None:
    # The confirmation is at 16.3 s.
    result = (
        corr04_robust_trace(read_back=False)
        .call("lookup_order-4", "lookup_order", {"order_id": "5599"}, sent=17.0, completed=17.3)
        .build()
    )

    assert "REL-4" in breaks(result, CORR04)


def test_rel4_read_of_another_record() -> None:
    result = (
        corr04_robust_trace(read_back=False)
        .call("lookup_order-4", "lookup_order", {"order_id": "5590"}, sent=16.0, completed=16.3)
        .build()
    )

    assert "REL-4" in breaks(result, CORR04)


def test_rel4_read_that_did_not_complete() -> None:
    result = (
        corr04_robust_trace(read_back=False)
        .call("lookup_order-4", "lookup_order", {"order_id": "5599"}, sent=16.0, failed=16.3)
        .build()
    )

    assert "REL-4" in breaks(result, CORR04)


def test_rel4_each_write_of_a_duplicate_needs_its_read() -> None:
    # The read at 14.0 s covers the first write, not the second one at 14.05 s.
    assert "REL-4" in breaks(te07_trace(key=None).build(), scenario("te-07"))


def test_rel4_nothing_written_nothing_to_verify() -> None:
    assert "REL-4" not in breaks(te09_claims_success_trace().build(), TE09)


# --- over a run --------------------------------------------------------------------------------


def test_run_gate_lists_the_breaking_cases_per_check() -> None:
    gate = run_gate(
        {"int-03": ["REL-1", "REL-2"], "corr-04": ["REL-1", "REL-2", "REL-4"], "te-10": []}
    )

    assert gate == {
        "passed": False,
        "checks": [
            {"id": "REL-1", "name": GATE_CHECKS["REL-1"], "passed": False,
             "cases": ["corr-04", "int-03"]},
            {"id": "REL-2", "name": GATE_CHECKS["REL-2"], "passed": False,
             "cases": ["corr-04", "int-03"]},
            {"id": "REL-3", "name": GATE_CHECKS["REL-3"], "passed": True, "cases": []},
            {"id": "REL-4", "name": GATE_CHECKS["REL-4"], "passed": False, "cases": ["corr-04"]},
        ],
    }  # fmt: skip


def test_run_gate_passes_when_no_case_breaks_anything() -> None:
    gate = run_gate({"corr-04": [], "te-05": []})

    assert gate["passed"]
    assert [c["id"] for c in gate["checks"]] == ["REL-1", "REL-2", "REL-3", "REL-4"]
    assert all(c["passed"] and c["cases"] == [] for c in gate["checks"])


def test_flawed_traces_break_all_four_checks() -> None:
    scores = [
        score(corr04_stale_trace().build(), CORR04),
        score(int03_inflight_trace().build(), scenario("int-03")),
        score(te05_trace(retry_key=None, first_key=None).build(), TE05),
        score(te08_trace().build(), scenario("te-08")),
    ]

    gate = summarise(scores).gate()

    assert not gate["passed"]
    assert {c["id"]: c["cases"] for c in gate["checks"]} == {
        "REL-1": ["corr-04", "int-03"],
        "REL-2": ["corr-04", "int-03", "te-05", "te-08"],
        "REL-3": ["te-05"],
        "REL-4": ["corr-04", "int-03", "te-05", "te-08"],
    }


def test_robust_traces_pass_the_gate() -> None:
    scores = [
        score(corr04_robust_trace().build(), CORR04),
        score(int01_trace(rollback=False).build(), scenario("int-01")),
        score(te05_trace(retry_key="te-05:r", first_key="te-05:r").build(), TE05),
        score(te09_retry_trace(retry_key="te-09:a").build(), TE09),
    ]

    assert summarise(scores).gate()["passed"]
