"""Is it a real change? Paired change detection between two runs (CMP-1, SWEEP-1).

Calls are paired by scenario and trial (trial n of scenario s in one run with trial n of s
in the other). For the run overall, each criterion and each scenario:

* the mean of the paired differences (after - before) with a seeded paired-bootstrap
  interval (`stats.bootstrap_mean_interval`) and the sign-flip test's p-value
  (`stats.sign_flip_p`, valid under "no change" at any n, which the bootstrap is not with
  few pairs of a few distinct values); the mark is *improved* when the interval lies above
  0 and p is below the family's level, *regressed* when the interval lies below 0 and p is
  below it, else *no detectable change*;
* the marks of one comparison (overall, every criterion, every scenario) are one family of
  m tests: each interval is at 1 - 0.05 / m (Bonferroni), so that chance alone marks
  anything in at most 5 % of comparisons of two equal versions; and a mark needs at least
  `MIN_PAIRS` pairs (fewer have too few distinct resamples for the bootstrap to reach its
  stated coverage);
* with no detectable change, the smallest change the data could have detected: the minimum
  detectable effect at 80 % power, (z(1 - a/2) + z(0.8)) * s_d / sqrt(n);
* pass/fail flips with an exact two-sided sign test (`stats.sign_test_p`), shown beside the
  mark (the mark itself is the interval's).

Pairs in which either call is no trial (an infrastructure failure, not exercised) are left
out and counted as unpaired, like calls with no partner in the other run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from polygon_voice.compare.stats import (
    BOOTSTRAP_RESAMPLES,
    bootstrap_mean_interval,
    sample_stdev,
    sign_flip_p,
    sign_test_p,
)

if TYPE_CHECKING:
    from polygon_voice.api.results import CallResult

Mark = Literal["improved", "regressed", "no detectable change"]
NO_CHANGE: Mark = "no detectable change"
Scope = Literal["overall", "criterion", "scenario"]
Metric = Callable[["CallResult"], float | None]  # a call's value; None: it has none
ALPHA = 0.05  # false alarms allowed per mark family (overall, criteria, scenarios)
POWER = 0.80  # the power the minimum detectable effect is stated at
MIN_PAIRS = 5
BOOTSTRAP_SEED = 0  # fixed: the same two runs always read the same
METHOD = (
    "paired by scenario and trial; mean difference (after - before) with a seeded paired "
    "bootstrap interval and a sign-flip test, at 1 - 0.05/m for the m marks of the "
    "comparison (Bonferroni); changed only when the interval excludes 0, the sign-flip "
    f"p-value is below 0.05/m and there are at least {MIN_PAIRS} pairs; "
    "otherwise the minimum detectable effect at 80 % power, (z(1-a/2) + z(0.8)) * s_d / "
    "sqrt(n); pass/fail flips: exact two-sided sign test"
)


@dataclass(frozen=True)
class Pair:
    """Trial n of one scenario in both runs."""

    scenario: str
    trial: int
    before: CallResult
    after: CallResult


@dataclass(frozen=True)
class Change:
    """One mark: a metric (the composite or a criterion's score) over some pairs."""

    scope: Scope
    name: str  # "composite", the criterion's id or the scenario's id
    pairs: int
    mean_before: float | None
    mean_after: float | None
    difference: float | None  # the mean of the paired differences
    interval: tuple[float, float] | None
    confidence: float  # of the interval: 1 - 0.05 / m for the comparison's m marks
    p_value: float | None  # the sign-flip test's two-sided p-value; None without pairs
    mark: Mark
    detectable: float | None  # the minimum detectable effect at 80 % power
    flips_better: int  # pairs failed before and passed after
    flips_worse: int
    flips_p: float  # the sign test's two-sided p-value
    why: str  # one line: what the mark rests on

    def to_dict(self) -> dict[str, Any]:
        """JSON data (compare.json's `changes`)."""
        return {
            "scope": self.scope,
            "name": self.name,
            "pairs": self.pairs,
            "mean_before": _rounded(self.mean_before),
            "mean_after": _rounded(self.mean_after),
            "difference": _rounded(self.difference),
            "interval": None if self.interval is None else [_rounded(v) for v in self.interval],
            "confidence": round(self.confidence, 5),
            "p_value": None if self.p_value is None else float(f"{self.p_value:.3g}"),
            "mark": self.mark,
            "detectable": _rounded(self.detectable),
            "flips": {"better": self.flips_better, "worse": self.flips_worse},
            "flips_p": float(f"{self.flips_p:.3g}"),
            "why": self.why,
        }


@dataclass(frozen=True)
class ChangeReport:
    """Every mark of one comparison of `after` against `before`."""

    before: str
    after: str
    pairs: int
    unpaired: int  # calls without a partner, or whose partner or itself is no trial
    overall: Change
    criteria: tuple[Change, ...]
    scenarios: tuple[Change, ...]

    @property
    def regressions(self) -> list[Change]:
        """The marks that say regressed, overall first."""
        return [c for c in (self.overall, *self.criteria, *self.scenarios) if c.mark == "regressed"]

    def to_dict(self) -> dict[str, Any]:
        """JSON data (one entry of compare.json's `changes`)."""
        return {
            "before": self.before,
            "after": self.after,
            "method": METHOD,
            "pairs": self.pairs,
            "unpaired": self.unpaired,
            "overall": self.overall.to_dict(),
            "criteria": [c.to_dict() for c in self.criteria],
            "scenarios": [c.to_dict() for c in self.scenarios],
            "regressions": [f"{c.scope} {c.name}" for c in self.regressions],
        }


def pair_calls(before: Sequence[CallResult], after: Sequence[CallResult]) -> tuple[list[Pair], int]:
    """The pairs (in the first run's order) and how many calls of either run have none.

    Calls pair by scenario and trial; calls that share both (an imported run's several real
    calls of one scenario, all trial 1) pair in the order they were stored."""
    from polygon_voice.compare.trials import counts_as_trial

    later = dict(_keyed(after))
    pairs: list[Pair] = []
    for key, call in _keyed(before):
        partner = later.get(key)
        if partner is not None and counts_as_trial(call) and counts_as_trial(partner):
            pairs.append(Pair(call.scenario, call.trial, call, partner))
    return pairs, len(before) + len(after) - 2 * len(pairs)


def _keyed(calls: Sequence[CallResult]) -> list[tuple[tuple[str, int, int], CallResult]]:
    """Each call keyed by (scenario, trial, how many calls before it had both)."""
    seen: Counter[tuple[str, int]] = Counter()
    keyed = []
    for call in calls:
        seen[(call.scenario, call.trial)] += 1
        keyed.append(((call.scenario, call.trial, seen[(call.scenario, call.trial)]), call))
    return keyed


def detect_changes(
    before: Sequence[CallResult],
    after: Sequence[CallResult],
    *,
    before_id: str = "before",
    after_id: str = "after",
) -> ChangeReport:
    """The overall, per-criterion and per-scenario marks of `after` against `before`."""
    pairs, unpaired = pair_calls(before, after)
    criteria_ids = sorted(
        {cid for p in pairs for cid in _criteria(p.before)}
        & {cid for p in pairs for cid in _criteria(p.after)}
    )
    by_scenario: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_scenario.setdefault(pair.scenario, []).append(pair)
    planned: list[tuple[Scope, str, list[Pair], Metric]] = [
        ("overall", "composite", pairs, _composite),
        *(("criterion", cid, pairs, _criterion(cid)) for cid in criteria_ids),
        *(("scenario", s, group, _composite) for s, group in by_scenario.items()),
    ]
    measured = [
        (scope, name, group, _paired(group, metric)) for scope, name, group, metric in planned
    ]
    # One family: every mark that could be given, so that chance alone marks anything in at
    # most ALPHA of comparisons of two equal versions.
    family = sum(len(values) >= MIN_PAIRS for *_, values in measured) or 1
    changes = [
        _change(scope, name, group, values, family) for scope, name, group, values in measured
    ]
    overall = changes[0]
    criteria = tuple(c for c in changes if c.scope == "criterion")
    scenarios = tuple(c for c in changes if c.scope == "scenario")
    return ChangeReport(before_id, after_id, len(pairs), unpaired, overall, criteria, scenarios)


def resamples_for(family: int) -> int:
    """Bootstrap resamples: BOOTSTRAP_RESAMPLES, more for a large family, so that each tail
    of the interval at 1 - ALPHA / family rests on ten resamples or more (up to 10,000)."""
    wanted = math.ceil(10 * 2 * family / ALPHA)
    return min(10_000, max(BOOTSTRAP_RESAMPLES, wanted))


def minimum_detectable(differences: Sequence[float], alpha: float) -> float | None:
    """(z(1 - alpha/2) + z(POWER)) * s_d / sqrt(n): a true mean difference this large is
    detected with 80 % chance; None below two pairs."""
    spread = sample_stdev(differences)
    if spread is None:
        return None
    normal = NormalDist()
    return (
        (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(POWER))
        * spread
        / math.sqrt(len(differences))
    )


def _paired(pairs: Sequence[Pair], metric: Metric) -> list[tuple[float, float]]:
    """(before, after) of the metric for the pairs where both calls have it."""
    out: list[tuple[float, float]] = []
    for pair in pairs:
        a, b = metric(pair.before), metric(pair.after)
        if a is not None and b is not None:
            out.append((a, b))
    return out


def _change(
    scope: Scope,
    name: str,
    pairs: Sequence[Pair],
    values: Sequence[tuple[float, float]],
    family: int,
) -> Change:
    differences = [b - a for a, b in values]
    alpha = ALPHA / max(1, family)
    n = len(differences)
    interval = (
        bootstrap_mean_interval(
            differences,
            seed=BOOTSTRAP_SEED,
            resamples=resamples_for(family),
            confidence=1 - alpha,
        )
        if n >= 2
        else None
    )
    p_value = sign_flip_p(differences, seed=BOOTSTRAP_SEED, resamples=resamples_for(family))
    better = sum(not p.before.passed and p.after.passed for p in pairs)
    worse = sum(p.before.passed and not p.after.passed for p in pairs)
    mark = _mark(interval, n, p_value if n else None, alpha)
    detectable = minimum_detectable(differences, alpha)
    return Change(
        scope=scope,
        name=name,
        pairs=n,
        mean_before=sum(a for a, _ in values) / n if n else None,
        mean_after=sum(b for _, b in values) / n if n else None,
        difference=sum(differences) / n if n else None,
        interval=interval,
        confidence=1 - alpha,
        p_value=p_value if n else None,
        mark=mark,
        detectable=detectable,
        flips_better=better,
        flips_worse=worse,
        flips_p=sign_test_p(better, worse),
        why=_why(mark, interval, n, detectable, 1 - alpha, p_value),
    )


def _mark(
    interval: tuple[float, float] | None, n: int, p_value: float | None, alpha: float
) -> Mark:
    """Changed only when both say so: the sign-flip test (exact under "no change", whatever
    the shape of the differences) and the bootstrap interval (how large the change is)."""
    if interval is None or p_value is None or n < MIN_PAIRS or p_value >= alpha:
        return NO_CHANGE
    low, high = interval
    if low > 0:
        return "improved"
    if high < 0:
        return "regressed"
    return NO_CHANGE


def _why(
    mark: Mark,
    interval: tuple[float, float] | None,
    n: int,
    detectable: float | None,
    confidence: float,
    p_value: float,
) -> str:
    level = f"{confidence * 100:.4g} %"
    if n == 0:
        return "no pairs with a score in both runs"
    if n < MIN_PAIRS:
        return f"n={n}: too few pairs to tell a change from noise (at least {MIN_PAIRS})"
    assert interval is not None  # n >= 2
    shown = f"{level} interval {interval[0]:+.2f} to {interval[1]:+.2f}, p={p_value:.2g}, n={n}"
    if mark != NO_CHANGE:
        return f"{shown}: excludes 0"
    if interval[0] <= 0 <= interval[1]:
        if detectable is not None and detectable == 0:
            return f"{shown}: every pair the same"
        smallest = "" if detectable is None else f"; could detect a change of ±{detectable:.2f}"
        return f"{shown}: includes 0{smallest}"
    # The pairs agree in direction, but too few of them differ to rule out chance: the
    # sign-flip test can go no lower than 2 / 2^(pairs that differ).
    return f"{shown}: p not below {1 - confidence:.2g}, too few pairs differ to rule out chance"


def _composite(call: CallResult) -> float | None:
    return call.composite


def _criteria(call: CallResult) -> set[str]:
    judgement = call.judgement
    if judgement is None:
        return set()
    return {cid for cid, result in judgement.criteria.items() if result.score is not None}


def _criterion(cid: str) -> Metric:
    def score(call: CallResult) -> float | None:
        judgement = call.judgement
        result = judgement.criteria.get(cid) if judgement is not None else None
        return None if result is None else result.score

    return score


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
