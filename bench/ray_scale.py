"""Ray executor benchmark: one model-played run on 1 and on 2 workers, and the driver's ingest.

    .venv/bin/python bench/ray_scale.py [--conversations 2000] [--concurrency 64]
                                        [--latency 0.2] [--workers 1,2] [--ingest 2000] [--json]

Every conversation is played by models on the fake server (its own process, so its CPU is
not the harness's): a prompt agent, an LLM caller (`caller: llm`) and the LLM judge, each
request answered after `--latency` (200 ms). The same run (suite, seed, calls) is made with
`--executor ray` on a local cluster of two CPUs, once per worker count.

* Bound: LLM requests x latency / (workers x concurrency), less the first wave's (the wall
  starts when the first call is stored): the wall time of a harness that costs nothing and
  keeps every slot busy. Efficiency = bound / wall; speed-up = wall on
  one worker / wall on N. Wall is the driver's loop, from the first call stored to the last
  (actor start-up, a few seconds paid once per run, is printed apart).
* Ingest: workers that return one stored result at once for every call (no model, no play),
  so the figure is what the driver alone can take in: calls stored per second (ray.wait,
  the transfer of the result, one SQLite commit, the tally).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from polygon_voice import RunObserver, RunOptions, run_suite
from polygon_voice.judge.rubric import V3
from polygon_voice.model import ConversationResult
from polygon_voice.runner import ray_executor
from polygon_voice.runner.executors import FinishedCall
from polygon_voice.runner.plan import planned_call

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `bench.model_played` importable
    sys.path.insert(0, str(ROOT))

from bench import model_played  # noqa: E402

EXAMPLE = ROOT / "examples" / "order_line" / "suite.yaml"
CALLER_FIRST = "Order 5590 please, I need three instead of two."
JUDGED = {c.id: {"score": 4, "evidence": "", "reason": "fine"} for c in V3.criteria}
SCRIPT = {
    "rules": [
        {"role": "judge", "json": {"criteria": JUDGED}},
        {"role": "caller", "turn": 1, "json": {"say": CALLER_FIRST, "end_call": False}},
        {"role": "caller", "json": {"say": "Great, thanks. Bye.", "end_call": True}},
        {"role": "agent", "text": "Done: order 5590 is now three. Anything else?"},
    ]
}
SCENARIO = """
scenarios:
  - id: change-quantity
    caller: llm
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590"}}
"""


@dataclass
class Scale:
    """One run on `workers` workers."""

    workers: int
    conversations: int
    requests: int
    latency: float
    concurrency: int
    wall: float  # first call stored .. last
    start_up: float  # run_suite start .. first call stored
    bound: float
    efficiency: float
    speed_up: float = 1.0


@dataclass
class Ingest:
    """The driver's intake with instant workers."""

    calls: int
    workers: int
    wall: float
    per_second: float


