"""A criterion's record is built without a second validation only from values of its own
types; it equals the validated record, and anything else is still validated (and refused)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from polygon_voice.judge.base import RawScore, _criterion_result
from polygon_voice.judge.composite import CriterionOutcome
from polygon_voice.model.judgement import CriterionResult


def _validated(outcome: CriterionOutcome, raw: RawScore | None) -> CriterionResult:
    return CriterionResult(
        score=outcome.score,
        status=outcome.status,
        evidence=raw.evidence if raw else "",
        turn=raw.turn if raw else None,
        reason=raw.reason if raw else "not returned by the judge",
        evidence_found=raw.evidence_found if raw else None,
    )


@pytest.mark.parametrize(
    ("outcome", "raw"),
    [
        (CriterionOutcome(4, "scored"), RawScore(4, "said it", 3, "ok")),
        (CriterionOutcome(4.5, "scored"), RawScore(4, "", None, "", True)),
        (CriterionOutcome(None, "unscored"), RawScore(None, reason="not judged")),
        (CriterionOutcome(None, "not_applicable"), None),
    ],
)
def test_a_record_of_plain_values_equals_the_validated_one(
    outcome: CriterionOutcome, raw: RawScore | None
) -> None:
    built = _criterion_result(outcome, raw)
    expected = _validated(outcome, raw)
    assert built == expected
    assert built.model_dump_json() == expected.model_dump_json()  # 4 is stored as 4.0


def test_a_value_of_another_type_is_validated_and_refused() -> None:
    raw = RawScore(4, evidence="x", turn="three", reason="ok")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="turn"):
        _criterion_result(CriterionOutcome(4, "scored"), raw)
    with pytest.raises(ValidationError, match="status"):
        _criterion_result(CriterionOutcome(4, "great"), RawScore(4))  # type: ignore[arg-type]
