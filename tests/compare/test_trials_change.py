"""Telling a change from noise: the sign-flip test, the marks on planted cases, and
`polygon compare --fail-on-regression` on real runs."""

from __future__ import annotations

import json
import random
from itertools import product
from pathlib import Path

import pytest

from polygon_voice import run_suite
from polygon_voice.api.results import CallResult
from polygon_voice.compare.change import MIN_PAIRS, NO_CHANGE, detect_changes, minimum_detectable
from polygon_voice.compare.stats import sign_flip_p
from polygon_voice.model.judgement import CriterionResult, Judgement
from polygon_voice.store import Store, resolve_db_url
from tests.cli.conftest import EXAMPLE_SUITE, Polygon


def call(scenario: str, trial: int, composite: float, goal: float = 4.0) -> CallResult:
    verdict = "pass" if composite >= 75 else "fail"
    judgement = Judgement.model_validate(
        {
            "rubric_version": "v3",
            "judge": "deterministic",
            "criteria": {"goal_achievement": CriterionResult(score=goal, status="scored")},
            "composite": composite,
            "verdict": verdict,
        }
    )
    return CallResult(
        id=f"{scenario}#{trial}",
        scenario=scenario,
        end_reason="agent_hangup",
        end_message="",
        turns=4,
        tool_calls=1,
        judgement=judgement,
    )


def test_sign_flip_p_is_exact_on_small_cases() -> None:
    # Five +19 and five zeros: only the all-plus and all-minus patterns of the five nonzero
    # differences reach |95|: 2 of 32.
    assert sign_flip_p([19.0] * 5 + [0.0] * 5) == pytest.approx(2 / 32)
    # 1..4: sums with |s| >= 10 are the all-plus and all-minus patterns: 2 of 16.
    assert sign_flip_p([1.0, 2.0, 3.0, 4.0]) == pytest.approx(2 / 16)
    # By enumeration for a mixed case.
    values = [1.0, -2.0, 3.0, 0.5, 2.5]
    observed = abs(sum(values))
    hits = sum(
        abs(sum(v * s for v, s in zip(values, signs, strict=True))) >= observed - 1e-12
        for signs in product((1, -1), repeat=len(values))
    )
    assert sign_flip_p(values) == pytest.approx(hits / 32)
    assert sign_flip_p([0.0, 0.0]) == 1.0


def test_sign_flip_p_samples_when_the_sums_are_too_many() -> None:
    # 40 values in general position: every sign pattern sums differently, too many to count.
    rng = random.Random(1)
    values = [1 + rng.random() for _ in range(40)]
    p = sign_flip_p(values, seed=3, resamples=2000)
    assert p == sign_flip_p(values, seed=3, resamples=2000)  # seeded
    assert p == pytest.approx(1 / 2001)  # all positive: no random pattern reaches the sum
    mixed = [v if i % 2 else -v for i, v in enumerate(values)]
    assert sign_flip_p(mixed, seed=3, resamples=2000) > 0.05


def test_minimum_detectable_effect_formula() -> None:
    differences = [1.0, -1.0, 3.0, -3.0, 0.0]  # sample sd sqrt(5)
    expected = (1.959964 + 0.841621) * 5**0.5 / 5**0.5
    assert minimum_detectable(differences, 0.05) == pytest.approx(expected, rel=1e-4)
    assert minimum_detectable([2.0], 0.05) is None


def test_a_planted_regression_is_detected_and_named() -> None:
    before = [call(s, t, 90.0 + t, goal=5) for s in ("a", "b", "c") for t in range(1, 11)]
    after = [call(s, t, 60.0 + t, goal=2) for s in ("a", "b", "c") for t in range(1, 11)]
    report = detect_changes(before, after, before_id="A", after_id="B")
    assert report.pairs == 30
    assert report.overall.mark == "regressed"
    assert report.overall.difference == pytest.approx(-30.0)
    assert report.overall.interval is not None
    assert report.overall.interval[1] < 0
    assert (report.overall.flips_better, report.overall.flips_worse) == (0, 30)
    assert [c.mark for c in report.criteria] == ["regressed"]  # goal_achievement 5 -> 2
    assert {c.name: c.mark for c in report.scenarios} == dict.fromkeys("abc", "regressed")
    names = report.to_dict()["regressions"]
    assert names[0] == "overall composite"
    assert "criterion goal_achievement" in names
    assert "scenario a" in names
    # Six trials a scenario all 30 points worse are still too few for a scenario's mark:
    # the sign-flip test cannot go below 2/64, above the family's 0.05/3.
    short = detect_changes(before[:6], after[:6])
    (scenario,) = short.scenarios
    assert scenario.mark == NO_CHANGE
    assert "too few pairs differ to rule out chance" in scenario.why
    # The same the other way round is an improvement, never a regression.
    improved = detect_changes(after, before)
    assert improved.overall.mark == "improved"
    assert improved.regressions == []


def test_noise_around_one_level_is_no_detectable_change() -> None:
    # Both runs draw from the same values; trial n is paired with trial n.
    scores = [80.0, 95.0, 70.0, 88.0, 92.0, 75.0, 85.0, 90.0]
    before = [call(s, t, scores[(t + i) % 8]) for i, s in enumerate("abcd") for t in range(1, 9)]
    after = [
        call(s, t, scores[(t + 3 * i + 1) % 8]) for i, s in enumerate("abcd") for t in range(1, 9)
    ]
    report = detect_changes(before, after)
    assert report.overall.mark == NO_CHANGE
    assert report.overall.detectable is not None
    assert report.overall.detectable > 0
    assert f"could detect a change of ±{report.overall.detectable:.2f}" in report.overall.why
    assert report.regressions == []


