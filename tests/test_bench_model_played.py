"""bench/first_request.py and bench/model_memory.py on a tiny workload: every role a model through
the fake server as its own process (a sanity check of the benchmarks, nothing timed)."""

from __future__ import annotations

from pathlib import Path

from bench.first_request import (
    StampedLine,
    cpu_at,
    cpu_seconds,
    launch,
    split_imports,
)
from bench.model_memory import SCENARIOS, measure_size, ratio
from bench.model_played import (
    clean_env,
    fake_server,
    planned,
    suite_text,
    write_script,
    write_workload,
)

from polygon_voice.scenario import load_suite


def test_the_suite_plans_the_conversations_asked_for(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(suite_text(25, scenarios=3), encoding="utf-8")
    suite = load_suite(tmp_path / "suite.yaml").suite
    assert [s.caller for s in suite.scenarios] == ["llm"] * 3
    assert suite.agent == "prompt:agent.yaml"
    assert len(suite.scenarios) * suite.repeat == planned(25, 3) == 27


def test_a_launch_sees_the_preflight_before_the_first_chat(tmp_path: Path) -> None:
    script = write_script(tmp_path)
    with fake_server(script) as base_url:
        workload = write_workload(tmp_path / "run", base_url, conversations=1)
        launched = launch(workload, base_url, clean_env())
    assert launched.exit_code == 0
    assert launched.first_request_s is not None
    assert launched.first_chat_s is not None
    assert 0 < launched.first_request_s < launched.first_chat_s < launched.ended_s
    # One conversation: the preflight's checks, the caller's lines, the agent's turns, a judge.
    assert launched.requests >= 5
    report = (workload.folder / "out" / "report.json").read_text(encoding="utf-8")
    assert '"verdict": "pass"' in report


def test_without_the_preflight_the_first_request_is_a_chat(tmp_path: Path) -> None:
    script = write_script(tmp_path)
    with fake_server(script) as base_url:
        workload = write_workload(tmp_path / "run", base_url, conversations=1)
        launched = launch(workload, base_url, {**clean_env(), "POLYGON_PREFLIGHT": "0"})
    assert launched.first_request_s == launched.first_chat_s


def test_the_import_log_is_cut_at_the_two_arrivals() -> None:
    log = [
        StampedLine(1.0, "import time:       100 |        100 |   early.child"),
        StampedLine(1.1, "import time:        10 |        110 | early"),
        StampedLine(2.0, "import time:       300 |        300 | between"),
        StampedLine(3.0, "import time:       500 |        500 | after"),
    ]
    split = split_imports(log, first=1.5, chat=2.5, top=5)
    assert split.before == [("early > early.child", 0.00011)]
    assert split.between == [("between", 0.0003)]
    assert split.before_total_s == 0.00011


def test_cpu_is_read_for_a_running_process_and_picked_at_a_moment() -> None:
    import os

    own = cpu_seconds(os.getpid())
    assert own is None or own > 0  # None only where there is no /proc
    samples = [(1.0, 0.1), (2.0, 0.2), (3.0, 0.3)]
    assert cpu_at(samples, 2.5) == 0.2
    assert cpu_at(samples, 0.5) is None
    assert cpu_at(samples, None) is None


def test_one_size_of_the_memory_bench_stores_every_conversation(tmp_path: Path) -> None:
    measured = measure_size(tmp_path, size=SCENARIOS, concurrency=4, latency=0.0)
    assert measured.conversations == SCENARIOS
    assert measured.verdicts == {"pass": SCENARIOS}
    assert measured.peak_rss_kib > 10 * 1024  # a Python process with the run's imports
    assert measured.cpu_s > 0
    # Each conversation asks every role: caller lines, agent turns and one judge request.
    assert measured.requests >= 5 * SCENARIOS
    assert ratio([measured, measured]) == 1.0
