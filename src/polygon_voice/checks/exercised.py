"""Cases that did not play as written, or that no agent could win: the suite's problem.

Four shapes are read from the trace:

* the simulated caller failed (its model kept erroring: the engine notes `caller_failed`):
  nothing after that point was played, whatever the agent did;
* the simulated caller hung up before saying anything (the engine notes
  `caller_never_spoke`), e.g. a model that ends the call before a line of its own, or a
  script with no lines: the agent was never put to the test. A caller that says one word
  and hangs up did give the agent its chance, and so does a script's silence or noise
  (a test of its own): such calls are judged as played;
* a scripted barge-in whose point never came (the engine notes `script_unplayed` at the
  end of the call): the event the case is about never happened;
* a correction or a "no, don't" spoken only after the write of the old request had already
  landed: no agent can take back a write that happened before it heard the change.

Either marks the case *not exercised* with the reason; it is then no agent failure (no
failed axis is counted, no root cause, no gate break). A barge-in waiting for a tool the
agent never sent a call of is the exception: the event never came because the agent never
attempted what it was asked, so the case is scored as played (an agent that does nothing
must fail), and the reason is kept in its root cause's evidence (`script_unplayed`).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from polygon_voice.checks.axes import event_turn, setup_names
from polygon_voice.checks.evidence import EPS, CaseView, same
from polygon_voice.checks.phantom import phantom_claims
from polygon_voice.model import (
    BargeInStep,
    CallEnd,
    CallStatus,
    CaseCategory,
    ConversationResult,
    EndReason,
    InterruptPoint,
    Scenario,
    ToolSpec,
)

UNPLAYED_NOTE = "script_unplayed"
CALLER_FAILED_NOTE = "caller_failed"
NEVER_SPOKE_NOTE = "caller_never_spoke"
NEVER_SPOKE = "the caller hung up before saying anything"


def not_played(result: ConversationResult) -> str | None:
    """Why the call did not play at all (its caller failed, or hung up before saying
    anything); None when the caller took part. Such a call is *not exercised* under every
    rubric: the notes are newer than any verdict stored before them, so no stored verdict
    changes (RUB-6), and a judge is never asked about it."""
    failure = caller_failed(result)
    if failure is not None:
        return failure
    if any(entry.kind == NEVER_SPOKE_NOTE for entry in result.trace):
        return NEVER_SPOKE
    return None


def caller_failed(result: ConversationResult) -> str | None:
    """Why the simulated caller could not go on (its model failed), read from the engine's
    trace note `caller_failed`; None when the caller ended the call of its own accord.

    Such a call did not play: whatever the agent did until then answered a caller that
    vanished, so it is *not exercised* (never failed, never passed)."""
    for entry in result.trace:
        if entry.kind == CALLER_FAILED_NOTE:
            return f"the caller model failed: {entry.data.get('error', 'unknown error')}"
    return None


def unplayed_events(scenario: Scenario, result: ConversationResult) -> list[str]:
    """Reasons the scenario's script did not play as written (a barge-in whose point never
    came, ...), read from the trace note `script_unplayed` the engine records; [] when it
    played. A barge-in waiting for a tool the agent never sent a call of is left out: the
    event never came because the agent never attempted what it was asked (see
    `unplayed_by_agent`), which is the agent's failure, not the suite's."""
    del scenario  # the note carries the steps
    return [reason for reason, agents in _unfired(result) if not agents]


def unplayed_by_agent(result: ConversationResult) -> list[str]:
    """Barge-ins that never fired because the agent never sent a call of the tool they wait
    for (any tool, when none is named): what the agent left undone kept the script from
    playing."""
    return [reason for reason, agents in _unfired(result) if agents]


def _unfired(result: ConversationResult) -> list[tuple[str, bool]]:
    """(reason, whether the agent's own inaction kept it from firing) per unfired barge-in."""
    found: list[tuple[str, bool]] = []
    for entry in result.trace:
        if entry.kind != UNPLAYED_NOTE:
            continue
        steps = entry.data.get("barge_ins")
        for raw in steps if isinstance(steps, list) else []:
            try:
                step = BargeInStep.model_validate(raw)
            except ValidationError:
                found.append(("a scripted barge-in never fired", False))
                continue
            found.append((_unfired_reason(step, result), _never_attempted(step, result)))
    return found


def _never_attempted(step: BargeInStep, result: ConversationResult) -> bool:
    """No call of the tool the barge-in waits for (any tool, when none is named) was ever
    sent: the agent never attempted it, so its point could not come."""
    if step.at is InterruptPoint.MID_SPEECH:
        return False
    return not any(
        (step.tool is None or c.tool == step.tool)
        and any(h.status is CallStatus.SENT for h in c.history)
        for c in result.tool_calls
    )


def _unfired_reason(step: BargeInStep, result: ConversationResult) -> str:
    what = f"the barge-in {step.say!r}" if step.say else "the background noise"
    if step.tool is None:
        where = step.at.value
        why = _why_untimed(step, result)
    else:
        nth = f"call {step.on_call} to {step.tool}" if step.on_call else f"a {step.tool} call"
        where = f"{step.at.value} of {nth}"
        why = _why_tool_point(step, result)
    return f"{what} ({where}) never fired: {why}"


def _why_untimed(step: BargeInStep, result: ConversationResult) -> str:
    if step.at is InterruptPoint.MID_SPEECH:
        return "the agent did not speak again before the call ended"
    calls = len(result.tool_calls)
    return f"the agent made {calls} tool call(s) before the call ended"


def _why_tool_point(step: BargeInStep, result: ConversationResult) -> str:
    assert step.tool is not None
    calls = [c for c in result.tool_calls if c.tool == step.tool]
    if step.at is InterruptPoint.AFTER_TOOL_FIRED:
        sent = [c for c in calls if any(h.status is CallStatus.SENT for h in c.history)]
        count, verb = len(sent), "sent"
    else:
        count, verb = len(calls), "prepared"
    wanted = step.on_call or 1
    return f"the agent {verb} {count} {step.tool} call(s), the script waits for call {wanted}"


def unwinnable(view: CaseView) -> str | None:
    """Why no agent could pass the case as it played: the old request's write landed before
    the caller's change reached the agent. None when the case could be won."""
    category = view.scenario.category
    if category not in (CaseCategory.CORRECTION, CaseCategory.INTERRUPTION):
        return None
    if view.scenario.setup.get("noise"):
        return None
    event = event_turn(view)
    if event is None:
        return None
    # The agent hears the change when the caller's turn ends: a write that landed by then
    # happened before any agent could know it was unwanted.
    heard_at = event.end
    for op in view.write_ops():
        if op.time > heard_at + EPS or not _unwanted(view, op.call_id):
            continue
        written = {w.field: w.new for w in op.writes}
        return (
            f"the caller's change (turn {event.index}, heard at {heard_at:.2f}s) came after "
            f"{op.call_id} had already written {written} at {op.time:.2f}s: "
            "no agent can take back a write that landed before it heard the change"
        )
    return None


def _unwanted(view: CaseView, call_id: str) -> bool:
    """Whether the call carried the caller's request as it was before the change: the action
    itself before a "no, don't"; else the wanted arguments but for the corrected field."""
    call = next((c for c in view.result.tool_calls if c.call_id == call_id), None)
    if call is None or call.tool != view.action_tool:
        return False
    if not view.should_execute:
        return view.args_right(call)
    if set(call.args) != set(view.wanted):
        return False
    setup = view.scenario.setup
    differing = [k for k, v in view.wanted.items() if not same(call.args[k], v)]
    if len(differing) != 1 or not same(view.wanted[differing[0]], setup.get("corrected_value")):
        return False
    # The value the change replaced: the one the caller first gave (as the agent reported it).
    name = differing[0]
    before = [u.value for u in view.result.state_updates if u.field == name]
    if setup_names(setup.get("field"), name):
        before.append(setup.get("initial_value"))
    return any(same(call.args[name], old) for old in before)


# Calls that end in `error` through no fault of the agent (runner/run.py, runner/build.py):
# the harness could not set the call up, or had a bug of its own.
HARNESS_FAILURES = ("could not set up the call", "internal error in the engine")


def agent_broke(end: CallEnd) -> bool:
    """Whether the call ended in an error of the agent's making (raised, hung, misused a tool,
    could not be built), not of the harness's."""
    return end.reason is EndReason.ERROR and not end.message.startswith(HARNESS_FAILURES)


def agent_at_fault(result: ConversationResult, tools: Mapping[str, ToolSpec]) -> str | None:
    """Why a call whose script did not play is the agent's failure all the same: it broke the
    call, looped, or claimed a change nothing had made — before the event could come. The
    event not firing then does not excuse it. None when nothing of the sort happened."""
    if agent_broke(result.end):
        return f"the call ended in an agent error ({result.end.message})"
    if result.end.reason is EndReason.LOOP_DETECTED:
        return "the agent looped until the call was ended"
    phantom = phantom_claims(result, tools)
    if phantom:
        return (
            f"the agent said the change was made in turn {phantom[0].index}, with nothing written"
        )
    return None