def test_few_pairs_say_why_they_cannot_tell() -> None:
    before = [call("a", t, 90.0) for t in range(1, MIN_PAIRS)]
    after = [call("a", t, 40.0) for t in range(1, MIN_PAIRS)]
    (scenario,) = detect_changes(before, after).scenarios
    assert scenario.mark == NO_CHANGE
    assert scenario.why.startswith(f"n={MIN_PAIRS - 1}: too few pairs")


def test_calls_are_paired_by_scenario_and_trial_and_failures_left_out() -> None:
    before = [call("a", 1, 80.0), call("a", 2, 80.0), call("b", 1, 80.0)]
    broken = CallResult(
        id="a#2",
        scenario="a",
        end_reason="caller_hangup",
        end_message="the caller failed: model down",
        turns=0,
        tool_calls=0,
    )
    after = [call("a", 1, 70.0), broken, call("c", 1, 80.0)]
    report = detect_changes(before, after)
    assert report.pairs == 1  # a#1 only: a#2 failed, b and c have no partner
    assert report.unpaired == 4


@pytest.fixture
def two_versions(polygon: Polygon) -> dict[str, str]:
    """Three runs of the three-layer suite: robust twice (other seeds) and flawed once."""
    versions = (("reference:robust", "1"), ("reference:robust", "2"), ("reference:flawed", "3"))
    for agent, seed in versions:
        code, _, err = polygon("run", "three-layer", "--agent", agent, "--seed", seed,
                               "--trials", "2", "--no-probes", "-q")  # fmt: skip
        assert code == 0, err
    with Store(resolve_db_url(str(polygon.db))) as store:
        runs = sorted(store.list_runs(), key=lambda r: r.seed)
    return {"robust": runs[0].id, "robust_again": runs[1].id, "flawed": runs[2].id}


def test_compare_tells_noise_from_a_planted_regression(
    polygon: Polygon, two_versions: dict[str, str]
) -> None:
    robust, again, flawed = (two_versions[k] for k in ("robust", "robust_again", "flawed"))
    code, out, err = polygon("compare", robust, again, "--fail-on-regression", "--out", "same")
    assert code == 0, err
    same = json.loads((polygon.workdir / "same" / "compare.json").read_text())
    (change,) = same["changes"]
    assert change["overall"]["mark"] == NO_CHANGE
    assert change["regressions"] == []
    assert "no detectable change" in out

    code, out, err = polygon("compare", robust, flawed, "--fail-on-regression", "--json")
    assert code == 1
    result = json.loads(out)
    (change,) = result["changes"]
    assert change["overall"]["mark"] == "regressed"
    assert change["pairs"] == 60  # 30 scenarios x 2 trials
    assert "regressed: overall composite" in err
    assert f"run {flawed} against {robust}" in err
    # Without the flag, a regression is reported but the exit code stays 0.
    code, out, _ = polygon("compare", robust, flawed)
    assert code == 0
    assert "REGRESSED" in out
    # The other way round the flawed agent's successor improved: no regression to fail on.
    code, _, err = polygon("compare", flawed, robust, "--fail-on-regression", "-q")
    assert code == 0, err


def test_one_config_under_two_seeds_with_noise_is_no_detectable_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Recognition noise makes each trial a different draw (composites vary from trial to
    # trial); the agent and the suite are the same, so nothing may be marked.
    monkeypatch.chdir(tmp_path)
    calls = [
        run_suite(EXAMPLE_SUITE, seed=seed, trials=5, noise=0.5, db="n.db", write_files=False,
                  run_probes=False).calls
        for seed in (11, 12)
    ]  # fmt: skip
    composites = {c.composite for c in calls[0]}
    assert len(composites) > 2  # the noise does move the scores
    report = detect_changes(*calls)
    assert report.pairs == 45
    assert report.overall.mark == NO_CHANGE
    assert report.regressions == []
    assert all(c.mark == NO_CHANGE for c in (*report.criteria, *report.scenarios))
    assert report.overall.detectable is not None


def test_many_pairs_use_the_normal_approximation_of_the_same_test() -> None:
    from polygon_voice.compare.stats import _exact_sign_flip

    # 60 differences on a small grid, tilted a little upwards: p near the usual levels.
    rng = random.Random(5)
    values = [rng.choice([1.0, 2.0, 3.0, -1.0, -2.0, -3.0, 1.0]) for _ in range(60)]
    observed = abs(sum(values)) - 1e-9
    exact = _exact_sign_flip(values, observed)
    assert exact is not None
    assert 0.001 < exact < 0.5
    assert sign_flip_p(values) == pytest.approx(exact, rel=0.15)


def test_calls_sharing_scenario_and_trial_pair_in_stored_order() -> None:
    # Imported real calls: several per scenario, none numbered (all trial 1).
    def real(n: int, composite: float) -> CallResult:
        plain = call("refund", 1, composite)
        return CallResult(**{**plain.__dict__, "id": f"call-{n}"})

    before = [real(n, 90.0) for n in range(6)]
    after = [real(n, 90.0 - n) for n in range(6)]
    report = detect_changes(before, after)
    assert report.pairs == 6  # each once, not every call against the last
    assert report.overall.difference == pytest.approx(-2.5)