class Clock(RunObserver):
    """Notes when the first and the last call were stored."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last = 0.0
        self.count = 0

    def call_finished(self, result: ConversationResult, tally: Any) -> None:
        now = time.perf_counter()
        self.first = self.first if self.first is not None else now
        self.last = now
        self.count += 1


@contextmanager
def fake_server(folder: Path, latency: float) -> Iterator[str]:
    """The fake server in a process of its own, answering by SCRIPT; yields its base URL."""
    script = folder / "script.json"
    script.write_text(json.dumps(SCRIPT))
    with model_played.fake_server(script, latency) as base_url:
        yield base_url


def server_requests(base_url: str) -> int:
    import urllib.request

    with urllib.request.urlopen(base_url.replace("/v1", "/_polygon/stats"), timeout=5) as r:
        return int(json.loads(r.read())["requests"])


def write_run_files(folder: Path, base_url: str, concurrency: int) -> tuple[Path, Path, Path]:
    """The suite, the prompt agent and the model settings of the benchmark."""
    head = EXAMPLE.read_text().split("\nscenarios:", 1)[0].replace("agent: agent.py:", "# ")
    suite = folder / "suite.yaml"
    suite.write_text(head + SCENARIO)
    (folder / "prompt.md").write_text("You are the order line of a shop. Be brief.\n")
    agent = folder / "agent.yaml"
    agent.write_text("system_prompt: prompt.md\n")  # its model: the llm.agent role below
    roles = "".join(
        f"  {role}:\n    model: bench-{role}\n    base_url: {base_url}\n"
        f"    max_concurrency: {concurrency}\n    cache: false\n"
        for role in ("caller", "judge", "agent")
    )
    config = folder / "llm.yaml"
    config.write_text(f"llm:\n{roles}")
    return suite, agent, config


def options(agent: Path, config: Path, conversations: int, **given: Any) -> RunOptions:
    return RunOptions(
        agent=f"prompt:{agent}",
        judge="llm",
        llm_config=config,
        trials=conversations,
        run_probes=False,
        write_files=False,
        executor="ray",
        **given,
    )


def scale_run(folder: Path, base_url: str, args: argparse.Namespace, workers: int) -> Scale:
    suite, agent, config = write_run_files(folder, base_url, args.concurrency)
    clock = Clock()
    before = server_requests(base_url)
    began = time.perf_counter()
    run_options = options(
        agent, config, args.conversations, workers=workers, concurrency=args.concurrency
    )
    result = run_suite(suite, run_options, db=str(folder / f"w{workers}.db"), observer=clock)
    requests = server_requests(base_url) - before
    assert result.calls_run == args.conversations == clock.count, result.errors[:3]
    assert clock.first is not None
    wall = clock.last - clock.first
    # The wall starts when the first call is stored: by then the first wave (every slot's
    # first call) has played, so its requests are part of the start-up figure.
    slots = workers * args.concurrency
    per_call = requests / args.conversations
    bound = (requests - per_call * min(slots, args.conversations)) * args.latency / slots
    return Scale(
        workers=workers,
        conversations=args.conversations,
        requests=requests,
        latency=args.latency,
        concurrency=args.concurrency,
        wall=wall,
        start_up=clock.first - began,
        bound=bound,
        efficiency=bound / wall,
    )


class InstantWorker(ray_executor.CallWorker):
    """Plays one call when it starts, then returns that result for every call at once."""

    async def ready(self) -> int:
        self._ready()
        self._template = await super().play(0)
        return os.getpid()

    async def play(self, index: int) -> FinishedCall:
        self._ready()
        assert self._parts is not None
        planned = planned_call(self._parts.suite, index)
        result = self._template.result.model_copy(update={"id": planned.conversation_id})
        return FinishedCall(index, result, self._template.stages, [])


def ingest_run(folder: Path, base_url: str, args: argparse.Namespace) -> Ingest:
    suite, agent, config = write_run_files(folder, base_url, args.concurrency)
    clock = Clock()
    real = ray_executor.CallWorker
    ray_executor.CallWorker = InstantWorker  # type: ignore[misc]
    try:
        run_options = options(agent, config, args.ingest, workers=2, concurrency=args.concurrency)
        result = run_suite(suite, run_options, db=str(folder / "ingest.db"), observer=clock)
    finally:
        ray_executor.CallWorker = real  # type: ignore[misc]
    assert result.calls_run == args.ingest == clock.count
    assert clock.first is not None
    wall = clock.last - clock.first
    return Ingest(calls=args.ingest, workers=2, wall=wall, per_second=(args.ingest - 1) / wall)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64, help="calls at once per worker")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument(
        "--ingest", type=int, default=2000, help="calls of the ingest run (0: none)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    # One scenario played N times: N trials may pass the default repeat limit of 1,000.
    os.environ["POLYGON_MAX_REPEAT"] = str(max(1000, args.conversations, args.ingest))
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    scales: list[Scale] = []
    ingest = None
    with tempfile.TemporaryDirectory() as tmp, fake_server(Path(tmp), args.latency) as url:
        for workers in (int(w) for w in args.workers.split(",")):
            scales.append(scale_run(Path(tmp), url, args, workers))
            print_scale(scales[-1], scales[0])
        if args.ingest:
            ingest = ingest_run(Path(tmp), url, args)
            print(
                f"ingest: {ingest.calls} calls from {ingest.workers} instant workers in "
                f"{ingest.wall:.2f} s: {ingest.per_second:,.0f} calls stored per second"
            )
    ray.shutdown()
    if args.json:
        found = {"scale": [asdict(s) for s in scales], "ingest": ingest and asdict(ingest)}
        print(json.dumps(found, indent=2))
    return 0


def print_scale(scale: Scale, first: Scale) -> None:
    scale.speed_up = first.wall / scale.wall
    print(
        f"{scale.workers} worker(s) x {scale.concurrency}: {scale.conversations} calls, "
        f"{scale.requests} LLM requests at {scale.latency * 1000:.0f} ms; wall {scale.wall:.1f} s "
        f"(start-up {scale.start_up:.1f} s), bound {scale.bound:.1f} s, efficiency "
        f"{scale.efficiency:.1%}, speed-up {scale.speed_up:.2f}x",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
