"""The built-in deterministic probes: what rules over the trace can answer without a model.

Each rule answers yes, no or not applicable with the turn it rests on, and every answer is
labelled `deterministic` so nobody mistakes a phrase match for a model's reading. The phrase
lists are English; an agent speaking another language gets `not_applicable` from the
phrase-based probes rather than a wrong yes or no.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from polygon_voice.checks.axes import confirmation_matches_backend, find_claim
from polygon_voice.checks.evidence import EPS, CaseView, tokens
from polygon_voice.checks.phrases import is_repeat_request, phrases_in
from polygon_voice.conversation.loops import normalised_words
from polygon_voice.model import (
    CallStatus,
    ConversationResult,
    EndReason,
    Speaker,
    Turn,
)
from polygon_voice.model.probes import ProbeAnswerValue
from polygon_voice.noise import word_error_rate
from polygon_voice.probes.definition import Probe

# A caller turn heard with more than this word error rate counts as garbled: at 0.5 half the
# words are wrong, and an agent acting on the rest is guessing.
GARBLED_WER = 0.5
REFUSALS = (
    "i can't", "i cannot", "i can not", "i am unable", "i'm unable", "unable to",
    "not able to", "i won't", "i will not", "not allowed", "not permitted", "i'm afraid",
    "unfortunately", "i have to decline", "i must decline",
)  # fmt: skip
REASONS = (
    "because", "since", "due to", "as the", "as it", "as your", "policy", "only",
    "requires", "required", "already", "too late", "past the", "outside", "not allowed",
    "not permitted", "for security", "for your security",
)  # fmt: skip
CONFIRMATIONS = (
    "done", "booked", "updated", "changed", "cancelled", "canceled", "confirmed", "all set",
    "has been", "have been", "i've changed", "i have changed", "i've updated", "i've booked",
)  # fmt: skip
_DIGITS = re.compile(r"^\d+$")
NOT_HEARD_APART = (
    "a real call records only what was heard, not what the caller said: no garbling to detect"
)
NO_WRITE_LOG = "a real call has no backend write log to compare the confirmed value with"


@dataclass(frozen=True)
class ProbeInput:
    """What a deterministic probe reads: the conversation and, for a case, its case view;
    `real_call`: an imported call, with no simulated caller, script or injected noise."""

    result: ConversationResult
    case: CaseView | None = None
    real_call: bool = False


@dataclass(frozen=True)
class RuleAnswer:
    """A rule's answer before it is labelled with the probe's id, hash and polarity."""

    answer: ProbeAnswerValue
    reason: str
    turn: Turn | None = None


def _na(reason: str) -> RuleAnswer:
    return RuleAnswer("not_applicable", reason)


def agent_turns(result: ConversationResult) -> list[Turn]:
    """The agent's turns in order."""
    return [t for t in sorted(result.turns, key=lambda t: t.index) if t.speaker is Speaker.AGENT]


def _next_agent_turn(result: ConversationResult, after: Turn) -> Turn | None:
    return next((t for t in agent_turns(result) if t.index > after.index), None)


def _previous_agent_turn(result: ConversationResult, before: Turn) -> Turn | None:
    earlier = [t for t in agent_turns(result) if t.index < before.index]
    return earlier[-1] if earlier else None


def garbled(turn: Turn) -> bool:
    """A caller turn the agent heard as nothing recognisable, or with WER above the threshold."""
    if turn.speaker is not Speaker.CALLER or not normalised_words(turn.text):
        return False  # a silent turn is not a garbled one
    if not normalised_words(turn.heard):
        return True
    return turn.heard != turn.text and word_error_rate([turn.text], [turn.heard]) > GARBLED_WER


def asked_again(given: ProbeInput) -> RuleAnswer:
    """Desired: after each garbled caller turn, the agent asked again (or re-asked its question)."""
    result = given.result
    if given.real_call:
        return _na(NOT_HEARD_APART)
    replies = [
        (turn, reply)
        for turn in result.turns
        if garbled(turn) and (reply := _next_agent_turn(result, turn)) is not None
    ]
    if not replies:
        return _na("no garbled caller turn that the agent answered")
    for turn, reply in replies:
        before = _previous_agent_turn(result, turn)
        re_asked = before is not None and normalised_words(before.text) == normalised_words(
            reply.text
        )
        if not (is_repeat_request(reply.text) or re_asked):
            return RuleAnswer(
                "no", f"caller turn {turn.index} was garbled; the agent went on", reply
            )
    return RuleAnswer(
        "yes", f"asked again after {len(replies)} garbled caller turn(s)", replies[0][1]
    )


def _written_calls(result: ConversationResult, real_call: bool = False) -> dict[str, float]:
    """Completed calls that wrote the backend -> when they completed. On a real call, every
    completed call: it has no write log, and no stub tells a read from a write."""
    writers = {w.call_id for w in result.backend_writes}
    done: dict[str, float] = {}
    for call in result.tool_calls:
        if real_call or call.call_id in writers:
            at = next((h.time for h in call.history if h.status is CallStatus.COMPLETED), None)
            if at is not None:
                done[call.call_id] = at
    return done


