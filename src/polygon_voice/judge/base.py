"""The judge's interface and the step from raw scores to a stored `Judgement`.

A judge returns, per run, raw scores with evidence; `judge_conversation` runs it k times,
combines (RUB-3..5), applies the rubric's gates and builds the record. The deterministic
judge is one implementation (synchronous `Judge`); the LLM judge is another (`AsyncJudge`),
returning whatever the model said as the raw value so that unreadable scores are caught
here, not in the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from polygon_voice.judge.composite import combine_repeats, composite, read_score
from polygon_voice.judge.gates import fired_gates, verdict
from polygon_voice.judge.promoted import gate_answers
from polygon_voice.judge.rubric import Rubric
from polygon_voice.model import (
    CaseScore,
    ConversationResult,
    ExpectResult,
    Persona,
    Scenario,
    ToolSpec,
)
from polygon_voice.model.judgement import ConversationChecks, CriterionResult, Judgement, Verdict


@dataclass(frozen=True)
class JudgeInput:
    """Everything a judge may read about one conversation."""

    result: ConversationResult
    persona: Persona
    checks: ConversationChecks
    case: CaseScore | None = None  # the three-layer checks, for cases
    backend_initial: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    # For promoted probes' rules: a case's confirmation check needs its scenario and tools.
    scenario: Scenario | None = None
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    # What the scenario says must have happened, as checked (stage "expect"); None: it says
    # nothing. Read by rubric v3's gate `expected_outcome` and the judges' rules.
    expect: ExpectResult | None = None


@dataclass(frozen=True)
class RawScore:
    """One criterion as a judge returned it; `value` is unchecked (see `read_score`)."""

    value: object
    evidence: str = ""
    turn: int | None = None
    reason: str = ""
    evidence_found: bool | None = None  # set by a judge that quotes (the LLM judge)


@dataclass(frozen=True)
class JudgeRun:
    """One run of a judge: its raw scores and, for a model, what was sent and received."""

    scores: Mapping[str, RawScore]
    raw: str | None = None  # the model's answer as received (None: no answer at all)
    error: str | None = None  # why this run's answer could not be (fully) read
    prompt: list[dict[str, str]] | None = None
    # A model's answers to promoted gates without a rule: probe id -> yes/no/not_applicable.
    gate_answers: Mapping[str, object] = field(default_factory=dict)


class Judge(Protocol):
    """Scores the criteria of one conversation; `name` labels every result (RUB-8)."""

    name: str

    def score(self, given: JudgeInput, rubric: Rubric) -> Mapping[str, RawScore]:
        """One run's raw scores by criterion id; a criterion left out is `missing`."""
        ...


class AsyncJudge(Protocol):
    """A judge that awaits a model; a failed call is a `JudgeRun` with `error`, never raised."""

    name: str

    async def run(self, given: JudgeInput, rubric: Rubric, repeat: int) -> JudgeRun:
        """Run number `repeat` (from 0) of the judge on one conversation."""
        ...

    async def aclose(self) -> None:
        """Release the model client's connections (they belong to the event loop)."""
        ...


AnyJudge = Judge | AsyncJudge


def judge_conversation(
    judge: Judge, rubric: Rubric, given: JudgeInput, repeats: int = 1
) -> Judgement:
    """Run `judge` `repeats` times and build the judgement under `rubric`."""
    if repeats < 1:
        raise ValueError("judge repeats must be at least 1")
    runs = [JudgeRun(judge.score(given, rubric)) for _ in range(repeats)]
    return build_judgement(judge.name, rubric, given, runs)


async def judge_conversation_async(
    judge: AnyJudge, rubric: Rubric, given: JudgeInput, repeats: int = 1
) -> Judgement:
    """`judge_conversation` for either kind of judge; a model judge's repeats run in turn.

    In turn rather than at once so that a rerun sends the same requests in the same order
    (and a test's fake server can answer repeat by repeat); calls run in parallel anyway.
    """
    if repeats < 1:
        raise ValueError("judge repeats must be at least 1")
    if not hasattr(judge, "run"):
        return judge_conversation(judge, rubric, given, repeats)
    runs = [await judge.run(given, rubric, repeat) for repeat in range(repeats)]
    return build_judgement(judge.name, rubric, given, runs)


def build_judgement(
    judge_name: str, rubric: Rubric, given: JudgeInput, runs: Sequence[JudgeRun]
) -> Judgement:
    """Combine k runs (RUB-3..5), apply the rubric's gates and build the record."""
    if not runs:
        raise ValueError("no judge runs to combine")
    combined = combine_repeats(rubric, [{k: v.value for k, v in r.scores.items()} for r in runs])
    result = composite(rubric, combined)
    probed = gate_answers(rubric, given, runs)
    gates = fired_gates(
        rubric, result.criteria, given.checks, probed, end=given.result.end, expect=given.expect
    )
    label, reasons = verdict(result, gates)
    label, reasons = _unexercised(rubric, given, label, reasons)
    # A promoted gate nobody could answer is said so, rather than passing silently.
    reasons += [f"gate {g.probe.gate} not checked: {g.reason}" for g in probed if g.answer is None]
    criteria: dict[str, CriterionResult] = {}
    for cid, outcome in result.criteria.items():
        raw = _shown(cid, runs)
        criteria[cid] = CriterionResult(
            score=outcome.score,
            status=outcome.status,
            evidence=raw.evidence if raw else "",
            turn=raw.turn if raw else None,
            reason=raw.reason if raw else "not returned by the judge",
            evidence_found=raw.evidence_found if raw else None,
        )
    prompt = next((r.prompt for r in runs if r.prompt is not None), None)
    return Judgement(
        rubric_version=rubric.version,
        judge=judge_name,
        repeats=len(runs),
        criteria=criteria,
        composite=None if result.value is None else round(result.value, 2),
        partial=result.partial,
        unscored=result.unscored,
        verdict=label,
        gates_failed=[g.gate for g in gates],
        reasons=reasons,
        evidence_not_found=[cid for cid, c in criteria.items() if c.evidence_found is False],
        errors=[f"repeat {i + 1}: {r.error}" for i, r in enumerate(runs) if r.error],
        prompt=prompt,
        raw_answers=[r.raw for r in runs] if prompt is not None else [],
    )


def _unexercised(
    rubric: Rubric, given: JudgeInput, label: Verdict, reasons: list[str]
) -> tuple[Verdict, list[str]]:
    """From rule set 2 on, a call whose scenario did not play as written is neither a pass nor
    a warning of the agent: `unscored`, with the reason. A fired gate still fails it."""
    expect = given.expect
    if rubric.rules < 2 or expect is None or expect.not_exercised is None or label == "fail":
        return label, reasons
    return "unscored", [f"not exercised: {expect.not_exercised}", *reasons]


def _shown(cid: str, runs: Sequence[JudgeRun]) -> RawScore | None:
    # The evidence shown is from the first run that scored the criterion readably, so an
    # unreadable first repeat does not hide the quote the score rests on.
    returned = [r.scores[cid] for r in runs if cid in r.scores]
    readable = [raw for raw in returned if read_score(raw.value) is not None]
    return next(iter(readable or returned), None)
