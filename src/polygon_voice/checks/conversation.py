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

from polygon_voice.checks.phrases import is_repeat_request, phrases_in
from polygon_voice.model import CallStatus, ConversationResult, EndReason, Speaker, ToolCall
from polygon_voice.model.judgement import ConversationChecks, InvalidArgsCall, PhraseHit
from polygon_voice.noise import caller_wer

# An agent turn above this many words is "over-long" on the phone (~20 s at 2.5 words/s).
LONG_TURN_WORDS = 50
_OUTCOMES = (CallStatus.COMPLETED, CallStatus.FAILED)


def check_conversation(
    result: ConversationResult, forbidden: Sequence[str] = ()
) -> ConversationChecks:
    """The checks of one conversation; `forbidden` = the suite's and the scenario's phrases."""
    agent = [t for t in result.turns if t.speaker is Speaker.AGENT]
    caller = [t for t in result.turns if t.speaker is Speaker.CALLER]
    delays = response_delays(result)
    return ConversationChecks(
        forbidden_phrases=[
            PhraseHit(phrase=p, turn=t.index) for t in agent for p in phrases_in(t.text, forbidden)
        ],
        invalid_tool_args=[invalid_call(result, c) for c in result.tool_calls if not c.args_valid],
        loop_detected=result.end.reason is EndReason.LOOP_DETECTED,
        repeat_requests=sum(is_repeat_request(t.text) for t in agent),
        caller_repeat_requests=sum(is_repeat_request(t.text) for t in caller),
        turns=len(result.turns),
        agent_turns=len(agent),
        interrupted_agent_turns=sum(t.interrupted for t in agent),
        barge_ins=sum(t.barge_in for t in caller),
        caller_interrupted=caller_interruptions(result),
        long_agent_turns=sum(len(t.text.split()) > LONG_TURN_WORDS for t in agent),
        response_delay_mean=round(fmean(delays), 3) if delays else None,
        response_delay_max=round(max(delays), 3) if delays else None,
        wer=caller_wer(result),
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
    turns = sorted(result.turns, key=lambda t: t.index)
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
    turns = sorted(result.turns, key=lambda t: t.index)
    return sum(
        1
        for cur, nxt in pairwise(turns)
        if cur.speaker is Speaker.CALLER and nxt.speaker is Speaker.AGENT and nxt.start < cur.end
    )
