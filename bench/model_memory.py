"""Peak memory of a model-played run: 1,000 against 10,000 conversations.

    .venv/bin/python bench/model_memory.py [--sizes 1000,10000] [--concurrency 8] [--json FILE]
    .venv/bin/python bench/model_memory.py --sizes 500,2000          # the CPU cost, quicker
    .venv/bin/python bench/model_memory.py --trace 1000,5000,10000   # what grows, by line

Every role is a model through the fake server, which runs as its own process at zero latency
(bench/model_played.py): the prompt agent, the model caller (`caller: llm`) and the model
judge (`--judge llm`), with their default response cache. Each size is one
`polygon run ... --quiet` as a new process, so its peak resident memory (`ru_maxrss`, a
high-water mark, read for that one child with `os.wait4`) is its own; the suite is ten copies
of one scenario with `repeat` raised, the same ten at every size. The benchmark checks that
report.json holds every conversation, and prints, per size: conversations, wall seconds, CPU
seconds of the run (user + system), CPU ms a conversation, peak RSS, and its ratio to the
smallest size's, beside the target (the largest size at most 1.2x the smallest).

`--trace N1,N2,...` instead runs one size in this process through `run_suite`, with
`tracemalloc` on, and after N1, N2, ... conversations prints the traced memory and the lines
that grew most since the first snapshot: where to look when the ratio is over. Slow (the
trace costs several times the run); not for figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.model_played import (
    Workload,
    clean_env,
    fake_server,
    planned,
    polygon_command,
    server_get,
    write_script,
    write_workload,
)

TARGET_RATIO = 1.2
SCENARIOS = 10


@dataclass(frozen=True)
class SizeMemory:
    """One size's run: what it did and what it cost."""

    conversations: int
    wall_s: float
    cpu_s: float
    peak_rss_kib: int
    requests: int
    verdicts: dict[str, int]

    @property
    def cpu_ms_per_conversation(self) -> float:
        return 1000 * self.cpu_s / max(1, self.conversations)


def run_child(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> tuple[int, float, int]:
    """Run `argv` to its end: exit code, CPU seconds and peak RSS (KiB) of that process alone."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    # stderr is read to its end first, so a chatty child never blocks on a full pipe.
    error_text = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stderr.close()
    if process.returncode not in (0, 1):
        tail = error_text.decode(errors="replace")[-2000:]
        raise RuntimeError(f"polygon run exited {process.returncode}:\n{tail}")
    # ru_maxrss is in KiB on Linux (bytes on macOS).
    peak = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    return process.returncode, usage.ru_utime + usage.ru_stime, int(peak)


def stored_outcome(workload: Workload) -> tuple[int, dict[str, int]]:
    """Conversations in the run's report.json, and its verdicts."""
    report = json.loads((workload.folder / "out" / "report.json").read_text(encoding="utf-8"))
    verdicts: dict[str, int] = {}
    for conversation in report["conversations"]:
        judgement = conversation.get("judgement") or {}
        verdict = str(judgement.get("verdict"))
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return len(report["conversations"]), verdicts


def measure_size(root: Path, size: int, concurrency: int, latency: float) -> SizeMemory:
    """One `polygon run` of `size` conversations against a fake server of its own."""
    script = write_script(root)
    with fake_server(script, latency) as base_url:
        workload = write_workload(root / f"size-{size}", base_url, size, SCENARIOS)
        argv = [*polygon_command(), *workload.run_args("--concurrency", str(concurrency))]
        start = time.perf_counter()
        _, cpu_s, peak = run_child(argv, workload.folder, clean_env())
        wall = time.perf_counter() - start
        requests = int(server_get(base_url, "stats")["requests"])
    conversations, verdicts = stored_outcome(workload)
    expected = planned(size, SCENARIOS)
    if conversations != expected:
        raise RuntimeError(f"report.json holds {conversations} conversations, not {expected}")
    shutil.rmtree(workload.folder, ignore_errors=True)
    return SizeMemory(conversations, wall, cpu_s, peak, requests, verdicts)


def ratio(sizes: Sequence[SizeMemory]) -> float:
    """The largest size's peak RSS over the smallest's."""
    ordered = sorted(sizes, key=lambda size: size.conversations)
    return ordered[-1].peak_rss_kib / ordered[0].peak_rss_kib


def print_figures(sizes: Sequence[SizeMemory], concurrency: int) -> None:
    smallest = min(sizes, key=lambda size: size.conversations)
    print(f"concurrency {concurrency}, {SCENARIOS} scenarios, fake server at zero latency\n")
    print("conversations  requests  wall s  CPU s  CPU ms/conv  peak RSS MiB  ratio  verdicts")
    for size in sorted(sizes, key=lambda s: s.conversations):
        print(
            f"{size.conversations:>13,}  {size.requests:>8,}  {size.wall_s:6.1f}  "
            f"{size.cpu_s:5.1f}  {size.cpu_ms_per_conversation:11.1f}  "
            f"{size.peak_rss_kib / 1024:12.1f}  "
            f"{size.peak_rss_kib / smallest.peak_rss_kib:5.2f}  {size.verdicts}"
        )
    if len(sizes) > 1:
        got = ratio(sizes)
        verdict = "met" if got <= TARGET_RATIO else "OVER"
        print(f"\ntarget: peak RSS of the largest size at most {TARGET_RATIO}x the smallest's:")
        print(f"{got:.2f}x, {verdict}")


# -- what grows: tracemalloc snapshots during one run in this process ------------------------


class _Snapshots:
    """A run observer that snapshots traced memory after given numbers of conversations."""

    def __init__(self, at: Sequence[int], top: int) -> None:
        self.at = sorted(at)
        self.top = top
        self.done = 0
        self.first: tracemalloc.Snapshot | None = None

    def call_finished(self, result: Any, tally: Any) -> None:
        self.done += 1
        if self.done not in self.at:
            return
        snapshot = tracemalloc.take_snapshot().filter_traces(
            [tracemalloc.Filter(False, tracemalloc.__file__)]
        )
        current, peak = tracemalloc.get_traced_memory()
        print(f"after {self.done:,}: traced {current / 2**20:.1f} MiB (peak {peak / 2**20:.1f})")
        if self.first is None:
            self.first = snapshot
            return
        for stat in snapshot.compare_to(self.first, "lineno")[: self.top]:
            print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7,}  {stat.traceback}")
        sys.stdout.flush()