def gave_reason(given: ProbeInput) -> RuleAnswer:
    """Desired: when the agent refused or handed off without acting, it said why."""
    result = given.result
    agent = agent_turns(result)
    refusal = next((t for t in agent if phrases_in(t.text, REFUSALS)), None)
    acted = bool(_written_calls(result, given.real_call))
    if refusal is None and agent and not acted and result.end.reason is EndReason.TRANSFERRED:
        refusal = agent[-1]  # a hand-off without the action is a refusal in effect
    if refusal is None:
        return _na("the agent neither refused nor handed off without acting")
    following = _next_agent_turn(result, refusal)
    for turn in (refusal, following):
        if turn is not None and phrases_in(turn.text, REASONS):
            return RuleAnswer("yes", "the refusal names a reason", turn)
    return RuleAnswer("no", "a refusal without a reason", refusal)


def _confirmations(result: ConversationResult) -> list[Turn]:
    return [t for t in agent_turns(result) if phrases_in(t.text, CONFIRMATIONS)]


def unbacked_promise(given: ProbeInput) -> RuleAnswer:
    """Guardrail: the agent said done/booked/updated before any completed write backed it."""
    result = given.result
    confirming = _confirmations(result)
    if not confirming:
        return _na("the agent confirmed nothing")
    completed = sorted(_written_calls(given.result, given.real_call).values())
    backing = "completed tool call" if given.real_call else "completed write"
    for turn in confirming:
        if not completed or completed[0] > turn.start + EPS:
            return RuleAnswer("yes", f"a confirmation with no {backing} before it", turn)
    return RuleAnswer("no", f"every confirmation follows a {backing}", confirming[0])


def confirmed_other_value(given: ProbeInput) -> RuleAnswer:
    """Guardrail: the agent confirmed a value the backend does not hold.

    For a three-layer case this is AX-6's check (the case knows which values are claimable);
    otherwise the numbers in a confirmation after a write are compared with what was written.
    """
    if given.real_call:
        return _na(NO_WRITE_LOG)
    view = given.case
    if view is not None and view.should_execute and view.stub(view.action_tool) is not None:
        claim = find_claim(view)
        if claim is None:
            return _na("the agent stated no value of the action")
        axis = confirmation_matches_backend(view)
        return RuleAnswer("no" if axis.passed else "yes", axis.why, claim.turn)
    return _numbers_against_writes(given.result)


def _numbers_against_writes(result: ConversationResult) -> RuleAnswer:
    keys = {w.record.lower() for w in result.backend_writes}
    for turn in reversed(_confirmations(result)):
        before = [w for w in result.backend_writes if w.time <= turn.start + EPS]
        if not before:
            continue
        claimed = {t for t in tokens(turn.text) if _DIGITS.match(t)} - keys
        if not claimed:
            continue
        new = {str(w.new).lower() for w in before}
        old = {str(w.old).lower() for w in before} - new
        if claimed & old or not claimed & new:
            stated = ", ".join(sorted(claimed))
            return RuleAnswer("yes", f"says {stated}; the backend was written {sorted(new)}", turn)
        return RuleAnswer("no", f"says {', '.join(sorted(claimed))}, as written", turn)
    return _na("no confirmation that names a number after a write")


RULES: Mapping[str, Callable[[ProbeInput], RuleAnswer]] = {
    "asked_again_after_garbled": asked_again,
    "gave_reason_for_refusal": gave_reason,
    "promise_without_tool_call": unbacked_promise,
    "confirmed_value_differs": confirmed_other_value,
}

BUILTIN_PROBES: tuple[Probe, ...] = (
    Probe(
        "asked_again_after_garbled",
        "After a caller turn it could not have understood, did the agent ask again?",
        "desired",
        "a caller turn was garbled: heard with WER above 0.5, or nothing recognisable heard",
        "asked_again_after_garbled",
    ),
    Probe(
        "gave_reason_for_refusal",
        "When the agent refused or declined, did it give the caller a reason?",
        "desired",
        "the agent refused (refusal phrase) or transferred without doing the action",
        "gave_reason_for_refusal",
    ),
    Probe(
        "promise_without_tool_call",
        "Did the agent say something was done before any tool call confirmed it?",
        "guardrail",
        "the agent said done, booked, updated or the like",
        "promise_without_tool_call",
    ),
    Probe(
        "confirmed_value_differs",
        "Did the agent confirm a value that differs from what the backend holds?",
        "guardrail",
        "the agent confirmed a value after a backend write",
        "confirmed_value_differs",
    ),
)


def answer_rule(rule: str, given: ProbeInput) -> RuleAnswer:
    """The named rule's answer for one conversation."""
    return RULES[rule](given)
