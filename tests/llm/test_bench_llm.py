"""bench/llm.py runs and its figures add up (a sanity check of the benchmark, not timed)."""

from __future__ import annotations

from bench.llm import CALLS_PER_CONVERSATION, median_of, report, run_measurement


def test_every_call_reaches_the_server_and_the_bound_holds() -> None:
    runs = [run_measurement(0.02, conversations=4, concurrency=2) for _ in range(2)]
    for run in runs:
        assert run.calls == 4 * CALLS_PER_CONVERSATION
        # No call is answered from the cache: the benchmark measures real requests.
        assert run.server_requests == run.calls
        assert run.server_max_in_flight <= 2
        assert run.bound_s == run.calls * 0.02 / 2
        assert 0 < run.efficiency <= 1
        assert run.cpu_ms_per_call > 0
    zero = run_measurement(0.0, conversations=2, concurrency=2)
    text = report([zero], runs)
    assert "Harness CPU per call at zero latency" in text
    assert "Efficiency at 20 ms latency" in text
    assert median_of(runs, "efficiency") in runs
