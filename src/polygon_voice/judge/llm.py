"""The LLM judge (RUB-1, RUB-7): a model scores each criterion 1-5 and quotes its evidence.

It reads the whole transcript (what was said and what was heard), the persona's goal and
ground-truth facts and the tool-call trace, and answers in a JSON schema at the role's
temperature (zero by default, see llm/config.py). What the model returns is passed on raw:
`read_score` and `combine_repeats` decide what is readable (RUB-3, RUB-4), so an answer that
breaks the schema is read criterion by criterion rather than thrown away. Each quote is
looked up in the transcript; one that is not there is flagged, never silently trusted.
A model error never raises: the run becomes an answer with every criterion unreadable.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from polygon_voice.judge.base import JudgeInput, JudgeRun, RawScore
from polygon_voice.judge.composite import NOT_APPLICABLE
from polygon_voice.judge.rubric import Criterion, PromotedProbe, Rubric
from polygon_voice.llm import LLMClient, LLMError, LLMFormatError
from polygon_voice.model import ConversationResult, Speaker
from polygon_voice.seeding import derive_seed

# Quotation marks and dots a model may wrap a quote in (escaped: some look like backticks).
_QUOTE_EDGES = " \t\n\"'\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb\u2026."

SYSTEM = """You are a strict, fair judge of phone calls between a caller and a voice AI agent.
You are given the transcript, the caller's ground truth (goal, intended outcome, facts) and
the agent's tool calls. Score each criterion from 1 (very poor) to 5 (excellent), judging
only what the transcript and the trace show. For each criterion quote, word for word, the
transcript passage the score rests on (a few words from one turn, copied exactly), and give
a one-line reason. Answer only with JSON: {"criteria": {"<criterion id>": {"score": <1-5>,
"evidence": "<quote>", "reason": "<why>"}, ...}} with every criterion listed below.

Criteria:
"""

SYSTEM_REAL = """You are a strict, fair judge of phone calls between a caller and a voice AI agent.
This is a REAL call, imported from a call log: there is no simulated caller, so no ground
truth of the caller's goal or facts is given; judge the goal from what the caller asked in
the transcript. You are given the transcript and the agent's tool calls. Score each
criterion from 1 (very poor) to 5 (excellent), judging only what the transcript and the
trace show. For each criterion quote, word for word, the transcript passage the score rests
on (a few words from one turn, copied exactly), and give a one-line reason. Answer only with
JSON: {"criteria": {"<criterion id>": {"score": <1-5>, "evidence": "<quote>", "reason":
"<why>"}, ...}} with every criterion listed below.

Criteria:
"""
NOT_FOR_REAL_CALLS = {"factual_accuracy": "a real call has no ground-truth facts"}
"""Criteria not sent to the model for a real call (IMP-2): nothing to hold its answer to."""

# Only added when the rubric has promoted probes, so other rubrics' prompts stay as they were.
PROBE_RULES = """

Criteria given as a yes/no QUESTION (promoted behaviour probes) take, instead of a score,
{"answer": "yes" | "no" | "not_applicable", "evidence": "<quote>", "reason": "<why>"};
answer "not_applicable" when the situation the question is about never arose in this call."""
GATE_RULES = """

Also answer each of these yes/no questions in "gates": {"<id>": {"answer": "yes" | "no" |
"not_applicable", "evidence": "<quote>", "reason": "<why>"}, ...}:
"""
ANSWERS = ["yes", "no", "not_applicable"]


class LLMJudge:
    """Scores a conversation with a model through the `judge` role's client."""

    name = "llm"

    def __init__(self, client: LLMClient) -> None:
        self.client = client

    async def run(self, given: JudgeInput, rubric: Rubric, repeat: int) -> JudgeRun:
        """One repeat; its seed depends on the repeat, so k repeats are k requests (and k
        cache entries) rather than one cached answer returned k times."""
        prompt = judge_prompt(given, rubric)
        seed = derive_seed(given.result.seed, given.result.id, "llm-judge", repeat) % 2**31
        asked = asked_rubric(given, rubric)
        try:
            reply = await self.client.chat(
                prompt, response_schema=answer_schema(asked), schema_name="judgement", seed=seed
            )
        except LLMFormatError as exc:
            # Not the schema (a score of 6, a missing criterion) or not JSON: read what can be.
            read = read_answer(exc.raw, asked, given.result, given.real_call)
            scores = _with_not_applicable(given, read)
            gates = read_gate_answers(exc.raw, rubric)
            return JudgeRun(scores, raw=exc.raw, error=str(exc), prompt=prompt, gate_answers=gates)
        except LLMError as exc:
            # The endpoint kept failing: nothing was said, so nothing can be scored (RUB-4).
            unread = _with_not_applicable(given, _unreadable(asked, f"judge model error: {exc}"))
            return JudgeRun(unread, raw=None, error=str(exc), prompt=prompt)
        read = read_answer(reply.text, asked, given.result, given.real_call)
        scores = _with_not_applicable(given, read)
        gates = read_gate_answers(reply.text, rubric)
        return JudgeRun(scores, raw=reply.text, prompt=prompt, gate_answers=gates)

    async def aclose(self) -> None:
        """Close the client's connections (they belong to the event loop that opened them)."""
        await self.client.aclose()


