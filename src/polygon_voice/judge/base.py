"""The judge's interface and the step from raw scores to a stored `Judgement`.

A judge returns, per run, raw scores with evidence; `judge_conversation` runs it k times,
combines (RUB-3..5), applies the rubric's gates and builds the record. The deterministic
judge is one implementation (synchronous `Judge`); the LLM judge is another (`AsyncJudge`),
returning whatever the model said as the raw value so that unreadable scores are caught
here, not in the judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, get_args

from polygon_voice.checks.exercised import not_played
from polygon_voice.checks.facts import CallFacts
from polygon_voice.judge.composite import (
    Composite,
    CriterionOutcome,
    combine_repeats,
    composite,
    read_score,
)
from polygon_voice.judge.gates import fired_gates, verdict
from polygon_voice.judge.promoted import gate_answers
from polygon_voice.judge.real_end import real_call_end
from polygon_voice.judge.rubric import Rubric
from polygon_voice.model import (
    CaseScore,
    ConversationResult,
    ExpectResult,
    Persona,
    Scenario,
    ToolSpec,
)
from polygon_voice.model.judgement import (
    ConversationChecks,
    CriterionResult,
    CriterionStatus,
    Judgement,
    Verdict,
)
from polygon_voice.model.trusted import trusted


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
    # An imported (real) call: no simulated caller and no ground-truth facts, so the checks
    # that need them are not applicable (IMP-2).
    real_call: bool = False
    # The forbidden phrases the checks looked for (suite's and scenario's): on a real call,
    # safety_compliance applies when some were given.
    forbidden_phrases: tuple[str, ...] = ()
    # The call's turns as the checks read them (checks/facts.py), shared by every rule: read
    # from `result` when not given, or when given for other turns.
    facts: CallFacts = field(default=None, repr=False, compare=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        facts: CallFacts | None = self.facts
        if facts is None or not facts.belongs_to(self.result):
            object.__setattr__(self, "facts", CallFacts(self.result))


@dataclass(frozen=True)
class RawScore:
    """One criterion as a judge returned it; `value` is unchecked (see `read_score`)."""

    value: object
    evidence: str = ""
    turn: int | None = None
    reason: str = ""
    evidence_found: bool | None = None  # set by a judge that quotes (the LLM judge)


def raw_score(
    value: object,
    evidence: str = "",
    turn: int | None = None,
    reason: str = "",
    evidence_found: bool | None = None,
) -> RawScore:
    """`RawScore(value, evidence, turn, reason, evidence_found)`, the same record: the rules
    and the evidence make a dozen or more a call, and the frozen class's own `__init__`
    sets each field by a call of `object.__setattr__`; here they are set at once."""
    score: RawScore = object.__new__(RawScore)
    score.__dict__.update(
        value=value, evidence=evidence, turn=turn, reason=reason, evidence_found=evidence_found
    )
    return score


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
    failure = not_played(given.result)
    if failure is not None:
        return not_judged(judge.name, rubric, given, failure)
    given = as_judged(given)
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
    failure = not_played(given.result)
    if failure is not None:  # no model request for a call that did not play
        return not_judged(judge.name, rubric, given, failure)
    given = as_judged(given)
    runs = [await judge.run(given, rubric, repeat) for repeat in range(repeats)]
    return build_judgement(judge.name, rubric, given, runs)


def as_judged(given: JudgeInput) -> JudgeInput:
    """The call as the judges read it: a real call whose transcript shows a loop ended in
    one (judge/real_end.py), as a simulated call's engine would have ended it."""
    if not given.real_call:
        return given
    end = real_call_end(given.result, given.facts)
    if end == given.result.end:
        return given
    result = given.result.model_copy(update={"end": end})
    checks = given.checks.model_copy(update={"loop_detected": True})
    return replace(given, result=result, checks=checks)


def not_judged(judge_name: str, rubric: Rubric, given: JudgeInput, why: str) -> Judgement:
    """The judgement of a call that did not play (its caller failed, or hung up before saying
    anything): no criterion is scored, the verdict is `unscored` with the reason, unless a
    gate fires on what was said (a forbidden phrase still fails the call). Any rubric: the
    trace notes that mark such calls are newer than any stored verdict, so none changes."""
    unread = {c.id: RawScore(None, reason=f"not judged: {why}") for c in rubric.criteria}
    judged = build_judgement(judge_name, rubric, given, [JudgeRun(unread)])
    reason = f"not exercised: {why}"
    # Said once, first: the expectation's reading of the same call may have added it too.
    rest = [r for r in judged.reasons if r != reason]
    return judged.model_copy(update={"reasons": [reason, *rest]})


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
        rubric,
        result.criteria,
        given.checks,
        probed,
        end=given.result.end,
        expect=given.expect,
        real_call=given.real_call,
    )
    label, reasons = verdict(result, gates)
    label, reasons = _unexercised(rubric, given, label, reasons)
    not_applicable = {cid: _why_not_applicable(cid, runs) for cid in result.not_applicable}
    # Too little was read to stand for the call: a pass or warning would rest on a fragment.
    thin = None
    if label in ("pass", "warn"):
        thin = goal_not_applicable(not_applicable) or too_little_scored(rubric, result)
    if thin is not None:
        lead = thin if thin.startswith(NOT_APPLICABLE_REASON) else f"too little scored: {thin}"
        label, reasons = "unscored", [lead, *reasons]
    # A promoted gate nobody could answer is said so, rather than passing silently.
    reasons += [f"gate {g.probe.gate} not checked: {g.reason}" for g in probed if g.answer is None]
    criteria: dict[str, CriterionResult] = {}
    for cid, outcome in result.criteria.items():
        criteria[cid] = _criterion_result(outcome, _shown(cid, runs))
    prompt = next((r.prompt for r in runs if r.prompt is not None), None)
    return Judgement(
        rubric_version=rubric.version,
        judge=judge_name,
        repeats=len(runs),
        criteria=criteria,
        composite=None if result.value is None or thin is not None else round(result.value, 2),
        partial=result.partial,
        unscored=result.unscored,
        verdict=label,
        gates_failed=[g.gate for g in gates],
        reasons=reasons,
        evidence_not_found=[cid for cid, c in criteria.items() if c.evidence_found is False],
        errors=[f"repeat {i + 1}: {r.error}" for i, r in enumerate(runs) if r.error],
        prompt=prompt,
        raw_answers=[r.raw for r in runs] if prompt is not None else [],
        not_applicable=not_applicable,
    )


