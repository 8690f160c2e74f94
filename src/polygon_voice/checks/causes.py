"""Root causes (FIX-1, FIX-2): why a case failed, derived from trace evidence, never typed in.

Detectors run in this order and the first that finds its evidence names the cause; a
failed case nothing explains is `unclassified`, with the axes that failed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polygon_voice.checks.axes import (
    done_without_call,
    event_turn,
    find_claim,
    noise_changes,
    noise_responses,
    rechecked,
    setup_names,
)
from polygon_voice.checks.evidence import EPS, CaseView, WriteOp, same
from polygon_voice.checks.exercised import agent_broke, unplayed_by_agent
from polygon_voice.model import CallStatus, EndReason, FaultKind, Layer, RootCause, ToolCall

Evidence = dict[str, Any]

LAYERS: dict[str, Layer | None] = {
    "stale_tool_args": Layer.EXECUTION,
    "unchecked_tool_result": Layer.EXECUTION,
    "inflight_call_not_cancelled": Layer.EXECUTION,
    "noise_taken_as_interruption": Layer.CONVERSATION,
    "unsafe_retry_after_backend_error": Layer.STATE,
    "confirmed_before_result": Layer.STATE,
    "missing_idempotency_key": Layer.STATE,
    "wrong_field_or_record": Layer.EXECUTION,
    "success_claimed_without_write": Layer.STATE,
    "request_dropped": Layer.CONVERSATION,
    "call_broken_off": Layer.CONVERSATION,
    "unclassified": None,
}
"""Every cause and the layer to repair (none known for `unclassified`); the order breaks
ties in the fix list: the published fix list of the reference run, then the causes added
since."""


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
        if sent is not None and sent <= event.start + EPS and not _cancelled_in_time(view, call):
            return {
                **_call_evidence(view, call),
                "event_turn": event.index,
                "event_at": event.start,
            }
    return None


def stale_tool_args(view: CaseView) -> Evidence | None:
    """A call went out with values the caller had already changed (or built on an older
    state version than the one current when it was sent)."""
    for call in _wrong_calls(view):
        if not view.should_execute or _stale(view, call):
            return _call_evidence(view, call)
    return None


def wrong_field_or_record(view: CaseView) -> Evidence | None:
    """A call built on the current version put a value into another field or record than
    the wanted one: no value in it is one the caller had given up, so it is not stale."""
    for call in _wrong_calls(view):
        return {
            **_call_evidence(view, call),
            "wrong_fields": _field_diff(view, call),
            "written": [
                {"collection": op.collection, "record": op.record,
                 "fields": {w.field: w.new for w in op.writes}, "time": op.time}
                for op in view.write_ops() if op.call_id == call.call_id
            ],
        }  # fmt: skip
    return None


def unsafe_retry_after_backend_error(view: CaseView) -> Evidence | None:
    """A failed call whose write landed was retried without its idempotency key, by an agent
    that uses keys (the retry dropped or changed the key; with none ever, the key is
    missing)."""
    for failed, retry in _unsafe_retries(view):
        if failed.idempotency_key is not None or retry.idempotency_key is not None:
            return {
                "failed_call": failed.call_id,
                "error": failed.error.value if failed.error else None,
                "failed_key": failed.idempotency_key,
                "retry_call": retry.call_id,
                "retry_key": retry.idempotency_key,
                "write_times": [op.time for op in view.write_ops()],
            }
    return None


def missing_idempotency_key(view: CaseView) -> Evidence | None:
    """One request reached the backend twice (delivered twice, or retried after an error
    that had written), and no attempt ever carried an idempotency key."""
    ops = view.write_ops()
    for call in view.action_calls():
        own = [op for op in ops if op.call_id == call.call_id]
        if len(own) > 1 and call.idempotency_key is None:
            return {
                "call_id": call.call_id,
                "retry_call": None,
                "write_times": [op.time for op in own],
            }
    for first, again in _repeated_requests(view):
        return {
            "call_id": first.call_id,
            "retry_call": again.call_id,
            "write_times": [op.time for op in ops if op.call_id in (first.call_id, again.call_id)],
        }
    for failed, retry in _unsafe_retries(view):
        if failed.idempotency_key is None and retry.idempotency_key is None:
            return {
                "call_id": failed.call_id,
                "retry_call": retry.call_id,
                "write_times": [
                    op.time for op in ops if op.call_id in (failed.call_id, retry.call_id)
                ],
            }
    return None


def _repeated_requests(view: CaseView) -> list[tuple[ToolCall, ToolCall]]:
    """(a call, a later one with the same arguments) that both wrote, neither with a key: the
    agent sent one request twice without anything telling the backend it was the same."""
    landed = {op.call_id for op in view.write_ops()}
    calls = [c for c in view.action_calls() if c.call_id in landed and c.idempotency_key is None]
    return [
        (first, again)
        for position, first in enumerate(calls)
        for again in calls[position + 1 :]
        if again.args == first.args and first.status is CallStatus.COMPLETED
    ]


def _unsafe_retries(view: CaseView) -> list[tuple[ToolCall, ToolCall]]:
    """(failed call whose write landed, a later call that wrote again without its key)."""
    landed = {op.call_id for op in view.write_ops()}
    calls = view.action_calls()
    pairs = []
    for position, failed in enumerate(calls):
        if failed.status not in (CallStatus.FAILED, CallStatus.TIMED_OUT):
            continue
        if failed.call_id not in landed:
            continue
        for retry in calls[position + 1 :]:
            if retry.call_id in landed and (
                retry.idempotency_key is None or retry.idempotency_key != failed.idempotency_key
            ):
                pairs.append((failed, retry))
    return pairs


def success_claimed_without_write(view: CaseView) -> Evidence | None:
    """The agent said the change was made, but no write of the action landed at all (no call
    went out, or none of them wrote)."""
    # A call-off that never came because the agent never acted leaves the request standing.
    asked = view.should_execute or bool(unplayed_by_agent(view.result))
    if not asked or _action_writes(view):
        return None
    claim = find_claim(view) or done_without_call(view)
    if claim is None or not claim.done or _awaited(view, claim.time):
        return None  # said while the outcome was unknown: confirmed before the result
    return {
        "turn": claim.turn.index,
        "said_at": claim.time,
        "said": claim.text,
        "claimed": claim.claimed,
        "calls": {c.call_id: c.status.value for c in view.result.tool_calls
                  if c.tool == view.action_tool},
    }  # fmt: skip


def call_broken_off(view: CaseView) -> Evidence | None:
    """The agent broke the call off before the request was done: its own error (it raised,
    hung, misused a tool), a loop, or running out of turns."""
    end = view.result.end
    broken = agent_broke(end) or end.reason in (EndReason.LOOP_DETECTED, EndReason.TURN_LIMIT)
    if not broken:
        return None
    agent = view.agent_turns()
    return {
        "end_reason": end.reason.value,
        "message": end.message,
        "ended_at": end.time,
        "last_agent_turn": agent[-1].index if agent else None,
        "action_writes": len(_action_writes(view)),
    }


def request_dropped(view: CaseView) -> Evidence | None:
    """The request was dropped without a word of success: no call of the action took effect
    (none sent, or every one cancelled or failed before it wrote), and the agent never said
    the change was made."""
    # A call-off that never came because the agent never acted still leaves the request
    # itself dropped.
    asked = view.should_execute or bool(unplayed_by_agent(view.result))
    if not asked or view.action_calls() or _action_writes(view):
        return None
    claim = find_claim(view) or done_without_call(view)
    if claim is not None and claim.done:
        return None
    tried = [c for c in view.result.tool_calls if c.tool == view.action_tool]
    agent = view.agent_turns()
    last = agent[-1] if agent else None
    return {
        "request_turn": _request_turn(view),
        "calls": {c.call_id: c.status.value for c in tried},
        "noise_at": [t for t, _ in noise_responses(view)],
        "last_agent_turn": last.index if last else None,
        "last_said": last.text if last else None,
        "end_reason": view.result.end.reason.value,
        "ended_at": view.result.end.time,
    }


def confirmed_before_result(view: CaseView) -> Evidence | None:
    """The agent confirmed a value before any result said it was stored: the write landed
    only later, or never."""
    claim = find_claim(view)
    if claim is None:
        return None
    later = [
        op.time
        for op in view.write_ops()
        if op.time > claim.time + EPS
        and any(
            same({w.field: w.new for w in op.writes}.get(k), v) for k, v in claim.claimed.items()
        )
    ]
    answered = any(
        h.status is CallStatus.COMPLETED and h.time <= claim.time + EPS
        for call in view.action_calls()
        for h in call.history
    )
    if later or not answered:
        return {
            "turn": claim.turn.index,
            "said_at": claim.time,
            "write_at": later[0] if later else None,
            "claimed": claim.claimed,
        }
    return None


DETECTORS: list[tuple[str, Callable[[CaseView], Evidence | None]]] = [
    ("noise_taken_as_interruption", noise_taken_as_interruption),
    ("unchecked_tool_result", unchecked_tool_result),
    ("inflight_call_not_cancelled", inflight_call_not_cancelled),
    ("stale_tool_args", stale_tool_args),
    ("wrong_field_or_record", wrong_field_or_record),
    ("unsafe_retry_after_backend_error", unsafe_retry_after_backend_error),
    ("missing_idempotency_key", missing_idempotency_key),
    ("call_broken_off", call_broken_off),
    ("success_claimed_without_write", success_claimed_without_write),
    ("confirmed_before_result", confirmed_before_result),
    ("request_dropped", request_dropped),
]


def root_cause(view: CaseView, failed_axes: list[str]) -> RootCause:
    """The first cause whose evidence is in the trace; barge-ins the agent's inaction kept
    from firing are named in the evidence (`script_unplayed`)."""
    unplayed = unplayed_by_agent(view.result)
    extra: Evidence = {"script_unplayed": unplayed} if unplayed else {}
    for cause, detect in DETECTORS:
        evidence = detect(view)
        if evidence is not None:
            return RootCause(cause=cause, layer=LAYERS[cause], evidence={**evidence, **extra})
    return RootCause(
        cause="unclassified",
        layer=LAYERS["unclassified"],
        evidence={"failed_axes": failed_axes, **extra},
    )


def _wrong_calls(view: CaseView) -> list[ToolCall]:
    if not view.should_execute:
        return view.action_calls()
    return [
        c for c in view.action_calls() if not view.args_right(c) or not view.built_on_current(c)
    ]


def _cancelled_in_time(view: CaseView, call: ToolCall) -> bool:
    """Cancelled before anything of it was written (a cancel after its write is too late)."""
    cancelled = next((h.time for h in call.history if h.status is CallStatus.CANCELLED), None)
    if cancelled is None:
        return False
    return not any(op.call_id == call.call_id and op.time <= cancelled for op in view.write_ops())


def _stale(view: CaseView, call: ToolCall) -> bool:
    """Built from state the caller had already changed: on an older version than the one
    current when it was sent, or built before the caller's change reached the agent and
    sent after it. A call that names no version is stale, too, when it carries a value the
    caller had given up. (Built after the change, on the current version, and still wrong:
    the value went to the wrong field or record.)"""
    if not view.built_on_current(call):
        return True
    if _built_before_the_change(view, call):
        return True
    if call.state_version is not None and view.version_at_send(call) is not None:
        return False
    return _carries_given_up_value(view, call)


def _built_before_the_change(view: CaseView, call: ToolCall) -> bool:
    event = event_turn(view)
    if event is None or view.scenario.setup.get("noise"):
        return False
    prepared = next((h.time for h in call.history if h.status is CallStatus.PREPARED), None)
    sent = view.sent_at(call)
    heard = event.end
    return prepared is not None and sent is not None and prepared < heard - EPS <= sent


def _carries_given_up_value(view: CaseView, call: ToolCall) -> bool:
    """Every wrong value in the call is one the agent's state held for that field before it
    was sent, or the value the correction replaced."""
    sent = view.sent_at(call)
    until = sent if sent is not None else float("inf")
    wrong = {k: v for k, v in call.args.items() if k in view.wanted and not same(v, view.wanted[k])}
    if not wrong or set(call.args) != set(view.wanted):
        return False
    setup = view.scenario.setup
    for name, value in wrong.items():
        earlier = [u.value for u in view.result.state_updates
                   if u.field == name and u.time <= until + EPS]  # fmt: skip
        if setup_names(setup.get("field"), name):
            earlier.append(setup.get("initial_value"))
        if not any(same(value, old) for old in earlier):
            return False
    return True


def _field_diff(view: CaseView, call: ToolCall) -> dict[str, dict[str, Any]]:
    names = sorted(set(call.args) | set(view.wanted))
    return {
        name: {"sent": call.args.get(name), "wanted": view.wanted.get(name)}
        for name in names
        if not same(call.args.get(name), view.wanted.get(name))
    }


def _action_writes(view: CaseView) -> list[WriteOp]:
    stub = view.stub(view.action_tool)
    collection = stub.collection if stub is not None else None
    tried = {c.call_id for c in view.result.tool_calls if c.tool == view.action_tool}
    return [op for op in view.write_ops() if op.call_id in tried or op.collection == collection]


def _awaited(view: CaseView, moment: float) -> bool:
    """Whether a call of the action was sent and had no answer by `moment` (still running,
    or timed out: a timeout leaves the outcome unknown)."""
    answers = (CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.CANCELLED)
    for call in view.result.tool_calls:
        sent = view.sent_at(call)
        if call.tool != view.action_tool or sent is None or sent > moment + EPS:
            continue
        if not any(h.status in answers and h.time <= moment + EPS for h in call.history):
            return True
    return False


def _request_turn(view: CaseView) -> int | None:
    callers = view.caller_turns()
    return callers[0].index if callers else None


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
