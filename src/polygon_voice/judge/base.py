"""The judge's interface and the step from raw scores to a stored `Judgement`.

A judge returns, per run, raw scores with evidence; `judge_conversation` runs it k times,
combines (RUB-3..5), applies the rubric's gates and builds the record. The deterministic
judge is one implementation; an LLM judge (later) is another, returning whatever the model
said as the raw value so that unreadable scores are caught here, not in the judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from polygon_voice.judge.composite import combine_repeats, composite
from polygon_voice.judge.gates import fired_gates, verdict
from polygon_voice.judge.rubric import Rubric
from polygon_voice.model import CaseScore, ConversationResult, Persona
from polygon_voice.model.judgement import ConversationChecks, CriterionResult, Judgement


@dataclass(frozen=True)
class JudgeInput:
    """Everything a judge may read about one conversation."""

    result: ConversationResult
    persona: Persona
    checks: ConversationChecks
    case: CaseScore | None = None  # the three-layer checks, for cases
    backend_initial: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True)
class RawScore:
    """One criterion as a judge returned it; `value` is unchecked (see `read_score`)."""

    value: object
    evidence: str = ""
    turn: int | None = None
    reason: str = ""


class Judge(Protocol):
    """Scores the criteria of one conversation; `name` labels every result (RUB-8)."""

    name: str

    def score(self, given: JudgeInput, rubric: Rubric) -> Mapping[str, RawScore]:
        """One run's raw scores by criterion id; a criterion left out is `missing`."""
        ...


def judge_conversation(
    judge: Judge, rubric: Rubric, given: JudgeInput, repeats: int = 1
) -> Judgement:
    """Run `judge` `repeats` times and build the judgement under `rubric`."""
    if repeats < 1:
        raise ValueError("judge repeats must be at least 1")
    runs = [judge.score(given, rubric) for _ in range(repeats)]
    combined = combine_repeats(rubric, [{k: v.value for k, v in run.items()} for run in runs])
    result = composite(rubric, combined)
    gates = fired_gates(rubric, result.criteria, given.checks)
    label, reasons = verdict(result, gates)
    first = runs[0]
    criteria = {
        cid: CriterionResult(
            score=outcome.score,
            status=outcome.status,
            evidence=first[cid].evidence if cid in first else "",
            turn=first[cid].turn if cid in first else None,
            reason=first[cid].reason if cid in first else "not returned by the judge",
        )
        for cid, outcome in result.criteria.items()
    }
    return Judgement(
        rubric_version=rubric.version,
        judge=judge.name,
        repeats=repeats,
        criteria=criteria,
        composite=None if result.value is None else round(result.value, 2),
        partial=result.partial,
        unscored=result.unscored,
        verdict=label,
        gates_failed=[g.gate for g in gates],
        reasons=reasons,
    )
