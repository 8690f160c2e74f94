"""Root causes (FIX-1, FIX-2): why a case failed, derived from trace evidence, never typed in.

Detectors run in this order and the first that finds its evidence names the cause; a
failed case nothing explains is `unclassified`, with the axes that failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polygon_voice.checks.axes import (
    event_turn,
    find_claim,
    noise_changes,
    noise_responses,
    rechecked,
)
from polygon_voice.checks.evidence import EPS, CaseView, same
from polygon_voice.model import CallStatus, FaultKind, Layer, RootCause, ToolCall

Evidence = dict[str, Any]

LAYERS: dict[str, Layer | None] = {
    "stale_tool_args": Layer.EXECUTION,
    "unchecked_tool_result": Layer.EXECUTION,
    "inflight_call_not_cancelled": Layer.EXECUTION,
    "noise_taken_as_interruption": Layer.CONVERSATION,
    "unsafe_retry_after_backend_error": Layer.STATE,
    "confirmed_before_result": Layer.STATE,
    "missing_idempotency_key": Layer.STATE,
    "unclassified": None,
}
"""Every cause and the layer to repair (none known for `unclassified`); the order breaks
ties in the fix list, as in the published fix list of the reference run."""


def noise_taken_as_interruption(view: CaseView) -> Evidence | None:
    """A barge-in without words changed the agent's state."""
    for time, actions in noise_responses(view):
        changed = [
            {"field": a["field"], "value": a["value"], "version": a["version"]}
            for a in noise_changes(view, time, actions)
        ]
        if changed:
            return {"time": time, "state_updates": changed}
    return None


def unchecked_tool_result(view: CaseView) -> Evidence | None:
    """A wrong or empty record was used without reading it again."""
    for call in view.result.tool_calls:
        if call.fault in (FaultKind.WRONG_RECORD, FaultKind.EMPTY_RESULT) and not rechecked(
            view, call.call_id
        ):
            later = _first_action_after(view, call)
            return {
                "call_id": call.call_id,
                "tool": call.tool,
                "fault": call.fault.value,
                "result": call.result,
                "used_by": {"call_id": later.call_id, "args": later.args} if later else None,
            }
    return None


def inflight_call_not_cancelled(view: CaseView) -> Evidence | None:
    """A call already running when the caller changed the request was never cancelled."""
    event = event_turn(view)
    if event is None or view.scenario.setup.get("noise"):
        return None
    for call in _wrong_calls(view):
        sent = view.sent_at(call)
        if (
            sent is not None
            and sent <= event.start + EPS
            and call.status is not CallStatus.CANCELLED
        ):
            return {
                **_call_evidence(view, call),
                "event_turn": event.index,
                "event_at": event.start,
            }
    return None


def stale_tool_args(view: CaseView) -> Evidence | None:
    """A call went out with values the caller had already changed."""
    for call in _wrong_calls(view):
        return _call_evidence(view, call)
    return None


def unsafe_retry_after_backend_error(view: CaseView) -> Evidence | None:
    """A failed call whose write landed was retried without its idempotency key."""
    ops = view.write_ops()
    landed = {op.call_id for op in ops}
    calls = view.action_calls()
    for position, failed in enumerate(calls):
        if failed.status not in (CallStatus.FAILED, CallStatus.TIMED_OUT):
            continue
        if failed.call_id not in landed:
            continue
        for retry in calls[position + 1 :]:
            if retry.call_id in landed and (
                retry.idempotency_key is None or retry.idempotency_key != failed.idempotency_key
            ):
                return {
                    "failed_call": failed.call_id,
                    "error": failed.error.value if failed.error else None,
                    "retry_call": retry.call_id,
                    "retry_key": retry.idempotency_key,
                    "write_times": [op.time for op in ops],
                }
    return None


def missing_idempotency_key(view: CaseView) -> Evidence | None:
    """One request reached the backend twice, and nothing told the backend it was the same."""
    ops = view.write_ops()
    for call in view.action_calls():
        own = [op for op in ops if op.call_id == call.call_id]
        if len(own) > 1 and call.idempotency_key is None:
            return {"call_id": call.call_id, "write_times": [op.time for op in own]}
    return None


def confirmed_before_result(view: CaseView) -> Evidence | None:
    """The agent confirmed a value before any result said it was stored: the write landed
    only later, or never."""
    claim = find_claim(view)
    if claim is None:
        return None
    turn, claimed = claim
    later = [
        op.time
        for op in view.write_ops()
        if op.time > turn.start + EPS
        and any(same({w.field: w.new for w in op.writes}.get(k), v) for k, v in claimed.items())
    ]
    answered = any(
        h.status is CallStatus.COMPLETED and h.time <= turn.start + EPS
        for call in view.action_calls()
        for h in call.history
    )
    if later or not answered:
        return {
            "turn": turn.index,
            "said_at": turn.start,
            "write_at": later[0] if later else None,
            "claimed": claimed,
        }
    return None


DETECTORS: list[tuple[str, Callable[[CaseView], Evidence | None]]] = [
    ("noise_taken_as_interruption", noise_taken_as_interruption),
    ("unchecked_tool_result", unchecked_tool_result),
    ("inflight_call_not_cancelled", inflight_call_not_cancelled),
    ("stale_tool_args", stale_tool_args),
    ("unsafe_retry_after_backend_error", unsafe_retry_after_backend_error),
    ("missing_idempotency_key", missing_idempotency_key),
    ("confirmed_before_result", confirmed_before_result),
]


def root_cause(view: CaseView, failed_axes: list[str]) -> RootCause:
    """The first cause whose evidence is in the trace."""
    for cause, detect in DETECTORS:
        evidence = detect(view)
        if evidence is not None:
            return RootCause(cause=cause, layer=LAYERS[cause], evidence=evidence)
    return RootCause(
        cause="unclassified", layer=LAYERS["unclassified"], evidence={"failed_axes": failed_axes}
    )


def _wrong_calls(view: CaseView) -> list[ToolCall]:
    if not view.should_execute:
        return view.action_calls()
    return [
        c for c in view.action_calls() if not view.args_right(c) or not view.built_on_current(c)
    ]


def _call_evidence(view: CaseView, call: ToolCall) -> Evidence:
    return {
        "call_id": call.call_id,
        "sent_at": view.sent_at(call),
        "args": call.args,
        "wanted": view.wanted if view.should_execute else None,
        "built_on_version": call.state_version,
        "version_at_send": view.version_at_send(call),
    }


def _first_action_after(view: CaseView, faulty: ToolCall) -> ToolCall | None:
    calls = view.result.tool_calls
    position = calls.index(faulty)
    return next((c for c in calls[position + 1 :] if c.tool == view.action_tool), None)
