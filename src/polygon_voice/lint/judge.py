"""Tier 4: the judge model reviews the prompt and the cheaper tiers' candidates, per axis."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from polygon_voice.lint.model import AXES, Axis, Finding
from polygon_voice.lint.text import Prompt
from polygon_voice.llm import LLMSettings, make_client

W_JUDGE = 0.25
MAX_CANDIDATES = 200  # findings of tiers 1-3 handed to the judge at most

SYSTEM = """polygon-role: judge
You review the system prompt of a voice (phone) agent before it is tested. Report only real
problems, on five axes:
- overload: too many simultaneous constraints;
- diluted_attention: key rules lost in the middle of a long prompt, related rules scattered;
- contradiction: rules that exclude or weaken each other;
- ambiguity: wording with more than one reading;
- redundancy: the same rule said several ways.
Each finding quotes the prompt EXACTLY (a short contiguous piece, copied character for
character) and says in one sentence what is wrong. Candidates from cheaper checks are
listed; confirm those that are real, drop the others, add what they missed. A good prompt
may have no findings at all."""


class JudgeFinding(BaseModel):
    axis: Axis
    quote: str = Field(description="an exact, contiguous excerpt of the prompt")
    message: str


class JudgeAnswer(BaseModel):
    findings: list[JudgeFinding]


async def judge(prompt: Prompt, candidates: list[Finding], settings: LLMSettings) -> list[Finding]:
    """The judge's findings, placed where their quotes are; a quote not found is dropped."""
    # A long prompt can have thousands of candidates; the judge gets the weightiest ones (the
    # earlier among equals), in their order, so the request stays a size a model reads.
    ranked = sorted(range(len(candidates)), key=lambda k: (-candidates[k].weight, k))
    chosen = sorted(ranked[:MAX_CANDIDATES])
    listed = [
        {"axis": f.axis, "line": f.line, "text": prompt.text[f.start : f.end], "why": f.message}
        for f in (candidates[k] for k in chosen)
    ]
    user = f"PROMPT:\n{prompt.text}\n\nCANDIDATES:\n{json.dumps(listed, ensure_ascii=False)}"
    async with make_client(settings, "judge") as client:
        reply = await client.chat(
            [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            response_schema=JudgeAnswer,
            schema_name="prompt_lint",
        )
    parsed = reply.parsed
    answer = parsed if isinstance(parsed, JudgeAnswer) else JudgeAnswer.model_validate(parsed)
    findings = []
    for item in answer.findings:
        start = prompt.text.find(item.quote.strip()) if item.quote.strip() else -1
        if start < 0 or item.axis not in AXES:
            continue  # the judge misquoted: a place we cannot mark is no finding
        findings.append(
            prompt.finding(
                item.axis,
                start,
                start + len(item.quote.strip()),
                tier=4,
                kind="judge",
                weight=W_JUDGE,
                message=item.message,
            )
        )
    return findings
