"""Deterministic checks of any conversation (stage: conversation_checks).

Separate from the three-layer checks (`score.py`): these read only the trace and the
forbidden phrases, so every conversation gets them, case or not. The judge and the hard
gates (GATE-1, GATE-3) read them; they are stored on their own so a later rejudge reads
the same facts instead of recomputing them.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from statistics import fmean

from polygon_voice.checks.facts import LONG_TURN_WORDS, CallFacts
from polygon_voice.checks.phrases import phrases_in
from polygon_voice.model import CallStatus, ConversationResult, EndReason, Speaker, ToolCall, Turn
from polygon_voice.model.judgement import ConversationChecks, InvalidArgsCall, PhraseHit
from polygon_voice.noise.wer import turns_wer

_OUTCOMES = (CallStatus.COMPLETED, CallStatus.FAILED)


def check_conversation(
    result: ConversationResult, forbidden: Sequence[str] = (), facts: CallFacts | None = None
) -> ConversationChecks:
    """The checks of one conversation; `forbidden` = the suite's and the scenario's phrases;
    `facts`: the call's turns as already read (checks/facts.py), shared with the judge."""
    if facts is None or not facts.belongs_to(result):
        facts = CallFacts(result)
    agent, caller = facts.agent, facts.caller
    delays, talked_over = _replies(facts.ordered)
    hits = (
        [PhraseHit(phrase=p, turn=t.index) for t in agent for p in phrases_in(t.text, forbidden)]
        if forbidden
        else []
    )
    return ConversationChecks(
        forbidden_phrases=hits,
        invalid_tool_args=[invalid_call(result, c) for c in result.tool_calls if not c.args_valid],
        loop_detected=result.end.reason is EndReason.LOOP_DETECTED,
        repeat_requests=sum(facts.agent_asks),
        caller_repeat_requests=sum(facts.caller_asks),
        turns=len(result.turns),
        agent_turns=len(agent),
        interrupted_agent_turns=sum(t.interrupted for t in agent),
        barge_ins=sum(t.barge_in for t in caller),
        caller_interrupted=talked_over,
        long_agent_turns=sum(n > LONG_TURN_WORDS for n in facts.agent_words),
        response_delay_mean=round(fmean(delays), 3) if delays else None,
        response_delay_max=round(max(delays), 3) if delays else None,
        wer=turns_wer(caller),  # caller_wer(result), of the caller turns already read
    )


def invalid_call(result: ConversationResult, call: ToolCall) -> InvalidArgsCall:
    """An invalid-arguments call, and whether it was answered to the caller (GATE-3).

    Answered: the call was sent, reached an outcome (completed or failed), and the agent
    spoke after that outcome: whatever it said was built on a call it should not have made.
    """
    sent = any(h.status is CallStatus.SENT for h in call.history)
    outcome = next((h.time for h in call.history if h.status in _OUTCOMES), None)
    turn = None
    if sent and outcome is not None:
        after = [t for t in result.turns if t.speaker is Speaker.AGENT and t.start >= outcome]
        turn = after[0].index if after else None
    return InvalidArgsCall(
        call_id=call.call_id, tool=call.tool, turn=turn, answered=turn is not None
    )


def response_delays(result: ConversationResult) -> list[float]:
    """Virtual seconds from each caller turn's end to the agent turn right after it."""
    return _response_delays(sorted(result.turns, key=lambda t: t.index))


def _replies(turns: Sequence[Turn]) -> tuple[list[float], int]:
    """`response_delays` and `caller_interruptions` of turns in order, in one pass."""
    delays: list[float] = []
    talked_over = 0
    caller, agent = Speaker.CALLER, Speaker.AGENT
    for cur, nxt in pairwise(turns):
        if cur.speaker is caller and nxt.speaker is agent:
            delays.append(max(0.0, nxt.start - cur.end))
            talked_over += nxt.start < cur.end
    return delays, talked_over


def _response_delays(turns: Sequence[Turn]) -> list[float]:
    return [
        max(0.0, nxt.start - cur.end)
        for cur, nxt in pairwise(turns)
        if cur.speaker is Speaker.CALLER and nxt.speaker is Speaker.AGENT
    ]


def caller_interruptions(result: ConversationResult) -> int:
    """Agent turns that started while the caller was still speaking.

    The engine lets only the caller barge in, so this is 0 for simulated calls; imported
    real calls (with overlapping speech) can have more.
    """
    return _caller_interruptions(sorted(result.turns, key=lambda t: t.index))


def _caller_interruptions(turns: Sequence[Turn]) -> int:
    return sum(
        1
        for cur, nxt in pairwise(turns)
        if cur.speaker is Speaker.CALLER and nxt.speaker is Speaker.AGENT and nxt.start < cur.end
    )
