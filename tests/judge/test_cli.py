"""`polygon run` with the judge: report fields, rubric choice, the terminal summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import EXAMPLE_SUITE, Polygon

CRITERIA = {
    "goal_achievement", "instruction_following", "tool_use_quality", "factual_accuracy",
    "dialogue_quality", "robustness", "safety_compliance", "persona_tone",
}  # fmt: skip


def _report(polygon: Polygon, tmp_path: Path, *args: str) -> dict[str, object]:
    code, out, err = polygon("run", str(EXAMPLE_SUITE), "--out", "report", *args)
    assert code == 0, err
    assert "Verdicts" in out
    assert "mean composite" in out
    return json.loads((tmp_path / "report" / "report.json").read_text())  # type: ignore[no-any-return]


def test_every_conversation_has_a_judgement(polygon: Polygon, tmp_path: Path) -> None:
    report = _report(polygon, tmp_path)
    conversations = report["conversations"]
    assert isinstance(conversations, list)
    assert len(conversations) == 9
    for entry in conversations:
        judgement = entry["judgement"]
        assert judgement["rubric_version"] == "v3"
        assert judgement["judge"] == "deterministic"
        assert set(judgement["criteria"]) == CRITERIA
        for criterion in judgement["criteria"].values():
            assert {"score", "evidence", "status"} <= set(criterion)
        assert judgement["verdict"] in ("pass", "warn", "fail")
        assert isinstance(judgement["composite"], float)
        assert judgement["partial"] is False
        assert isinstance(judgement["gates_failed"], list)
        assert entry["checks"]["loop_detected"] is False
        assert entry["checks"]["turns"] > 0
    summary = report["summary"]
    assert isinstance(summary, dict)
    assert sum(summary["verdicts"].values()) == 9


def test_the_rubric_and_repeats_are_recorded(polygon: Polygon, tmp_path: Path) -> None:
    report = _report(polygon, tmp_path, "--rubric", "v1", "--judge-repeats", "3")
    first = report["conversations"][0]["judgement"]  # type: ignore[index]
    assert first["rubric_version"] == "v1"
    assert first["repeats"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--judge", "llm"), "POLYGON_JUDGE_MODEL"),
        (("--rubric", "v7"), "not a built-in rubric"),
    ],
)
def test_bad_judge_options_are_refused(
    polygon: Polygon, args: tuple[str, ...], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("POLYGON_JUDGE_MODEL", "POLYGON_BASE_URL"):
        monkeypatch.delenv(name, raising=False)  # --judge llm without a judge model
    code, _, err = polygon("run", str(EXAMPLE_SUITE), *args)
    assert code != 0
    assert message in err
