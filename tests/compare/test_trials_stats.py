"""pass^k, Wilson intervals, the sign test, the bootstrap and the per-scenario trial
statistics, against values worked out by hand."""

from __future__ import annotations

import json
import math

import pytest

from polygon_voice.api.results import CallResult, trial_of
from polygon_voice.compare.stats import (
    bootstrap_mean_interval,
    pass_hat_k,
    sample_stdev,
    sign_test_p,
    wilson_interval,
)
from polygon_voice.compare.trials import judge_spread, run_trials_summary, trial_stats
from polygon_voice.model.judgement import CriterionResult, Judgement


def judgement(
    composite: float | None,
    verdict: str = "pass",
    *,
    judge: str = "deterministic",
    repeats: int = 1,
    raw: list[str | None] | None = None,
) -> Judgement:
    return Judgement.model_validate(
        {
            "rubric_version": "v3",
            "judge": judge,
            "repeats": repeats,
            "criteria": {"goal_achievement": CriterionResult(score=4, status="scored")},
            "composite": composite,
            "verdict": verdict,
            "raw_answers": raw or [],
        }
    )


def call(
    scenario: str,
    trial: int,
    composite: float | None,
    verdict: str = "pass",
    *,
    end_reason: str = "agent_hangup",
    end_message: str = "",
    judged: Judgement | None = None,
) -> CallResult:
    return CallResult(
        id=f"{scenario}#{trial}",
        scenario=scenario,
        end_reason=end_reason,
        end_message=end_message,
        turns=4,
        tool_calls=1,
        judgement=judged or judgement(composite, verdict),
    )


def test_pass_hat_k_is_the_unbiased_estimator() -> None:
    # n = 4, c = 3: C(3,1)/C(4,1), C(3,2)/C(4,2) = 3/6, C(3,4) = 0.
    assert pass_hat_k(4, 3, 1) == pytest.approx(0.75)
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5)
    assert pass_hat_k(4, 3, 4) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_hat_k(8, 6, 3) == pytest.approx(20 / 56)
    assert pass_hat_k(3, 3, 4) is None  # fewer trials than k: nothing to say
    with pytest.raises(ValueError, match=r"within 0\.\.4"):
        pass_hat_k(4, 5, 1)
    with pytest.raises(ValueError, match="at least 1"):
        pass_hat_k(4, 2, 0)


def test_pass_hat_k_never_rises_with_k() -> None:
    for n in range(1, 9):
        for c in range(n + 1):
            values = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
            assert values == sorted(values, key=lambda v: -(v or 0.0))


def test_wilson_interval_against_known_values() -> None:
    assert wilson_interval(3, 4) == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert wilson_interval(0, 0) is None


def test_sign_test_p_values() -> None:
    assert sign_test_p(0, 0) == 1.0
    assert sign_test_p(5, 5) == 1.0
    assert sign_test_p(8, 0) == pytest.approx(2 / 256)  # 0.0078
    assert sign_test_p(0, 8) == pytest.approx(2 / 256)
    # 6 against 2: P(X <= 2) for Bin(8, 1/2) = (1 + 8 + 28) / 256, doubled.
    assert sign_test_p(6, 2) == pytest.approx(2 * 37 / 256)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    differences = [1.0, 2.0, 3.0, 4.0, 5.0, -1.0, 0.5, 2.5]
    first = bootstrap_mean_interval(differences, seed=7)
    assert first == bootstrap_mean_interval(differences, seed=7)
    assert first is not None
    low, high = first
    mean = sum(differences) / len(differences)
    assert low < mean < high
    assert low > 0  # every resample of a mostly positive sample stays above zero here
    assert bootstrap_mean_interval([3.0]) is None
    constant = bootstrap_mean_interval([2.0, 2.0, 2.0])
    assert constant == (2.0, 2.0)


def test_sample_stdev() -> None:
    assert sample_stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == pytest.approx(
        math.sqrt(32 / 7)
    )
    assert sample_stdev([1.0]) is None


