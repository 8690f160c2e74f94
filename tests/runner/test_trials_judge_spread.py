"""The judge's spread kept apart from the trials' spread, against the fake LLM server: a
judge model that scores one call 5, 3 and 4 on its three repeats has a spread of 25 points
while two trials judged alike have none."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice import run_suite
from polygon_voice.compare.trials import trial_stats
from polygon_voice.judge.rubric import V3
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE


def answer(score: int) -> dict[str, object]:
    criteria = {c.id: {"score": score, "evidence": "", "reason": "r"} for c in V3.criteria}
    return {"criteria": criteria}


@pytest.fixture
def judge_server() -> Iterator[FakeLLMServer]:
    # The n-th judge request; one call at a time, each judged three times in a row.
    rules = [Rule(role="judge", call=n, json=answer((5, 3, 4)[(n - 1) % 3])) for n in range(1, 7)]
    server = FakeLLMServer(rules).start()
    yield server
    server.stop()


def test_judge_spread_and_trial_spread_are_apart(
    judge_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"llm:\n  judge:\n    model: fake\n    base_url: {judge_server.base_url}\n"
        "    max_retries: 0\n    cache: false\n"
    )
    result = run_suite(
        EXAMPLE_SUITE,
        scenarios=("crm-down",),
        trials=2,
        judge="llm",
        judge_repeats=3,
        llm_config=config,
        concurrency=1,
        run_probes=False,
        out=tmp_path / "out",
        db="j.db",
    )
    assert [c.judgement.repeats for c in result.calls if c.judgement] == [3, 3]
    (row,) = trial_stats(result.calls)
    assert row.trials == 2
    # Composites 100, 50 and 75 across the repeats: a sample stdev of 25 for each call.
    assert row.judge_spread == pytest.approx(25.0)
    # Both trials' medians are 4 everywhere: the agent's side does not move at all.
    assert row.trial_spread == pytest.approx(0.0)
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [c["judgement"]["judge_spread"] for c in report["conversations"]] == [25.0, 25.0]
    assert report["trials"]["scenarios"][0]["judge_spread"] == pytest.approx(25.0)
