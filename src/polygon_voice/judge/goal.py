"""goal_achievement: how the call ended against what the caller wanted (see docs/judging.md)."""

from __future__ import annotations

from polygon_voice.judge.base import JudgeInput, RawScore
from polygon_voice.judge.evidence import same, scored
from polygon_voice.model import AXES, CallStatus, EndReason, Outcome

_ENDS = {
    EndReason.ERROR: (1, "the call ended in an error"),
    EndReason.LOOP_DETECTED: (1, "the call ended in a loop"),
    EndReason.TURN_LIMIT: (2, "the call ran out of turns"),
}


def goal_achievement(given: JudgeInput) -> RawScore:
    """Three-layer cases: end-to-end integrity; others: the end and the facts vs the writes."""
    result, last = given.result, given.facts.last_agent
    if given.case is not None:
        held = sum(given.case.passed(a) for a in AXES)
        if given.case.e2e:
            return scored(given, 5, last, "end-to-end task integrity holds (all six axes)")
        value = 3 if held >= 4 else 2 if held >= 2 else 1
        return scored(given, value, last, f"{held} of 6 three-layer axes hold")
    if result.end.reason in _ENDS:
        value, why = _ENDS[result.end.reason]
        return scored(given, value, last, why)
    wanted = given.persona.intended_outcome
    if result.end.reason is EndReason.TRANSFERRED:
        if wanted is Outcome.TRANSFER:
            return scored(given, 5, last, "transferred, as the caller wanted")
        return scored(given, 3, last, "handed off to a person instead of finishing")
    if wanted is not Outcome.SUCCESS:
        if result.backend_writes:
            return scored(given, 2, last, f"the caller wanted {wanted.value}, yet a change landed")
        return scored(given, 4, last, f"ended without a change, as a {wanted.value} call should")
    return _success(given, last)


def _success(given: JudgeInput, last: int | None) -> RawScore:
    matched, wrong = fact_check(given)
    if wrong:
        return scored(given, 2, last, f"the backend disagrees with the caller's facts: {wrong}")
    if matched:
        # The evidence is what the agent said once the write had landed: its confirmation.
        confirmed = given.facts.agent_after(given.result.backend_writes[-1].time)
        why = f"the change landed as the caller asked ({', '.join(matched)})"
        return scored(given, 5, confirmed or last, why)
    if any(c.status is CallStatus.COMPLETED for c in given.result.tool_calls):
        return scored(given, 4, last, "ended normally after a completed tool call, no write")
    return scored(given, 3, last, "ended normally, but nothing verifiable was done")


def fact_check(given: JudgeInput) -> tuple[list[str], list[str]]:
    """(facts the writes bear out, facts they contradict).

    A fact named like a written field must equal its last written value; a fact named like
    an argument of the call that wrote (`order_id`) must equal that argument, which catches
    a change to the wrong order. Facts that match neither are not evidence either way.
    """
    writes = given.result.backend_writes
    calls = {c.call_id: c for c in given.result.tool_calls}
    args = [calls[w.call_id].args for w in writes if w.call_id in calls]
    matched: list[str] = []
    wrong: list[str] = []
    for name, value in given.persona.facts.items():
        on_field = [w.new for w in writes if w.field == name]
        on_args = [a[name] for a in args if name in a]
        seen = on_field or on_args
        if seen:
            (matched if same(seen[-1], value) else wrong).append(name)
    return matched, wrong
