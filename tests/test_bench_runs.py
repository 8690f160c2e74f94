"""bench/engine.py runs and its figures add up (a sanity check of the benchmark, not timed)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.engine import load_example, measure_memory, measure_timing, run_pass, suite_for


def test_a_full_pass_stores_every_simulated_turn(tmp_path: Path) -> None:
    loaded, factory = load_example()
    suite = suite_for(loaded, 9)
    result = run_pass(suite, factory, store_dir=tmp_path, time_agent=True, write_files=True)
    assert result.kind == "agent_timed"
    assert result.conversations == result.stored_conversations == 9
    assert result.turns == result.stored_turns
    assert result.turns > 9
    assert sum(result.end_reasons.values()) == 9
    assert result.turns_per_s > 0
    assert result.conversations_per_s > 0
    assert result.agent_s is not None
    assert 0 < result.agent_s < result.wall_s
    assert result.files_s is not None
    assert result.files_s > 0
    summary = json.loads((tmp_path / "out" / "report.json").read_text())["summary"]
    assert summary["conversations"] == 9
    assert summary["turns"] == result.turns
    assert summary["tool_calls"] == result.tool_calls


def test_the_engine_only_pass_simulates_the_same_turns(tmp_path: Path) -> None:
    loaded, factory = load_example()
    suite = suite_for(loaded, 9)
    stored = run_pass(suite, factory, store_dir=tmp_path)
    engine_only = run_pass(suite, factory, store_dir=None)
    assert engine_only.kind == "engine_only"
    assert engine_only.turns == engine_only.stored_turns == stored.turns
    assert engine_only.end_reasons == stored.end_reasons


def test_sizes_round_up_to_whole_repeats_of_the_scenarios() -> None:
    loaded, _ = load_example()
    scenarios = len(loaded.suite.scenarios)
    assert suite_for(loaded, 1).repeat == 1
    assert suite_for(loaded, scenarios).repeat == 1
    assert suite_for(loaded, scenarios + 1).repeat == 2


def test_one_size_timing_is_consistent() -> None:
    timing = measure_timing(9, min_conversations=9)
    assert timing.rounds == 1
    assert timing.conversations == 9
    assert timing.consistent
    assert timing.full.turns_per_s > 0
    assert 0 < timing.agent_ms_per_turn < timing.agent_timed.ms_per_turn
    assert timing.harness_ms_per_turn > 0
    assert timing.files_s is not None


def test_one_size_memory_is_measured() -> None:
    memory = measure_memory(9)
    assert memory.conversations == 9
    assert memory.turns > 9
    assert memory.rss_peak_kib >= memory.rss_before_kib > 0
    assert memory.traced_run_peak > 0
    assert memory.traced_files_peak is not None
