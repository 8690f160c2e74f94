"""What the conversation checks and the judge produce (stages: conversation_checks, judge)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CriterionStatus = Literal["scored", "missing", "unscored", "not_applicable"]
"""not_applicable (IMP-2): the criterion asks what the record cannot tell (a real call has no
simulated caller and no ground-truth facts); left out of the composite, never scored."""
Verdict = Literal["pass", "warn", "fail", "unscored"]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PhraseHit(_Record):
    """A forbidden phrase found in the agent's speech."""

    phrase: str
    turn: int


class InvalidArgsCall(_Record):
    """A tool call with arguments its schema refuses, and whether the caller heard about it."""

    call_id: str
    tool: str
    turn: int | None = Field(description="the first agent turn after its outcome, if any")
    answered: bool = Field(
        description="sent, completed or failed, and the agent spoke after it (GATE-3)"
    )


class ConversationChecks(_Record):
    """Deterministic facts about one conversation that the judge and the gates read."""

    stage: Literal["conversation_checks"] = "conversation_checks"
    forbidden_phrases: list[PhraseHit] = Field(default_factory=list)
    invalid_tool_args: list[InvalidArgsCall] = Field(default_factory=list)
    loop_detected: bool = False
    repeat_requests: int = Field(default=0, description="agent turns asking the caller to repeat")
    caller_repeat_requests: int = Field(default=0, description="caller turns asking the same")
    turns: int = 0
    agent_turns: int = 0
    interrupted_agent_turns: int = 0
    barge_ins: int = Field(default=0, description="caller turns that cut into the agent")
    caller_interrupted: int = Field(default=0, description="agent turns started over the caller")
    long_agent_turns: int = 0
    response_delay_mean: float | None = Field(
        default=None, description="virtual seconds, caller turn end to next agent turn start"
    )
    response_delay_max: float | None = None
    wer: float | None = None


class CriterionResult(_Record):
    """One criterion: its score (None unless scored), the evidence it rests on, and why."""

    score: float | None = Field(default=None, description="1-5; a median may end in .5")
    status: CriterionStatus
    evidence: str = ""
    turn: int | None = None
    reason: str = ""
    evidence_found: bool | None = Field(
        default=None,
        description="an LLM judge's quote found in the transcript; None when not checked",
    )


class Judgement(_Record):
    """The judge's result for one conversation under one rubric version (stage: judge)."""

    stage: Literal["judge"] = "judge"
    rubric_version: str
    judge: str = Field(description="which judge scored it: deterministic (RUB-8) or a model")
    repeats: int = 1
    criteria: dict[str, CriterionResult]
    composite: float | None = Field(description="0..100; None when nothing could be scored")
    partial: bool = False
    unscored: list[str] = Field(default_factory=list)
    verdict: Verdict
    gates_failed: list[str] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    # Added for the LLM judge; empty for the deterministic one, so older records still load.
    evidence_not_found: list[str] = Field(
        default_factory=list, description="criteria whose quoted evidence is not in the transcript"
    )
    errors: list[str] = Field(
        default_factory=list, description="model errors and unreadable answers, one per repeat"
    )
    # Added for real (imported) calls; empty otherwise, so older records still load.
    not_applicable: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "criterion -> why it does not apply to this call (left out of the composite like "
            "an unscored one, but not a judge's failure: not in `unscored`, not `partial`)"
        ),
    )
    prompt: list[dict[str, str]] | None = Field(
        default=None, description="the messages sent to an LLM judge (the same for every repeat)"
    )
    raw_answers: list[str | None] = Field(
        default_factory=list, description="each repeat's answer as received; None: no answer"
    )