def asked_rubric(given: JudgeInput, rubric: Rubric) -> Rubric:
    """The rubric as the model is asked it: for a real call, without the criteria that do
    not apply to one (they are left out of the composite as not applicable)."""
    if not given.real_call:
        return rubric
    kept = tuple(c for c in rubric.criteria if c.id not in NOT_FOR_REAL_CALLS)
    return replace(rubric, criteria=kept)


def _with_not_applicable(given: JudgeInput, scores: dict[str, RawScore]) -> dict[str, RawScore]:
    if not given.real_call:
        return scores
    for cid, why in NOT_FOR_REAL_CALLS.items():
        scores[cid] = RawScore(NOT_APPLICABLE, reason=f"not applicable: {why}")
    return scores


def judge_prompt(given: JudgeInput, rubric: Rubric) -> list[dict[str, str]]:
    """The messages sent: the rubric in the system message, the call in the user message."""
    system = SYSTEM_REAL if given.real_call else SYSTEM
    criteria = "\n".join(_criterion_line(c) for c in asked_rubric(given, rubric).criteria)
    if rubric.promoted_criteria:
        criteria += PROBE_RULES
    asked = _asked_gates(rubric)
    if asked:
        criteria += GATE_RULES + "\n".join(f"- {p.id}: QUESTION: {p.question}" for p in asked)
    return [
        {"role": "system", "content": system + criteria},
        {"role": "user", "content": call_text(given)},
    ]


def _criterion_line(criterion: Criterion) -> str:
    if criterion.probe is not None:
        probe = criterion.probe
        applies = f" (it applies when: {probe.applies_when})" if probe.applies_when else ""
        return f"- {criterion.id} (weight {criterion.weight}): QUESTION: {probe.question}{applies}"
    text = criterion.description or criterion.id.replace("_", " ")
    return f"- {criterion.id} (weight {criterion.weight}): {text}"


def _asked_gates(rubric: Rubric) -> list[PromotedProbe]:
    # A promoted gate with a rule is answered by the rule (judge/promoted.py), not the model.
    return [p for p in rubric.probe_gates if p.rule is None]


def call_text(given: JudgeInput) -> str:
    """The conversation as the judge reads it: ground truth, transcript, tool trace."""
    persona, result = given.persona, given.result
    if given.real_call:
        lines = ["## A real call", REAL_CALL_NOTE, "", "## Transcript"]
    else:
        truth = {
            "goal": persona.goal,
            "intended_outcome": persona.intended_outcome.value,
            "facts": dict(persona.facts),
        }
        lines = ["## Caller's ground truth", _json(truth), "", "## Transcript"]
    for turn in result.turns:
        lines.append(f"turn {turn.index} ({turn.speaker.value}) said: {turn.text}")
        if turn.heard != turn.text:
            # The agent acts on what it heard; a mishearing is not the agent's invention.
            listener = "agent" if turn.speaker is Speaker.CALLER else "caller"
            lines.append(f"turn {turn.index} ({listener} heard): {turn.heard}")
    lines += ["", f"Call ended: {result.end.reason.value} {result.end.message}".rstrip()]
    lines += ["", "## Tool calls"]
    for call in result.tool_calls:
        entry: dict[str, Any] = {"id": call.call_id, "tool": call.tool, "args": call.args}
        entry["status"] = call.status.value
        if not call.args_valid:
            entry["invalid_args"] = call.arg_errors
        entry["result" if call.error is None else "error"] = (
            call.result if call.error is None else f"{call.error} {call.error_message}"
        )
        lines.append(_json(entry))
    if not result.tool_calls:
        lines.append("(none)")
    writes = [f"{w.collection}/{w.record}.{w.field}: {w.old!r} -> {w.new!r}"
              for w in result.backend_writes]  # fmt: skip
    if not given.real_call:  # a real call has no write log: "(none)" would say nothing changed
        lines += ["", "## Backend writes", *(writes or ["(none)"])]
    if given.expect is not None:
        lines += ["", *expectation_lines(given)]
    return "\n".join(lines)


REAL_CALL_NOTE = (
    "Imported from a call log: no simulated persona and no ground-truth facts. The caller's "
    "goal is what the caller asked; the tool results are as the log recorded them."
)


