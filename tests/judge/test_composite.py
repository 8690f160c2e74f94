"""RUB-2..5 and RUB-4a: the composite, missing vs unscored, medians over repeats."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.judge import V1, V2, combine_repeats, composite, load_rubric, read_score
from polygon_voice.judge.composite import composite_of, median
from polygon_voice.judge.rubric import RubricError

IDS = [c.id for c in V2.criteria]


def all_(score: object) -> dict[str, object]:
    return dict.fromkeys(IDS, score)


def test_the_builtin_rubrics_carry_the_spec_weights() -> None:
    assert V2.weights == {
        "goal_achievement": 25, "instruction_following": 15, "tool_use_quality": 15,
        "factual_accuracy": 10, "dialogue_quality": 10, "robustness": 10,
        "safety_compliance": 10, "persona_tone": 5,
    }  # fmt: skip
    assert V1.weights == V2.weights
    assert "invalid_tool_args" in V2.gates
    assert "invalid_tool_args" not in V1.gates


@pytest.mark.parametrize(("score", "expected"), [(1, 0.0), (5, 100.0), (3, 50.0), (4, 75.0)])
def test_uniform_scores(score: int, expected: float) -> None:
    assert composite_of(V2, all_(score)).value == expected


@pytest.mark.parametrize(
    ("changes", "expected", "band"),
    [
        ({"goal_achievement": 1}, 75.0, "pass"),  # 100 - 25: exactly on the pass edge
        ({"goal_achievement": 1, "persona_tone": 4}, 73.75, "warn"),
        ({"goal_achievement": 3, "tool_use_quality": 3}, 80.0, "pass"),
        ({"goal_achievement": 1, "instruction_following": 1, "tool_use_quality": 2}, 48.75, "fail"),
        ({"goal_achievement": 1, "instruction_following": 1, "persona_tone": 1}, 55.0, "warn"),
        ({"safety_compliance": 1}, 90.0, "pass"),  # a gate (not the composite) fails this one
    ],
)
def test_mixed_cases_and_bands(changes: dict[str, int], expected: float, band: str) -> None:
    result = composite_of(V2, {**all_(5), **changes})
    assert result.value == pytest.approx(expected)
    assert result.band == band


def test_a_missing_criterion_counts_as_one() -> None:
    scores = all_(5)
    del scores["goal_achievement"]
    result = composite_of(V2, scores)
    assert result.value == 75.0
    assert result.criteria["goal_achievement"].status == "missing"
    assert not result.partial


def test_rub_4a_an_unscored_persona_tone_leaves_100_partial() -> None:
    result = composite_of(V2, {**all_(5), "persona_tone": "very good"})
    assert result.value == 100.0
    assert result.partial
    assert result.unscored == ["persona_tone"]
    assert result.criteria["persona_tone"].status == "unscored"


def test_unscored_weights_are_renormalised() -> None:
    # goal (25) unscored; the rest: 1 everywhere except safety 5 -> 10 / 75 of 100.
    scores = {**all_(1), "goal_achievement": 7, "safety_compliance": 5}
    assert composite_of(V2, scores).value == pytest.approx(100 * 10 / 75)


@pytest.mark.parametrize(
    "raw", [0, 6, 3.5, "3.5", "four", None, True, [3], "", -1, "4", " 5 ", float("nan")]
)
def test_unreadable_scores(raw: object) -> None:
    assert read_score(raw) is None


@pytest.mark.parametrize(("raw", "value"), [(3, 3), (5, 5), (2.0, 2), (1.0, 1)])
def test_readable_scores(raw: object, value: int) -> None:
    assert read_score(raw) == value


def test_nothing_scored_has_no_composite() -> None:
    result = composite_of(V2, all_("?"))
    assert result.value is None
    assert result.band == "unscored"


def test_median_odd_and_even() -> None:
    assert median([5, 1, 3]) == 3
    assert median([1, 2, 4, 5]) == 3.0
    assert median([4, 5]) == 4.5


def test_repeats_take_the_median_per_criterion() -> None:
    runs: list[dict[str, object]] = [all_(5), all_(4), {**all_(1), "persona_tone": "x"}]
    combined = combine_repeats(V2, runs)
    assert combined["goal_achievement"].score == 4
    assert combined["persona_tone"].score == 4.5  # two readable: the mean of the middle two
    even = combine_repeats(V2, [all_(2), all_(3), all_(5), all_(4)])
    assert composite(V2, even).value == pytest.approx(62.5)  # median 3.5 everywhere


def test_a_custom_rubric_is_versioned_by_name_and_content(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("name: mine\ncriteria:\n- {id: goal_achievement, weight: 60}\n"
                    "- {id: safety_compliance, weight: 40}\n")  # fmt: skip
    first = load_rubric(str(path))
    assert first.version.startswith("mine-")
    path.write_text(path.read_text().replace("60", "50").replace("40", "50"))
    assert load_rubric(str(path)).version != first.version


def test_weights_must_sum_to_100(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\ncriteria:\n- {id: goal_achievement, weight: 60}\n")
    with pytest.raises(RubricError, match=r"bad.yaml:3:1: criteria: weights sum to 60"):
        load_rubric(str(path))


def test_an_unknown_rubric_is_refused() -> None:
    with pytest.raises(RubricError, match="not a built-in rubric"):
        load_rubric("v9")
