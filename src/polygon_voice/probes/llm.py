"""The LLM probe runner: one probe, one question, one structured answer (PROBE-3).

Each probe is its own call with its own prompt, apart from the judge's: asking for a 1-5
score and a yes/no fact in one call anchors both. The answer must quote its evidence; the
quote is kept as the model gave it, with the turn it names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from polygon_voice.llm import LLMClient, LLMError
from polygon_voice.model import ConversationResult
from polygon_voice.model.probes import ProbeAnswer
from polygon_voice.probes.definition import Probe

SYSTEM = """polygon-role: probe
You read the transcript of one phone call between a caller and a voice agent, with the
agent's tool calls, and answer ONE yes/no question about the agent's behaviour.
Answer "not_applicable" when the situation the question is about never arose in this call.
Quote the transcript EXACTLY as evidence (a short piece of one turn) and give that turn's
number. Do not grade the call as a whole; answer only the question."""


class ProbeReply(BaseModel):
    """The structured answer the model must return."""

    answer: Literal["yes", "no", "not_applicable"]
    evidence: str = Field(default="", description="an exact quote from one turn")
    turn: int | None = Field(default=None, description="the number of the quoted turn")


def transcript(result: ConversationResult) -> str:
    """The call as the model reads it: numbered turns, then the tool calls and their outcome."""
    lines = [f"[{t.index}] {t.speaker.value}: {t.text}" for t in result.turns]
    for call in result.tool_calls:
        lines.append(f"tool {call.tool}({call.args}) -> {call.status.value}")
    return "\n".join(lines)


def messages(probe: Probe, result: ConversationResult) -> list[dict[str, str]]:
    """The chat messages for one probe about one call."""
    applies = f"\nIt applies when: {probe.applies_when}" if probe.applies_when else ""
    user = f"TRANSCRIPT:\n{transcript(result)}\n\nQUESTION: {probe.question}{applies}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def ask_probe(client: LLMClient, probe: Probe, result: ConversationResult) -> ProbeAnswer:
    """The model's answer to one probe; a failed call is recorded, never counted (N/A)."""
    try:
        reply = await client.chat(
            messages(probe, result), response_schema=ProbeReply, schema_name="probe_answer"
        )
    except LLMError as exc:
        # Not a "no": a model that failed says nothing about the agent, so it leaves the
        # denominator like any not-applicable answer, with the reason kept.
        return _answer(probe, ProbeReply(answer="not_applicable"), f"unanswered: {exc}")
    parsed = reply.parsed
    answer = parsed if isinstance(parsed, ProbeReply) else ProbeReply.model_validate(parsed)
    return _answer(probe, answer, "")


def _answer(probe: Probe, reply: ProbeReply, reason: str) -> ProbeAnswer:
    return ProbeAnswer(
        id=probe.id,
        hash=probe.hash,
        polarity=probe.polarity,
        answer=reply.answer,
        source="llm",
        evidence=reply.evidence,
        turn=reply.turn,
        reason=reason,
    )