def trace(root: Path, at: Sequence[int], concurrency: int, top: int) -> None:
    """Run max(at) conversations in this process with tracemalloc on, printing growth."""
    from polygon_voice.api import RunObserver, RunOptions, run_suite

    class Observer(RunObserver):
        def __init__(self, snapshots: _Snapshots) -> None:
            self.snapshots = snapshots

        def call_finished(self, result: Any, tally: Any) -> None:
            self.snapshots.call_finished(result, tally)

    script = write_script(root)
    size = max(at)
    with fake_server(script) as base_url:
        workload = write_workload(root / "trace", base_url, size, SCENARIOS)
        for key in [key for key in os.environ if key.startswith("POLYGON_")]:
            del os.environ[key]
        options = RunOptions(
            agent=f"prompt:{workload.agent}",
            judge="llm",
            llm_config=workload.llm_config,
            concurrency=concurrency,
            out=workload.folder / "out",
        )
        tracemalloc.start(8)
        run_suite(
            workload.suite,
            options,
            db=str(workload.folder / "polygon.db"),
            observer=Observer(_Snapshots(at, top)),
        )
        tracemalloc.stop()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000", help="conversations, comma-separated")
    parser.add_argument("--concurrency", type=int, default=8, help="as for polygon run")
    parser.add_argument("--latency", type=float, default=0.0, help="the fake server's seconds")
    parser.add_argument("--trace", help="snapshot counts, e.g. 1000,5000,10000 (one run)")
    parser.add_argument("--top", type=int, default=12, help="lines listed per snapshot")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise SystemExit(f"expected numbers separated by commas, got {text!r}") from None
    if not counts or min(counts) < 1:
        raise SystemExit(f"expected positive numbers, got {text!r}")
    return counts


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="polygon-model-memory-"))
    try:
        if options.trace:
            trace(root, _counts(options.trace), options.concurrency, options.top)
            return 0
        print(f"load before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        sizes = [
            measure_size(root, size, options.concurrency, options.latency)
            for size in _counts(options.sizes)
        ]
        print(f"load after:  {os.getloadavg()[0]:.2f}\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print_figures(sizes, options.concurrency)
    if options.json is not None:
        document = {
            "target_ratio": TARGET_RATIO,
            "concurrency": options.concurrency,
            "sizes": [asdict(size) for size in sizes],
            "ratio": ratio(sizes) if len(sizes) > 1 else None,
        }
        options.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
