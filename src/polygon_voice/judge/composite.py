"""The composite score (RUB-2..5): missing counts as 1, unreadable is left out and flagged.

Arithmetic is done in fractions so that a band edge (75, 50) is never missed by a float
rounding error: 25 * 3/4 + ... is exactly 75, not 74.99999.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from polygon_voice.judge.rubric import Rubric
from polygon_voice.model.judgement import CriterionStatus, Verdict

PASS_FROM = 75
WARN_FROM = 50
MIN_SCORE, MAX_SCORE = 1, 5


class NotApplicable:
    """A judge's answer for a criterion the record cannot tell (IMP-2): never a score."""

    def __repr__(self) -> str:
        return "NOT_APPLICABLE"


NOT_APPLICABLE = NotApplicable()


def read_score(raw: object) -> int | None:
    """A judge's raw score as an integer 1-5, or None when it cannot be read (RUB-4).

    JSON integers are read, and a number with a zero fraction (4.0: JSON Schema's `integer`
    accepts it, and it is the same number). Text ("4"), booleans, fractions (3.5),
    out-of-range values and anything else are not: the answer format asks for an integer,
    and a model that sends text did not follow it, so reading it would guess.
    """
    if isinstance(raw, bool | str):
        return None
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    if isinstance(raw, int) and MIN_SCORE <= raw <= MAX_SCORE:
        return raw
    return None


def median(values: Sequence[float]) -> float:
    """The median; for an even count the mean of the two middle values (RUB-5)."""
    if not values:
        raise ValueError("the median of no values")
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


@dataclass(frozen=True)
class CriterionOutcome:
    """A criterion after reading: its score (None when unscored) and status."""

    score: float | None
    status: CriterionStatus


@dataclass
class Composite:
    """The composite over the scored criteria, its band and what was left out."""

    criteria: dict[str, CriterionOutcome]
    value: float | None
    unscored: list[str] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """True when some criterion was unscored, so the weights were renormalised (RUB-4a).

        A not-applicable criterion is left out too, but it is no judge's failure to score."""
        return bool(self.unscored)

    @property
    def band(self) -> Verdict:
        """pass from 75, warn from 50, else fail; `unscored` when nothing could be scored."""
        if self.value is None:
            return "unscored"
        if self.value >= PASS_FROM:
            return "pass"
        return "warn" if self.value >= WARN_FROM else "fail"


def combine_repeats(
    rubric: Rubric, repeats: Sequence[Mapping[str, object]]
) -> dict[str, CriterionOutcome]:
    """Each criterion over k judge runs: median of the readable scores (RUB-3..5).

    A run that did not return a criterion gives it 1 (RUB-3); an unreadable value is left
    out; a criterion no run scored readably is `unscored` (if some run returned it) or
    `missing` (if none did, so it counts as 1).
    """
    if not repeats:
        raise ValueError("no judge runs to combine")
    if len(repeats) == 1:
        return _one_run(rubric, repeats[0])
    return _many_runs(rubric, repeats)


def _many_runs(
    rubric: Rubric, repeats: Sequence[Mapping[str, object]]
) -> dict[str, CriterionOutcome]:
    out: dict[str, CriterionOutcome] = {}
    for criterion in rubric.criteria:
        returned = [run[criterion.id] for run in repeats if criterion.id in run]
        if any(isinstance(raw, NotApplicable) for raw in returned):
            # Whether a criterion applies is read from the record, the same in every repeat;
            # never counted as missing (1) for the repeats that left it out.
            out[criterion.id] = CriterionOutcome(None, "not_applicable")
            continue
        readable = [read_score(raw) for raw in returned]
        scores = [float(s) for s in readable if s is not None]
        scores += [float(MIN_SCORE)] * (len(repeats) - len(returned))
        if not returned:
            out[criterion.id] = CriterionOutcome(float(MIN_SCORE), "missing")
        elif len(scores) == len(repeats) - len(returned):
            out[criterion.id] = CriterionOutcome(None, "unscored")
        else:
            out[criterion.id] = CriterionOutcome(median(scores), "scored")
    return out


_UNSCORED = CriterionOutcome(None, "unscored")
_NOT_APPLICABLE = CriterionOutcome(None, "not_applicable")
_MISSING = CriterionOutcome(float(MIN_SCORE), "missing")
_ABSENT = object()
# The outcome of each whole score, made once: the records are frozen, so one serves every call.
_SCORED = {n: CriterionOutcome(float(n), "scored") for n in range(MIN_SCORE, MAX_SCORE + 1)}


def _one_run(rubric: Rubric, run: Mapping[str, object]) -> dict[str, CriterionOutcome]:
    """`combine_repeats` of a single run (k = 1, the default): the median of one readable
    score is that score, so each criterion is read once, with no lists to combine."""
    out: dict[str, CriterionOutcome] = {}
    for criterion in rubric.criteria:
        raw = run.get(criterion.id, _ABSENT)
        if raw is _ABSENT:
            out[criterion.id] = _MISSING
        elif isinstance(raw, NotApplicable):
            out[criterion.id] = _NOT_APPLICABLE
        else:
            score = read_score(raw)
            if score is None:
                out[criterion.id] = _UNSCORED
            else:
                out[criterion.id] = _SCORED.get(score) or CriterionOutcome(float(score), "scored")
    return out


def composite(rubric: Rubric, criteria: Mapping[str, CriterionOutcome]) -> Composite:
    """Sum of weight * (score - 1)/4 over the scored (and missing) criteria, renormalised to 100;
    not-applicable criteria are left out like unscored ones."""
    # Exact arithmetic, so that a composite of exactly 75 is a pass; whole scores (all a
    # deterministic judge gives) add up as integers, only the rest as fractions.
    whole = 0
    total = Fraction(0)
    weight_used = 0
    unscored: list[str] = []
    not_applicable: list[str] = []
    filled: dict[str, CriterionOutcome] = {}
    for criterion in rubric.criteria:
        outcome = criteria.get(criterion.id, _MISSING)  # frozen: one record serves them all
        filled[criterion.id] = outcome
        if outcome.status == "not_applicable":
            not_applicable.append(criterion.id)
            continue
        if outcome.score is None:
            unscored.append(criterion.id)
            continue
        weight_used += criterion.weight
        if outcome.score.is_integer():
            whole += criterion.weight * (int(outcome.score) - MIN_SCORE)
        else:
            total += criterion.weight * (Fraction(outcome.score) - MIN_SCORE)
    scale = weight_used * (MAX_SCORE - MIN_SCORE)
    if weight_used == 0:
        value = None
    elif not total:
        # Whole scores only: one integer division, rounded once as the fraction's float is.
        value = whole * 100 / scale
    else:
        value = float((total + whole) * 100 / scale)
    return Composite(filled, value, unscored, not_applicable)


def composite_of(rubric: Rubric, scores: Mapping[str, object]) -> Composite:
    """The composite of one judge run's raw scores (a shorthand for k = 1)."""
    return composite(rubric, combine_repeats(rubric, [scores]))
