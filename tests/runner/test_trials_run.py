"""`trials`: K conversations per scenario with ids `scenario#n`, seeds from the run seed and
the id, so a (seed, scenario, trial) replays byte for byte and trials differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice import InputError, RunOptions, run_suite
from polygon_voice.compare.trials import trial_stats
from tests.cli.conftest import EXAMPLE_SUITE


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POLYGON_DB", raising=False)
    return tmp_path


def _turns(line: str) -> list[tuple[str, str, float]]:
    """What a conversation sounded like, without its id (trials differ in id anyway)."""
    data = json.loads(line)
    return [(t["speaker"], t["heard"], t["start"]) for t in data["turns"]]


def _run(out: str, seed: int, db: str) -> list[str]:
    result = run_suite(
        EXAMPLE_SUITE,
        trials=3,
        noise=0.6,
        seed=seed,
        scenarios=("change-quantity",),
        out=Path(out),
        db=db,
        run_probes=False,
    )
    assert [c.id for c in result.calls] == [f"change-quantity#{n}" for n in (1, 2, 3)]
    assert [c.trial for c in result.calls] == [1, 2, 3]
    return (Path(out) / "transcripts.jsonl").read_text().splitlines()


def test_trials_replay_per_seed_and_differ_from_each_other() -> None:
    first = _run("a", 5, "a.db")
    again = _run("b", 5, "b.db")
    assert first == again  # the same seed: the same three transcripts, byte for byte
    sounded = [_turns(line) for line in first]
    # Noise and latency are drawn per trial: no two trials of the scenario sound the same.
    assert len({json.dumps(s) for s in sounded}) == 3
    other_seed = _run("c", 6, "c.db")
    assert other_seed != first


def test_trials_override_repeat_and_reach_the_report() -> None:
    result = run_suite(EXAMPLE_SUITE, trials=2, scenarios=("crm-*",), out=Path("out"), db="r.db")
    assert len(result.calls) == 4
    rows = trial_stats(result.calls)
    assert [(r.scenario, r.trials) for r in rows] == [
        ("crm-timeout-then-retry", 2),
        ("crm-down", 2),
    ]
    report = json.loads(Path("out/report.json").read_text())
    assert [c["trial"] for c in report["conversations"]] == [1, 2, 1, 2]
    assert [r["scenario"] for r in report["trials"]["scenarios"]] == [
        "crm-timeout-then-retry",
        "crm-down",
    ]


def test_one_trial_keeps_the_plain_ids() -> None:
    result = run_suite(EXAMPLE_SUITE, trials=1, scenarios=("crm-down",), db="r.db")
    assert [(c.id, c.trial) for c in result.calls] == [("crm-down", 1)]


def test_trials_are_checked_and_kept_on_resume(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="trials must be at least 1"):
        RunOptions(trials=0)
    monkeypatch.setenv("POLYGON_MAX_REPEAT", "4")
    with pytest.raises(InputError, match=r"over the repeat limit of 4.*POLYGON_MAX_REPEAT"):
        run_suite(EXAMPLE_SUITE, trials=5, db="r.db")
    monkeypatch.delenv("POLYGON_MAX_REPEAT")
    monkeypatch.setenv("POLYGON_MAX_CALLS", "10")
    with pytest.raises(InputError, match="scenarios x trials"):
        run_suite(EXAMPLE_SUITE, trials=2, db="r.db")
    monkeypatch.delenv("POLYGON_MAX_CALLS")
    done = run_suite(EXAMPLE_SUITE, trials=2, scenarios=("crm-down",), db="r.db")
    with pytest.raises(InputError, match="started with --trials 2"):
        run_suite(EXAMPLE_SUITE, resume=done.run_id, trials=3, db="r.db")
    again = run_suite(EXAMPLE_SUITE, resume=done.run_id, db="r.db")
    assert again.calls_run == 0
    assert len(again.calls) == 2