def test_trial_numbers_are_read_from_the_conversation_id() -> None:
    assert trial_of("refund#3", "refund") == 3
    assert trial_of("refund", "refund") == 1  # run once, or stored before trials
    assert trial_of("refund#x", "refund") == 1
    assert trial_of("other#2", "refund") == 1
    assert trial_of("refund#" + "9" * 5000, "refund") == 1  # no long parse of hostile ids
    assert call("a", 4, 80.0).trial == 4
    assert call("a", 4, 80.0).to_dict()["trial"] == 4


def test_trial_stats_per_scenario() -> None:
    calls = [
        call("a", 1, 90.0),
        call("a", 2, 80.0),
        call("a", 3, 40.0, "fail"),
        call("a", 4, 90.0),
        call("b", 1, 70.0, "warn"),
    ]
    a, b = trial_stats(calls)
    assert (a.scenario, a.trials, a.passes) == ("a", 4, 3)
    assert a.pass_rate == pytest.approx(0.75)
    assert a.pass_rate_interval == pytest.approx((0.3006, 0.9544), abs=1e-4)
    assert a.pass_hat_k == {1: pytest.approx(0.75), 2: pytest.approx(0.5), 4: 0.0}
    assert not a.passed_every_trial
    assert a.mean_composite == pytest.approx(75.0)
    assert a.trial_spread == pytest.approx(sample_stdev([90.0, 80.0, 40.0, 90.0]))
    assert a.composite_interval is not None
    assert a.judge_spread is None  # one judge repeat: no judge spread to show
    assert (b.trials, b.passes, b.pass_hat_k[2], b.trial_spread) == (1, 0, None, None)
    summary = run_trials_summary(calls)
    assert (summary.scenarios, summary.trials, summary.passes) == (2, 5, 3)
    # pass^1 averages both scenarios (0.75 and 0); pass^2 only the one with 2+ trials.
    assert summary.pass_hat_k[1] == pytest.approx(0.375)
    assert summary.pass_hat_k[2] == pytest.approx(0.5)
    assert summary.pass_hat_k_scenarios == {1: 2, 2: 1, 4: 1}
    assert summary.max_trials == 4
    assert json.dumps(summary.to_dict())  # plain JSON data


def test_infrastructure_failures_are_left_out_and_counted() -> None:
    calls = [
        call("a", 1, 90.0),
        call("a", 2, None, "unscored", end_reason="caller_hangup",
             end_message="the caller failed: model timed out"),
        call("a", 3, 85.0),
    ]  # fmt: skip
    (a,) = trial_stats(calls)
    assert (a.trials, a.infra_failures, a.passes) == (2, 1, 2)
    assert a.passed_every_trial  # the failed call is no failed trial
    assert a.pass_hat_k[2] == 1.0


def test_an_expected_outcome_not_met_is_no_pass() -> None:
    from polygon_voice.model import ExpectResult

    missed = CallResult(
        id="a#1",
        scenario="a",
        end_reason="agent_hangup",
        end_message="",
        turns=3,
        tool_calls=0,
        judgement=judgement(90.0, "pass"),
        expect=ExpectResult(source="expect", met=False),
    )
    assert not missed.passed
    assert call("a", 2, 90.0).passed
    assert not call("a", 3, 60.0, "warn").passed


def test_judge_spread_is_read_from_the_stored_repeats() -> None:
    def answer(score: int) -> str:
        criteria = {
            cid: {"score": score, "evidence": "", "reason": ""}
            for cid in (
                "goal_achievement", "instruction_following", "tool_use_quality",
                "factual_accuracy", "dialogue_quality", "robustness", "safety_compliance",
                "persona_tone",
            )
        }  # fmt: skip
        return json.dumps({"criteria": criteria})

    # Every criterion 5, 3 and 4 across three repeats: composites 100, 50 and 75.
    repeated = judgement(75.0, judge="llm", repeats=3, raw=[answer(5), answer(3), answer(4)])
    assert judge_spread(repeated) == pytest.approx(25.0)
    assert judge_spread(judgement(75.0, repeats=3)) == 0.0  # deterministic: the same each time
    assert judge_spread(judgement(75.0, judge="llm")) is None
    unreadable = judgement(75.0, judge="llm", repeats=2, raw=["not json", answer(5)])
    assert judge_spread(unreadable) is None  # one readable repeat: no spread