def _criterion_result(outcome: CriterionOutcome, raw: RawScore | None) -> CriterionResult:
    """One criterion's record. Values of the model's own types (every deterministic rule's,
    and a model judge's once read) are not validated again: that cost a good part of judging
    an imported call (model/trusted.py: nor is `model_construct`'s own Python paid); anything
    else goes through validation, which refuses it."""
    if raw is None:
        evidence, turn, reason, found = "", None, "not returned by the judge", None
    else:
        evidence, turn, reason, found = raw.evidence, raw.turn, raw.reason, raw.evidence_found
    score = outcome.score
    plain = (
        type(evidence) is str
        and type(reason) is str
        and (turn is None or type(turn) is int)
        and (found is None or type(found) is bool)
        and (score is None or type(score) is float or type(score) is int)
        and outcome.status in _STATUSES
    )
    fields: dict[str, Any] = {
        "score": score if score is None or not plain else float(score),  # as validation stores it
        "status": outcome.status,
        "evidence": evidence,
        "turn": turn,
        "reason": reason,
        "evidence_found": found,
    }
    if not plain:
        return CriterionResult.model_validate(fields)
    return trusted(CriterionResult, fields)


_STATUSES = frozenset(get_args(CriterionStatus))


NOT_APPLICABLE_REASON = "not applicable: "


def goal_not_applicable(not_applicable: Mapping[str, str]) -> str | None:
    """Why no verdict can stand when a criterion that must be scored does not apply (a real
    call stating no goal): a pass would rest on how the agent talked, not on what it did.

    Any rubric: only real calls have not-applicable criteria, and no real call was judged
    before they existed, so no stored verdict changes (RUB-6)."""
    for cid in MUST_BE_SCORED:
        if cid in not_applicable:
            return f"{NOT_APPLICABLE_REASON}{cid}: {not_applicable[cid]}"
    return None


def _why_not_applicable(cid: str, runs: Sequence[JudgeRun]) -> str:
    raw = next((r.scores[cid] for r in runs if cid in r.scores), None)
    why = raw.reason.removeprefix(NOT_APPLICABLE_REASON) if raw is not None else ""
    return why or "does not apply to this call"


MIN_SCORED_PERCENT = 50
"""From rule set 2 on (rubric v3), at least this share of the rubric's weight must be scored
for a verdict other than `unscored` (missing criteria count: they are scored as 1, RUB-3)."""
MUST_BE_SCORED = ("goal_achievement",)
"""Criteria that must be scored (when the rubric has them) for a verdict, from rule set 2 on."""


def too_little_scored(rubric: Rubric, result: Composite) -> str | None:
    """Why the scored criteria are too few to give a verdict (rule set 2 on); None when enough.

    Rule set 1 (v1, v2) had no minimum and keeps none, so their verdicts replay (RUB-6).
    """
    if rubric.rules < 2 or result.value is None:
        return None
    # A not-applicable criterion was not read either: the share is of the whole rubric.
    unscored = set(result.unscored) | set(result.not_applicable)
    required = [c for c in MUST_BE_SCORED if c in rubric.weights and c in unscored]
    if required:
        return f"{', '.join(required)} could not be scored"
    total = sum(rubric.weights.values())
    scored = sum(w for cid, w in rubric.weights.items() if cid not in unscored)
    if scored * 100 < MIN_SCORED_PERCENT * total:
        return (
            f"criteria of weight {scored} of {total} scored; at least {MIN_SCORED_PERCENT} % "
            "is needed for a verdict"
        )
    return None


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
    if len(runs) == 1:  # one run (the default): its own score, readable or not
        return runs[0].scores.get(cid)
    returned = [r.scores[cid] for r in runs if cid in r.scores]
    readable = [raw for raw in returned if read_score(raw.value) is not None]
    return next(iter(readable or returned), None)
