"""Repeated trials of a scenario (SWEEP-1, RUB-5): pass rate, pass^k, and two spreads.

A model-played call is one draw. With K trials per scenario (`polygon run --trials K`) the
statistics here say how often the agent passed (a Wilson interval), how likely k trials in a
row pass (pass^k, tau-bench's unbiased estimator), how far its composites spread from trial
to trial (the agent's, or the caller's, variance) and, apart from that, how far the judge's
own repeats spread (RUB-5): a user sees whether the agent or the judge is unstable.

A call whose role model or endpoint failed (`CallResult.failures`) or that did not test the
agent (`CallResult.not_exercised`) is no trial: it is left out of n and counted. A trial
passed when `CallResult.passed` holds (verdict pass and the expected outcome met).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from polygon_voice.compare.stats import mean_interval, pass_hat_k, sample_stdev, wilson_interval

if TYPE_CHECKING:
    from polygon_voice.api.results import CallResult
    from polygon_voice.model.judgement import Judgement

DEFAULT_KS = (1, 2, 4)

JUDGE_SPREAD_NOTE = (
    "trial spread: how far the composite moves between trials (the agent and caller); "
    "judge spread: how far it moves between the judge's repeats of one call (the judge)"
)


@dataclass(frozen=True)
class ScenarioTrials:
    """One scenario over its trials."""

    scenario: str
    trials: int  # n: calls that count (infrastructure failures and unexercised calls not)
    infra_failures: int  # calls whose role model or endpoint failed
    not_exercised: int  # calls that did not test the agent (their caller never spoke, ...)
    passes: int
    pass_rate: float | None  # passes / trials; None with no trial
    pass_rate_interval: tuple[float, float] | None  # Wilson 95 %
    pass_hat_k: dict[int, float | None]  # k -> C(c, k) / C(n, k); None when n < k
    passed_every_trial: bool  # every counted trial passed (False with none)
    mean_composite: float | None
    composite_interval: tuple[float, float] | None  # Student's t 95 %
    trial_spread: float | None  # sample stdev of the composites across trials
    judge_spread: float | None  # mean over trials of the stdev across judge repeats

    def to_dict(self) -> dict[str, Any]:
        """JSON data (the rows of report.json's `trials` section)."""
        return {
            "scenario": self.scenario,
            "trials": self.trials,
            "infra_failures": self.infra_failures,
            "not_exercised": self.not_exercised,
            "passes": self.passes,
            "pass_rate": _rounded(self.pass_rate, 4),
            "pass_rate_interval": _pair(self.pass_rate_interval, 4),
            "pass_hat_k": {str(k): _rounded(v, 4) for k, v in self.pass_hat_k.items()},
            "passed_every_trial": self.passed_every_trial,
            "mean_composite": _rounded(self.mean_composite, 2),
            "composite_interval": _pair(self.composite_interval, 2),
            "trial_spread": _rounded(self.trial_spread, 2),
            "judge_spread": _rounded(self.judge_spread, 2),
        }


@dataclass(frozen=True)
class RunTrials:
    """A run's trials over all its scenarios; pass^k is the mean of the scenarios' pass^k
    over those with at least k trials (as tau-bench reports it)."""

    scenarios: int
    trials: int
    infra_failures: int
    not_exercised: int
    passes: int
    pass_rate: float | None
    pass_rate_interval: tuple[float, float] | None
    pass_hat_k: dict[int, float | None]
    pass_hat_k_scenarios: dict[int, int]  # k -> scenarios with n >= k (the mean's n)
    passed_every_trial: int  # scenarios whose every trial passed
    mean_composite: float | None
    composite_interval: tuple[float, float] | None
    trial_spread: float | None  # mean of the scenarios' trial spreads
    judge_spread: float | None  # mean of the scenarios' judge spreads
    max_trials: int  # the most trials any scenario has

    def to_dict(self) -> dict[str, Any]:
        """JSON data (report.json's `trials.summary`)."""
        return {
            "scenarios": self.scenarios,
            "trials": self.trials,
            "infra_failures": self.infra_failures,
            "not_exercised": self.not_exercised,
            "passes": self.passes,
            "pass_rate": _rounded(self.pass_rate, 4),
            "pass_rate_interval": _pair(self.pass_rate_interval, 4),
            "pass_hat_k": {str(k): _rounded(v, 4) for k, v in self.pass_hat_k.items()},
            "pass_hat_k_scenarios": {str(k): n for k, n in self.pass_hat_k_scenarios.items()},
            "passed_every_trial": self.passed_every_trial,
            "mean_composite": _rounded(self.mean_composite, 2),
            "composite_interval": _pair(self.composite_interval, 2),
            "trial_spread": _rounded(self.trial_spread, 2),
            "judge_spread": _rounded(self.judge_spread, 2),
            "max_trials": self.max_trials,
        }


@dataclass(frozen=True)
class TrialOutcome:
    """What the trial statistics need of one call (small, so a report can keep one per
    call while it streams the calls)."""

    scenario: str
    trial: int
    infra_failed: bool  # a role model or endpoint failed (`CallResult.failures`)
    exercised: bool  # the call tested the agent (`CallResult.not_exercised` is None)
    passed: bool  # `CallResult.passed`
    composite: float | None
    judge_spread: float | None

    @property
    def counts(self) -> bool:
        """Whether the call is a trial of the agent: no role failed and it was exercised."""
        return not self.infra_failed and self.exercised


def counts_as_trial(call: CallResult) -> bool:
    """Whether a call is a trial of the agent: no role failed and the call exercised it."""
    return not call.failures and call.not_exercised is None


def outcome_of(call: CallResult) -> TrialOutcome:
    """A stored call's outcome as a trial."""
    return TrialOutcome(
        scenario=call.scenario,
        trial=call.trial,
        infra_failed=bool(call.failures),
        exercised=call.not_exercised is None,
        passed=call.passed,
        composite=call.composite,
        judge_spread=judge_spread(call.judgement) if call.judgement is not None else None,
    )


def trial_stats(
    calls: Sequence[CallResult], ks: Sequence[int] = DEFAULT_KS
) -> list[ScenarioTrials]:
    """Each scenario's trials, in the order the scenarios first occur in `calls`."""
    return stats_of_outcomes([outcome_of(c) for c in calls], ks)


def run_trials_summary(calls: Sequence[CallResult], ks: Sequence[int] = DEFAULT_KS) -> RunTrials:
    """The same over every scenario of a run."""
    return summary_of_outcomes([outcome_of(c) for c in calls], ks)


def stats_of_outcomes(
    outcomes: Sequence[TrialOutcome], ks: Sequence[int] = DEFAULT_KS
) -> list[ScenarioTrials]:
    """`trial_stats` of calls already read as outcomes."""
    grouped: dict[str, list[TrialOutcome]] = {}
    for outcome in outcomes:
        grouped.setdefault(outcome.scenario, []).append(outcome)
    return [_scenario_trials(scenario, group, ks) for scenario, group in grouped.items()]


def summary_of_outcomes(
    outcomes: Sequence[TrialOutcome], ks: Sequence[int] = DEFAULT_KS
) -> RunTrials:
    """`run_trials_summary` of calls already read as outcomes."""
    rows = stats_of_outcomes(outcomes, ks)
    counted = [o for o in outcomes if o.counts]
    passes = sum(o.passed for o in counted)
    composites = [o.composite for o in counted if o.composite is not None]
    mean, interval = mean_interval(composites)
    hat: dict[int, float | None] = {}
    hat_n: dict[int, int] = {}
    for k in ks:
        values = [v for row in rows if (v := row.pass_hat_k.get(k)) is not None]
        hat[k] = sum(values) / len(values) if values else None
        hat_n[k] = len(values)
    return RunTrials(
        scenarios=len(rows),
        trials=len(counted),
        infra_failures=sum(r.infra_failures for r in rows),
        not_exercised=sum(r.not_exercised for r in rows),
        passes=passes,
        pass_rate=passes / len(counted) if counted else None,
        pass_rate_interval=wilson_interval(passes, len(counted)),
        pass_hat_k=hat,
        pass_hat_k_scenarios=hat_n,
        passed_every_trial=sum(r.passed_every_trial for r in rows),
        mean_composite=mean,
        composite_interval=interval,
        trial_spread=_mean([r.trial_spread for r in rows]),
        judge_spread=_mean([r.judge_spread for r in rows]),
        max_trials=max((r.trials for r in rows), default=0),
    )


def has_repeated_trials(rows: Sequence[ScenarioTrials]) -> bool:
    """Whether some scenario has more than one trial (only then is a trials table shown)."""
    return any(row.trials + row.infra_failures + row.not_exercised > 1 for row in rows)


def _scenario_trials(
    scenario: str, outcomes: Sequence[TrialOutcome], ks: Sequence[int]
) -> ScenarioTrials:
    failed = sum(o.infra_failed for o in outcomes)
    unexercised = sum(not o.infra_failed and not o.exercised for o in outcomes)
    counted = sorted((o for o in outcomes if o.counts), key=lambda o: o.trial)
    n = len(counted)
    passes = sum(o.passed for o in counted)
    composites = [o.composite for o in counted if o.composite is not None]
    mean, interval = mean_interval(composites)
    interval = _within_scale(interval)
    return ScenarioTrials(
        scenario=scenario,
        trials=n,
        infra_failures=failed,
        not_exercised=unexercised,
        passes=passes,
        pass_rate=passes / n if n else None,
        pass_rate_interval=wilson_interval(passes, n),
        pass_hat_k={k: pass_hat_k(n, passes, k) for k in ks},
        passed_every_trial=n > 0 and passes == n,
        mean_composite=mean,
        composite_interval=interval,
        trial_spread=sample_stdev(composites),
        judge_spread=_mean([o.judge_spread for o in counted]),
    )


def judge_spread(judgement: Judgement) -> float | None:
    """The sample stdev of the composite across one call's judge repeats; None with one
    repeat (nothing to spread) or fewer than two readable repeats. The deterministic judge
    scores the same every time: 0.0 when it was repeated."""
    return judge_spread_of(
        judgement.judge,
        judgement.repeats,
        judgement.rubric_version,
        list(judgement.criteria),
        judgement.raw_answers,
    )


def judge_spread_of(
    judge: str,
    repeats: int,
    rubric_version: str,
    criteria: Sequence[str],
    raw_answers: Sequence[str | None],
) -> float | None:
    """`judge_spread` from a stored judgement's fields (a report reads them unvalidated)."""
    if repeats < 2:
        return None
    if judge == "deterministic":
        return 0.0
    values = [v for v in repeat_composites(rubric_version, criteria, raw_answers) if v is not None]
    return sample_stdev(values)


def repeat_composites(
    rubric_version: str, criteria: Sequence[str], raw_answers: Sequence[str | None]
) -> list[float | None]:
    """The composite each stored judge repeat would have given alone, read from its raw
    answer (a judgement keeps the median of its repeats and each repeat's answer as
    received, not each repeat's scores)."""
    from polygon_voice.judge.composite import composite_of

    rubric = _rubric_of(rubric_version, criteria)
    out: list[float | None] = []
    for raw in raw_answers:
        scores = _raw_scores(raw)
        out.append(None if scores is None else composite_of(rubric, scores).value)
    return out


def _raw_scores(raw: str | None) -> dict[str, object] | None:
    """Criterion -> the score one answer gave; None when the answer has no criteria."""
    try:
        data = json.loads(raw or "")
    except (ValueError, RecursionError):
        return None
    criteria = data.get("criteria") if isinstance(data, dict) else None
    if not isinstance(criteria, dict):
        return None
    return {
        str(cid): item.get("score") if isinstance(item, dict) else None
        for cid, item in criteria.items()
    }


def _rubric_of(rubric_version: str, criteria: Sequence[str]) -> Any:
    """The built-in rubric of that version; for a rubric file (whose weights a judgement does
    not keep) the criteria the judgement scored, equally weighted: a spread, not a verdict."""
    from polygon_voice.judge.rubric import BUILTIN, Criterion, Rubric

    builtin = BUILTIN.get(rubric_version)
    if builtin is not None:
        return builtin
    return Rubric(rubric_version, tuple(Criterion(cid, 1) for cid in criteria), frozenset())


def outcome_of_entry(entry: dict[str, Any]) -> TrialOutcome:
    """A report.json conversation entry's outcome as a trial (the same rules as
    `outcome_of` reads from a `CallResult`)."""
    from polygon_voice.api.results import call_passed

    judgement = entry.get("judgement") or {}
    expect = entry.get("expect")
    expect_met = (
        None
        if not isinstance(expect, dict) or expect.get("not_exercised") is not None
        else bool(expect.get("met"))
    )
    composite = judgement.get("composite")
    spread = judgement.get("judge_spread")
    return TrialOutcome(
        scenario=str(entry.get("scenario_id", "")),
        trial=int(entry.get("trial", 1)),
        infra_failed=bool(entry.get("failures")),
        exercised=entry.get("not_exercised") is None,
        passed=call_passed(judgement.get("verdict"), expect_met),
        composite=float(composite) if composite is not None else None,
        judge_spread=float(spread) if spread is not None else None,
    )


def trials_section(
    outcomes: Sequence[TrialOutcome], ks: Sequence[int] = DEFAULT_KS
) -> dict[str, Any]:
    """report.json's `trials`: the run's summary and one row per scenario."""
    return {
        "ks": list(ks),
        "pass_rule": "verdict pass and the expected outcome, where stated, met",
        "note": JUDGE_SPREAD_NOTE,
        "summary": summary_of_outcomes(outcomes, ks).to_dict(),
        "scenarios": [row.to_dict() for row in stats_of_outcomes(outcomes, ks)],
    }


def _within_scale(interval: tuple[float, float] | None) -> tuple[float, float] | None:
    """A composite's t interval cut to the scale 0-100 (few trials far apart reach past it)."""
    if interval is None:
        return None
    return max(0.0, interval[0]), min(100.0, interval[1])


def _mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _pair(pair: tuple[float, float] | None, digits: int) -> list[float] | None:
    return None if pair is None else [round(pair[0], digits), round(pair[1], digits)]
