"""A criterion's record is built without a second validation only from values of its own
types; it equals the validated record, and anything else is still validated (and refused)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from polygon_voice.judge.base import RawScore, _criterion_result
from polygon_voice.judge.composite import CriterionOutcome
from polygon_voice.model.judgement import CriterionResult
from polygon_voice.model.trusted import trusted


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


class _Aliased(BaseModel):
    name: str = Field(alias="n")


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = ""


class _Private(BaseModel):
    name: str = ""
    _seen: int = PrivateAttr(default=3)


def test_a_trusted_record_is_the_one_model_construct_builds() -> None:
    fields: dict[str, Any] = {
        "score": 4.0,
        "status": "scored",
        "evidence": "said it",
        "turn": 3,
        "reason": "ok",
        "evidence_found": None,
    }
    built = trusted(CriterionResult, dict(fields))
    for expected in (CriterionResult.model_construct(**fields), CriterionResult(**fields)):
        assert built == expected
        assert built.model_fields_set == expected.model_fields_set
        assert built.__pydantic_extra__ == expected.__pydantic_extra__
        assert built.__pydantic_private__ == expected.__pydantic_private__
        assert repr(built) == repr(expected)
        assert built.model_dump_json() == expected.model_dump_json()
    assert built.model_copy(update={"turn": 4}).turn == 4


def test_a_model_or_values_trusted_cannot_build_go_to_model_construct() -> None:
    # A field left out (its default), or given out of order, and models with more to set.
    partial = trusted(CriterionResult, {"status": "missing"})
    assert partial == CriterionResult(status="missing")
    assert partial.model_fields_set == {"status"}
    shuffled = trusted(
        CriterionResult,
        {
            "status": "missing",
            "score": None,
            "evidence": "",
            "turn": None,
            "reason": "",
            "evidence_found": None,
        },
    )
    assert list(shuffled.__dict__) == list(CriterionResult.model_fields)
    assert trusted(_Aliased, {"n": "x"}).name == "x"
    assert trusted(_Extra, {"name": "x"}).__pydantic_extra__ == {}
    assert trusted(_Private, {"name": "x"})._seen == 3
