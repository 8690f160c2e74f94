"""`polygon run --judge llm`, `polygon rejudge`, resume consistency and the judgement view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.judge.judge_model import judge_failing_first


def _run(polygon: Polygon, *args: str, exit_code: int = 0) -> dict[str, Any]:
    code, out, err = polygon("run", str(EXAMPLE_SUITE), "--out", "report", *args)
    assert code == exit_code, err + out
    report: dict[str, Any] = json.loads((polygon.workdir / "report/report.json").read_text())
    return report


@pytest.fixture
def judge_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The judge role pointed at a fake server whose first judge call fails for good."""
    with judge_failing_first(monkeypatch, evidence="order") as server:
        yield server


def test_the_llm_judge_runs_and_a_model_error_leaves_one_call_unscored(
    polygon: Polygon, judge_model: FakeLLMServer
) -> None:
    # The judge model failed for one call: an infrastructure failure, exit 3 (docs/cli.md).
    report = _run(polygon, "--judge", "llm", exit_code=3)
    judgements = [c["judgement"] for c in report["conversations"]]
    assert len(judgements) == 9
    assert {j["judge"] for j in judgements} == {"llm"}
    unscored = [j for j in judgements if j["verdict"] == "unscored"]
    assert len(unscored) == 1
    assert unscored[0]["errors"]
    assert report["summary"]["verdicts"]["unscored"] == 1
    usage = report["llm_usage"]["judge"]
    assert usage["calls"] == 8
    assert usage["failed_calls"] == 1


def test_rejudge_adds_a_named_set_and_keeps_the_first(polygon: Polygon, tmp_path: Path) -> None:
    run_id = _run(polygon)["run_id"]
    code, out, err = polygon("rejudge", run_id, "--rubric", "v1", "--out", "rj")
    assert code == 0, err
    assert "v1:deterministic:1" in out
    assert "mean composite" in out
    code, out, err = polygon("rejudge", run_id, "--rubric", "v1")
    assert code == 0, err
    assert "v1:deterministic:1#2" in out
    with Store(f"sqlite:///{polygon.db}") as store:
        names = store.stage_result_names(run_id, "judge")
        assert names == ["", "v1:deterministic:1", "v1:deterministic:1#2"]
        first = [d["rubric_version"] for _, d in store.iter_stage_results(run_id, "judge")]
    assert set(first) == {"v3"}  # the run's own v3 verdicts are untouched
    report = json.loads((tmp_path / "rj" / "report.json").read_text())
    assert report["judgement_set"] == "v1:deterministic:1"
    assert {c["judgement"]["rubric_version"] for c in report["conversations"]} == {"v1"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--rubric", "v1"), "rubric v3"),
        (("--judge-repeats", "2"), "--judge-repeats 1"),
        (("--judge", "llm"), "--judge deterministic"),
    ],
)
def test_resume_refuses_other_judge_options(
    polygon: Polygon, args: tuple[str, ...], message: str
) -> None:
    run_id = _run(polygon)["run_id"]
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--resume", run_id, *args)
    assert code != 0
    assert message in err
    assert "resume it with the same" in err


def test_resume_keeps_the_runs_own_judge_options(polygon: Polygon) -> None:
    run_id = _run(polygon, "--rubric", "v1", "--judge-repeats", "3")["run_id"]
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--resume", run_id)
    assert code == 0, err
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--resume", run_id, "--rubric", "v1")
    assert code == 0, err


def test_show_prints_the_judgement_after_the_timeline(polygon: Polygon) -> None:
    run_id = _run(polygon)["run_id"]
    code, out, err = polygon("show", run_id, "--conversation", "change-quantity")
    assert code == 0, err
    assert out.index("end") < out.index("Judgement (deterministic judge, rubric v3")
    for text in ("goal_achievement", "persona_tone", "scored", "composite", "verdict"):
        assert text in out
    polygon("rejudge", run_id, "--rubric", "v1")
    code, out, _ = polygon("show", run_id)
    assert "v1:deterministic:1" in out
    code, out, err = polygon(
        "show", run_id, "-c", "change-quantity", "--judgement-set", "v1:deterministic:1"
    )
    assert code == 0, err
    assert "rubric v1" in out