def expectation_lines(given: JudgeInput) -> list[str]:
    """What the scenario says must have happened, and what the deterministic check found.

    The check reads the write log, so the judge need not infer the end state from the
    transcript: an agent that says "done" while the check says nothing was written did not
    achieve the goal, and said something false.
    """
    expect = given.expect
    assert expect is not None
    lines = ["## Expected outcome (checked from the backend and the trace)"]
    if given.scenario is not None and given.scenario.expect is not None:
        lines.append(_json(given.scenario.expect.model_dump(mode="json", exclude_defaults=True)))
    if expect.not_exercised is not None:
        return [*lines, f"not exercised (the scenario did not play): {expect.not_exercised}"]
    lines += [f"- {c.name}: {'held' if c.passed else 'NOT MET'}: {c.why}" for c in expect.checks]
    lines.append(f"all met: {'yes' if expect.met else 'no'}")
    return lines


def answer_schema(rubric: Rubric) -> dict[str, Any]:
    """The JSON schema asked for (RUB-7): every criterion, an integer 1-5 and a quote each."""
    item = {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
            "evidence": {"type": "string"},
            "reason": {"type": "string"},
        },
        "required": ["score", "evidence"],
    }
    yes_no = {
        "type": "object",
        "properties": {
            "answer": {"type": "string", "enum": ANSWERS},
            "evidence": {"type": "string"},
            "reason": {"type": "string"},
        },
        "required": ["answer", "evidence"],
    }
    ids = [c.id for c in rubric.criteria]
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "criteria": {
                "type": "object",
                "properties": {c.id: yes_no if c.probe else item for c in rubric.criteria},
                "required": ids,
            }
        },
        "required": ["criteria"],
    }
    asked = [p.id for p in _asked_gates(rubric)]
    if asked:
        gates = {"type": "object", "properties": dict.fromkeys(asked, yes_no), "required": asked}
        schema["properties"]["gates"] = gates
        schema["required"].append("gates")
    return schema


def read_answer(
    raw: str | None, rubric: Rubric, result: ConversationResult, real_call: bool = False
) -> dict[str, RawScore]:
    """Each criterion the answer returned, its score unchecked; a criterion left out is absent
    (so `missing`, RUB-3). An answer with no readable `criteria` object leaves every criterion
    unreadable (`unscored`, RUB-4): it cannot fail the conversation by accident."""
    try:
        data = json.loads(raw or "")
    except (ValueError, RecursionError):  # RecursionError: nested deeper than JSON parses
        data = None
    criteria = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(criteria, dict):
        return _unreadable(rubric, "the judge's answer has no readable criteria")
    out: dict[str, RawScore] = {}
    for criterion in rubric.criteria:
        if criterion.id not in criteria:
            continue
        item = criteria[criterion.id]
        if not isinstance(item, dict):
            out[criterion.id] = RawScore(item, reason="not an object with a score")
            continue
        evidence = item.get("evidence")
        quote = evidence if isinstance(evidence, str) else ""
        reason = item.get("reason")
        value = item.get("score")
        if criterion.probe is not None:
            # Mapped like the deterministic judge: right 5, wrong 1, not applicable (or an
            # unreadable answer) None, which leaves the criterion unscored (RUB-4a).
            value = criterion.probe.score(item.get("answer"))
            said = item.get("answer")
            reason = f"answered {said}: {reason}" if isinstance(reason, str) else f"answered {said}"
            if real_call and said == "not_applicable":
                # As the deterministic judge reads a rule's answer on a real call (IMP-2).
                value, reason = NOT_APPLICABLE, f"not applicable: {reason}"
        out[criterion.id] = RawScore(
            value,
            evidence=quote,
            reason=reason if isinstance(reason, str) else "",
            evidence_found=quote_in_transcript(quote, result),
        )
    return out


def read_gate_answers(raw: str | None, rubric: Rubric) -> dict[str, object]:
    """The model's answers to the promoted gates it was asked (probe id -> answer as given)."""
    if not _asked_gates(rubric):
        return {}
    try:
        data = json.loads(raw or "")
    except (ValueError, RecursionError):
        return {}
    gates = data.get("gates") if isinstance(data, dict) else None
    if not isinstance(gates, dict):
        return {}
    out: dict[str, object] = {}
    for probe in _asked_gates(rubric):
        item = gates.get(probe.id)
        if isinstance(item, dict):
            out[probe.id] = item.get("answer")
    return out


def quote_in_transcript(quote: str, result: ConversationResult) -> bool:
    """Whether the quote occurs in one turn, said or heard (whitespace and case ignored)."""
    wanted = _normal(quote).strip(_QUOTE_EDGES)
    if not wanted:
        return False
    return any(wanted in _normal(t.text) or wanted in _normal(t.heard) for t in result.turns)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _unreadable(rubric: Rubric, why: str) -> dict[str, RawScore]:
    # Every criterion "returned" as None: unreadable, so unscored rather than missing.
    return {c.id: RawScore(None, reason=why) for c in rubric.criteria}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
