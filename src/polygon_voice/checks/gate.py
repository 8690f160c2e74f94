"""The release gate for consequential actions (REL-1..4), per case and over a run."""

from __future__ import annotations

from typing import Any

from polygon_voice.checks.axes import find_claim
from polygon_voice.checks.evidence import EPS, CaseView
from polygon_voice.model import CallStatus, CaseCategory, CaseScore, ToolCall

GATE_CHECKS: dict[str, str] = {
    "REL-1": "no stale-write failures in the correction and interruption suites",
    "REL-2": "no mismatch between confirmation and backend",
    "REL-3": "idempotent tool retries",
    "REL-4": "critical actions verified against the backend after execution",
}


def gate_breaks(view: CaseView, score: CaseScore) -> list[str]:
    """The gate checks this case breaks."""
    breaks = []
    if view.scenario.category in (CaseCategory.CORRECTION, CaseCategory.INTERRUPTION) and not (
        score.passed("stale_write_prevented")
    ):
        breaks.append("REL-1")
    if not score.passed("confirmation_matches_backend"):
        breaks.append("REL-2")
    if not retries_idempotent(view):
        breaks.append("REL-3")
    if not writes_verified(view):
        breaks.append("REL-4")
    return breaks


def retries_idempotent(view: CaseView) -> bool:
    """Every repeated action request carried the key of the one it repeated."""
    calls = [
        c
        for c in view.result.tool_calls
        if c.tool == view.action_tool and c.status is not CallStatus.PREPARED
    ]
    for position, first in enumerate(calls):
        if first.status not in (CallStatus.FAILED, CallStatus.TIMED_OUT):
            continue
        for retry in calls[position + 1 :]:
            if retry.args == first.args and (
                retry.idempotency_key is None or retry.idempotency_key != first.idempotency_key
            ):
                return False
    duplicated = {op.call_id for op in view.write_ops()}
    return all(
        c.idempotency_key is not None or _ops(view, c) < 2 for c in calls if c.call_id in duplicated
    )


def writes_verified(view: CaseView) -> bool:
    """After each write, the agent read the written record back before it confirmed."""
    claim = find_claim(view)
    deadline = claim.time if claim else float("inf")
    for op in view.write_ops():
        if not any(
            _reads(view, read, op.collection, op.record, op.time, deadline)
            for read in view.result.tool_calls
        ):
            return False
    return True


def _reads(
    view: CaseView, call: ToolCall, collection: str, record: str, after: float, before: float
) -> bool:
    stub = view.stub(call.tool)
    if stub is None or stub.op != "get" or stub.collection != collection:
        return False
    if str(call.args.get(stub.key)) != record or call.status is not CallStatus.COMPLETED:
        return False
    done = next((h.time for h in call.history if h.status is CallStatus.COMPLETED), None)
    sent = view.sent_at(call)
    return sent is not None and done is not None and sent >= after - EPS and done <= before + EPS


def _ops(view: CaseView, call: ToolCall) -> int:
    return sum(1 for op in view.write_ops() if op.call_id == call.call_id)


def run_gate(breaks_by_case: dict[str, list[str]], exercised: int | None = None) -> dict[str, Any]:
    """The gate over a run: each check with the cases that broke it. Cases not exercised
    are not in `breaks_by_case`; a run in which no case was exercised (`exercised` 0)
    proves nothing and does not pass."""
    checks = [
        {
            "id": check,
            "name": name,
            "passed": not (broken := sorted(c for c, b in breaks_by_case.items() if check in b)),
            "cases": broken,
        }
        for check, name in GATE_CHECKS.items()
    ]
    proved = exercised is None or exercised > 0
    return {"passed": proved and all(c["passed"] for c in checks), "checks": checks}
