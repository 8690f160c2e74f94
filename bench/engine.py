"""Engine benchmark: simulated turns per second and peak memory of the whole `polygon run` pipeline.

    .venv/bin/python bench/engine.py [--sizes 100,1000,10000] [--concurrency 1] [--seed 0]

For each size N the example suite (examples/order_line/suite.yaml, its `repeat` raised so
it plans at least N conversations) runs through the real SuiteRunner with the example agent
and a real SQLite Store in a temporary folder, as `polygon run` does, writes included. Every
size runs in a fresh subprocess pinned to one core, so peaks do not mix and the figures are
per core. Per size the script reports:

* throughput of the full pipeline: wall time, conversations/s, turns/s, ms per turn;
* the agent's own cost (a pass whose agents are wrapped to time `respond`) and the harness
  overhead per turn = full pipeline minus agent time;
* a breakdown: engine only (a null store that keeps nothing) vs with the SQLite store, and
  writing report.json + transcripts.jsonl from the store (its own line);
* memory, in another fresh subprocess: peak RSS (getrusage) of one full run, then the
  tracemalloc peak of the run part and of the report-files part in a second, traced pass.

Timings are the median of several rounds for small sizes (rounds until at least
--min-conversations conversations were run), one round for large ones. Nothing here is a
test: the numbers are printed, with ratios between the largest and smallest size.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from polygon_voice import __version__
from polygon_voice.agents import Agent, AgentContext, AgentFactory, resolve_agent
from polygon_voice.model import Action, ConversationResult, Event, Suite
from polygon_voice.report import write_run_files
from polygon_voice.runner import SuiteRunner, count_calls
from polygon_voice.scenario import LoadedSuite, load_suite
from polygon_voice.store import RunRecord, Store, new_run_id, resolve_db_url

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_SUITE = ROOT / "examples" / "order_line" / "suite.yaml"
DEFAULT_SIZES = (100, 1000, 10000)
TARGET_TURNS_PER_SECOND = 2000
TARGET_HARNESS_MS_PER_TURN = 1000 / TARGET_TURNS_PER_SECOND
# Memory counts as flat when the largest size's traced peak is at most this many times the
# smallest's. Sizes are ~100x apart by default; garbage awaiting Python's cyclic GC moves a
# ~200 KiB peak by ~100 KiB, while keeping anything per conversation multiplies it.
FLAT_MEMORY_RATIO = 2.0
MAX_ROUNDS = 25
KIB = 1024
MIB = 1024 * 1024


# --- timing the agent's own work ------------------------------------------------------------


@dataclass
class AgentClock:
    """Wall seconds spent inside agents: building them, `respond`, and each action yielded."""

    seconds: float = 0.0


def timed_factory(factory: AgentFactory, clock: AgentClock) -> AgentFactory:
    """A factory whose agents add the time spent in their own code to `clock`."""

    def build(context: AgentContext) -> Agent:
        start = time.perf_counter()
        try:
            agent = factory(context)
        finally:
            clock.seconds += time.perf_counter() - start
        return _TimedAgent(agent, clock)

    return build


class _TimedAgent:
    """Delegates to the real agent and times every call into it."""

    def __init__(self, agent: Agent, clock: AgentClock) -> None:
        self._agent = agent
        self._clock = clock

    def respond(self, event: Event) -> AsyncIterator[Action]:
        start = time.perf_counter()
        try:
            actions = self._agent.respond(event)
        finally:
            self._clock.seconds += time.perf_counter() - start
        return _TimedActions(actions, self._clock)


class _TimedActions:
    """The agent's action stream; the time to produce each action is the agent's."""

    def __init__(
        self, actions: AsyncIterator[Action] | Iterable[Action], clock: AgentClock
    ) -> None:
        self._clock = clock
        self._async: AsyncIterator[Action] | None = None
        self._sync: Iterator[Action] | None = None
        if isinstance(actions, AsyncIterator):
            self._async = actions
        else:
            self._sync = iter(actions)

    def __aiter__(self) -> _TimedActions:
        return self

    async def __anext__(self) -> Action:
        start = time.perf_counter()
        try:
            if self._async is not None:
                return await anext(self._async)
            assert self._sync is not None
            try:
                return next(self._sync)
            except StopIteration:
                raise StopAsyncIteration from None
        finally:
            self._clock.seconds += time.perf_counter() - start

    async def aclose(self) -> None:
        aclose = getattr(self._async, "aclose", None)
        if aclose is None:
            return
        start = time.perf_counter()
        try:
            await aclose()
        finally:
            self._clock.seconds += time.perf_counter() - start


# --- one pass over N conversations ----------------------------------------------------------


class NullStore:
    """Stands in for the Store in the engine-only pass: counts conversations, keeps nothing."""

    def __init__(self) -> None:
        self.conversations = 0
        self.turns = 0

    def add_conversation(self, run_id: str, index: int, result: ConversationResult) -> None:
        """Count one finished conversation."""
        self.conversations += 1
        self.turns += len(result.turns)

    def add_conversation_with_results(
        self, run_id: str, index: int, result: ConversationResult, stage_results: object
    ) -> None:
        """Count one finished conversation; its stage results are dropped."""
        self.add_conversation(run_id, index, result)

    def add_stage_results(
        self, run_id: str, conversation_id: str, results: object, *, replace: bool = False
    ) -> None:
        """Drop the judge's stage results (stored after the conversation by the runner)."""


@dataclass(frozen=True)
class PassResult:
    """What one pass over the planned conversations did and how long it took."""

    kind: str  # "full", "agent_timed" (full, agents wrapped) or "engine_only" (null store)
    conversations: int
    turns: int
    tool_calls: int
    wall_s: float  # SuiteRunner.run() only: planning, engine, agent, storing
    stored_conversations: int  # read back from the store (or counted by the null store)
    stored_turns: int
    end_reasons: dict[str, int]
    agent_s: float | None = None  # time inside the agents (agent_timed passes)
    files_s: float | None = None  # writing report.json + transcripts.jsonl from the store
    traced_run_peak: int | None = None  # tracemalloc peak above the pre-run level, bytes
    traced_files_peak: int | None = None

    @property
    def turns_per_s(self) -> float:
        """Simulated turns per wall second."""
        return self.turns / self.wall_s

    @property
    def conversations_per_s(self) -> float:
        """Conversations per wall second."""
        return self.conversations / self.wall_s

    @property
    def ms_per_turn(self) -> float:
        """Wall milliseconds per simulated turn."""
        return 1000 * self.wall_s / self.turns


def load_example() -> tuple[LoadedSuite, AgentFactory]:
    """The example suite and its agent, resolved as `polygon run` resolves them."""
    loaded = load_suite(EXAMPLE_SUITE)
    assert loaded.suite.agent is not None
    return loaded, resolve_agent(loaded.suite.agent, loaded.base_dir)


def suite_for(loaded: LoadedSuite, size: int) -> Suite:
    """The suite with `repeat` raised so it plans at least `size` conversations."""
    repeat = max(1, math.ceil(size / len(loaded.suite.scenarios)))
    return loaded.suite.model_copy(update={"repeat": repeat})


def run_pass(
    suite: Suite,
    factory: AgentFactory,
    *,
    store_dir: Path | None,
    concurrency: int = 1,
    seed: int = 0,
    time_agent: bool = False,
    write_files: bool = False,
    trace_memory: bool = False,
) -> PassResult:
    """Run every planned conversation once.

    With `store_dir` the conversations go to a real SQLite Store there (and, with
    `write_files`, report.json and transcripts.jsonl are written from it afterwards, timed
    apart); without it they go to a NullStore. `time_agent` wraps the agents to time their
    own code. `trace_memory` reports tracemalloc peaks (tracemalloc must be running).
    """
    clock = AgentClock() if time_agent else None
    agent_factory = factory if clock is None else timed_factory(factory, clock)
    null = NullStore()
    store: Store | None = None
    run_id = new_run_id()
    kind = "engine_only" if store_dir is None else "agent_timed" if time_agent else "full"
    if store_dir is not None:
        store = Store(resolve_db_url(str(store_dir / "polygon.db")))
        store.create_run(_run_record(run_id, suite, seed))
    try:
        runner = SuiteRunner(
            suite=suite,
            agent_factory=agent_factory,
            store=store if store is not None else cast(Store, null),
            run_id=run_id,
            seed=seed,
            concurrency=concurrency,
        )
        base = _traced_reset() if trace_memory else 0
        start = time.perf_counter()
        tally = runner.run()
        wall = time.perf_counter() - start
        run_peak = tracemalloc.get_traced_memory()[1] - base if trace_memory else None
        files_s: float | None = None
        files_peak: int | None = None
        if store is None:
            stored = (null.conversations, null.turns)
        else:
            store.finish_run(run_id, "finished", datetime.now(UTC))
            if write_files:
                assert store_dir is not None
                base = _traced_reset() if trace_memory else 0
                start = time.perf_counter()
                write_run_files(store, store.get_run(run_id), store_dir / "out")
                files_s = time.perf_counter() - start
                files_peak = tracemalloc.get_traced_memory()[1] - base if trace_memory else None
            stored = _stored_counts(store, run_id)
    finally:
        if store is not None:
            store.close()
    return PassResult(
        kind=kind,
        conversations=tally.conversations,
        turns=tally.turns,
        tool_calls=tally.tool_calls,
        wall_s=wall,
        stored_conversations=stored[0],
        stored_turns=stored[1],
        end_reasons=dict(sorted(tally.end_reasons.items())),
        agent_s=None if clock is None else clock.seconds,
        files_s=files_s,
        traced_run_peak=run_peak,
        traced_files_peak=files_peak,
    )


def _run_record(run_id: str, suite: Suite, seed: int) -> RunRecord:
    return RunRecord(
        id=run_id,
        suite=suite.name,
        suite_path=str(EXAMPLE_SUITE.relative_to(ROOT)),
        suite_hash="bench",
        agent=suite.agent or "bench",
        seed=seed,
        status="running",
        started_at=datetime.now(UTC),
        config={"bench": True},
        polygon_version=__version__,
    )


def _stored_counts(store: Store, run_id: str) -> tuple[int, int]:
    conversations = turns = 0
    for summary in store.iter_summaries(run_id):
        conversations += 1
        turns += summary.turn_count
    return conversations, turns


def _traced_reset() -> int:
    """The traced memory now, with the peak reset to it."""
    gc.collect()
    tracemalloc.reset_peak()
    return tracemalloc.get_traced_memory()[0]


# --- one size: timing and memory ------------------------------------------------------------


@dataclass(frozen=True)
class SizeTiming:
    """Median rounds of the three passes for one size."""

    size: int
    rounds: int
    full: PassResult
    agent_timed: PassResult
    engine_only: PassResult
    files_s: float | None

    @property
    def conversations(self) -> int:
        """Conversations per pass."""
        return self.full.conversations

    @property
    def turns(self) -> int:
        """Simulated turns per pass."""
        return self.full.turns

    @property
    def agent_s(self) -> float:
        """Seconds spent inside the agents in the median agent-timed round."""
        assert self.agent_timed.agent_s is not None
        return self.agent_timed.agent_s

    @property
    def agent_ms_per_turn(self) -> float:
        """The agent's own milliseconds per turn."""
        return 1000 * self.agent_s / self.turns

    @property
    def harness_ms_per_turn(self) -> float:
        """Full pipeline minus the agent's own time, per turn."""
        return self.full.ms_per_turn - self.agent_ms_per_turn

    @property
    def harness_turns_per_s(self) -> float:
        """Turns per second the harness alone would sustain (agent time taken out)."""
        return 1000 / self.harness_ms_per_turn

    @property
    def engine_ms_per_turn(self) -> float:
        """Harness milliseconds per turn without the store (engine-only minus agent)."""
        return self.engine_only.ms_per_turn - self.agent_ms_per_turn

    @property
    def store_ms_per_turn(self) -> float:
        """What storing costs per turn: full pipeline minus engine only."""
        return self.full.ms_per_turn - self.engine_only.ms_per_turn

    @property
    def wrapper_ms_per_turn(self) -> float:
        """What the timing wrapper itself costs per turn (agent-timed minus full)."""
        return self.agent_timed.ms_per_turn - self.full.ms_per_turn

    @property
    def consistent(self) -> bool:
        """Every pass stored exactly the conversations and turns it simulated."""
        passes = (self.full, self.agent_timed, self.engine_only)
        return all(
            p.stored_turns == p.turns == self.turns
            and p.stored_conversations == p.conversations == self.conversations
            for p in passes
        )


@dataclass(frozen=True)
class SizeMemory:
    """Peak memory of one full run (plus report files) of one size, in a fresh process."""

    size: int
    conversations: int
    turns: int
    rss_before_kib: int  # peak RSS after imports and a warm-up, before the measured run
    rss_peak_kib: int  # peak RSS after the run and the report files
    traced_run_peak: int  # bytes above the pre-run level, in a second, traced pass
    traced_files_peak: int | None

    @property
    def rss_growth_kib(self) -> int:
        """How much the measured run raised the peak RSS."""
        return self.rss_peak_kib - self.rss_before_kib


def rounds_for(conversations: int, min_conversations: int) -> int:
    """Rounds so that at least `min_conversations` are run per pass kind; odd, capped."""
    rounds = min(MAX_ROUNDS, max(1, math.ceil(min_conversations / conversations)))
    return rounds if rounds % 2 else rounds + 1


def measure_timing(
    size: int,
    *,
    concurrency: int = 1,
    seed: int = 0,
    write_files: bool = True,
    min_conversations: int = 2000,
) -> SizeTiming:
    """Full, agent-timed and engine-only passes over `size` conversations, interleaved."""
    loaded, factory = load_example()
    suite = suite_for(loaded, size)
    # Warm-up: imports, pydantic and SQLAlchemy caches, the agent module; not measured.
    warm = loaded.suite.model_copy(update={"repeat": 1})
    with tempfile.TemporaryDirectory(prefix="polygon-bench-") as tmp:
        run_pass(warm, factory, store_dir=Path(tmp), concurrency=concurrency, seed=seed)
    rounds = rounds_for(count_calls(suite), min_conversations)
    passes: dict[str, list[PassResult]] = {"full": [], "agent_timed": [], "engine_only": []}
    for _ in range(rounds):
        for kind in passes:
            gc.collect()
            with tempfile.TemporaryDirectory(prefix="polygon-bench-") as tmp:
                result = run_pass(
                    suite,
                    factory,
                    store_dir=None if kind == "engine_only" else Path(tmp),
                    concurrency=concurrency,
                    seed=seed,
                    time_agent=kind == "agent_timed",
                    write_files=write_files and kind == "full",
                )
            passes[kind].append(result)
    files = [p.files_s for p in passes["full"] if p.files_s is not None]
    return SizeTiming(
        size=size,
        rounds=rounds,
        full=_median(passes["full"]),
        agent_timed=_median(passes["agent_timed"]),
        engine_only=_median(passes["engine_only"]),
        files_s=statistics.median(files) if files else None,
    )


def _median(results: Sequence[PassResult]) -> PassResult:
    ordered = sorted(results, key=lambda r: r.wall_s)
    return ordered[len(ordered) // 2]


def measure_memory(
    size: int, *, concurrency: int = 1, seed: int = 0, write_files: bool = True
) -> SizeMemory:
    """Peak RSS of one full run, then tracemalloc peaks of a second run (in a fresh process)."""
    loaded, factory = load_example()
    suite = suite_for(loaded, size)
    warm = loaded.suite.model_copy(update={"repeat": 1})
    options: dict[str, Any] = {"concurrency": concurrency, "seed": seed}
    with tempfile.TemporaryDirectory(prefix="polygon-bench-") as tmp:
        run_pass(warm, factory, store_dir=Path(tmp), write_files=write_files, **options)
    gc.collect()
    rss_before = peak_rss_kib()
    with tempfile.TemporaryDirectory(prefix="polygon-bench-") as tmp:
        plain = run_pass(suite, factory, store_dir=Path(tmp), write_files=write_files, **options)
    rss_peak = peak_rss_kib()
    tracemalloc.start()
    try:
        with tempfile.TemporaryDirectory(prefix="polygon-bench-") as tmp:
            traced = run_pass(
                suite,
                factory,
                store_dir=Path(tmp),
                write_files=write_files,
                trace_memory=True,
                **options,
            )
    finally:
        tracemalloc.stop()
    assert traced.traced_run_peak is not None
    return SizeMemory(
        size=size,
        conversations=plain.conversations,
        turns=plain.turns,
        rss_before_kib=rss_before,
        rss_peak_kib=rss_peak,
        traced_run_peak=traced.traced_run_peak,
        traced_files_peak=traced.traced_files_peak,
    )


def peak_rss_kib() -> int:
    """This process's peak resident set size so far, in KiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // KIB if sys.platform == "darwin" else peak  # bytes on macOS, KiB elsewhere


def pin_to_cpu(cpu: int) -> int | None:
    """Pin this process to `cpu` (or the first CPU it may use); None where unsupported."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = os.sched_getaffinity(0)
    chosen = cpu if cpu in allowed else min(allowed)
    os.sched_setaffinity(0, {chosen})
    return chosen


# --- subprocesses ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ChildOptions:
    """What every per-size subprocess is started with."""

    concurrency: int
    seed: int
    cpu: int | None
    write_files: bool
    min_conversations: int


def run_child(mode: str, size: int, options: ChildOptions) -> dict[str, Any]:
    """Run one size in a fresh Python process; returns its JSON result."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        mode,
        "--sizes",
        str(size),
        "--concurrency",
        str(options.concurrency),
        "--seed",
        str(options.seed),
        "--min-conversations",
        str(options.min_conversations),
        "--files" if options.write_files else "--no-files",
    ]
    command += ["--no-pin"] if options.cpu is None else ["--cpu", str(options.cpu)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"the {mode} subprocess for size {size} failed ({done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def child_main(mode: str, size: int, options: ChildOptions) -> int:
    """The subprocess side: pin, measure one size, print one JSON line."""
    if options.cpu is not None:
        pin_to_cpu(options.cpu)
    if mode == "timing":
        timing = measure_timing(
            size,
            concurrency=options.concurrency,
            seed=options.seed,
            write_files=options.write_files,
            min_conversations=options.min_conversations,
        )
        payload: dict[str, Any] = asdict(timing)
    else:
        payload = asdict(
            measure_memory(
                size,
                concurrency=options.concurrency,
                seed=options.seed,
                write_files=options.write_files,
            )
        )
    sys.stdout.write(json.dumps(payload) + "\n")
    return 0


def timing_from(data: dict[str, Any]) -> SizeTiming:
    """A SizeTiming from a subprocess's JSON."""
    return SizeTiming(
        size=data["size"],
        rounds=data["rounds"],
        full=PassResult(**data["full"]),
        agent_timed=PassResult(**data["agent_timed"]),
        engine_only=PassResult(**data["engine_only"]),
        files_s=data["files_s"],
    )


def memory_from(data: dict[str, Any]) -> SizeMemory:
    """A SizeMemory from a subprocess's JSON."""
    return SizeMemory(**data)


# --- printing -------------------------------------------------------------------------------


@dataclass
class Table:
    """A plain right-aligned text table."""

    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def add(self, *cells: str) -> None:
        """Append a row."""
        self.rows.append(list(cells))

    def render(self) -> str:
        """The table as text, two spaces between columns."""
        widths = [
            max(len(row[i]) for row in [self.headers, *self.rows]) for i in range(len(self.headers))
        ]
        lines = [
            "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True))
            for row in [self.headers, *self.rows]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join("  " + line for line in lines)


def machine_info() -> dict[str, str]:
    """The machine and interpreter the figures come from (no paths)."""
    cpus = os.cpu_count() or 0
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cpus
    return {
        "system": f"{platform.system()} {platform.release()} {platform.machine()}",
        "cpu": _cpu_model() or platform.processor() or "unknown",
        "cpus": f"{cpus} logical CPUs ({usable} usable by this process)",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sqlite": sqlite3.sqlite_version,
        "polygon": __version__,
    }


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _ms(value: float) -> str:
    return f"{value:.3f}"


def _ratio(large: float, small: float) -> str:
    return f"{large / small:.2f}x" if small > 0 else "n/a"


def report(
    timings: Sequence[SizeTiming],
    memories: Sequence[SizeMemory],
    options: ChildOptions,
    pinned: int | None,
    info: dict[str, str],
) -> str:
    """Everything the benchmark prints; `info` from machine_info() (taken before pinning)."""
    out: list[str] = []
    loaded, _ = load_example()
    out.append("Polygon engine benchmark (bench/engine.py)")
    out.append(
        f"  suite: {EXAMPLE_SUITE.relative_to(ROOT)} ({len(loaded.suite.scenarios)} scenarios, "
        f"repeat raised to reach N), agent {loaded.suite.agent}"
    )
    out.append(
        f"  pipeline: SuiteRunner -> SQLite Store in a temp folder, concurrency "
        f"{options.concurrency}, seed {options.seed}; each size in a fresh subprocess"
    )
    if pinned is None:
        out.append("  cpu: not pinned (--no-pin, or no sched_setaffinity here)")
    else:
        out.append(f"  cpu: every process pinned to CPU {pinned} (one core)")
    out.append(f"  machine: {info['system']}, {info['cpu']}, {info['cpus']}")
    out.append(f"  python: {info['python']}, SQLite {info['sqlite']}, polygon {info['polygon']}")
    out.append(
        f"  timings: median round; rounds per size until >= {options.min_conversations:,} "
        "conversations per pass kind"
    )
    if timings:
        out += ["", "Throughput, full pipeline (engine + example agent + SQLite writes)"]
        table = Table(
            [
                "convs",
                "turns",
                "rounds",
                "wall s",
                "convs/s",
                "turns/s",
                "ms/turn",
                "agent ms/turn",
                "harness ms/turn",
                "harness turns/s",
            ]
        )
        for t in timings:
            table.add(
                _n(t.conversations),
                _n(t.turns),
                str(t.rounds),
                f"{t.full.wall_s:.3f}",
                _n(t.full.conversations_per_s),
                _n(t.full.turns_per_s),
                _ms(t.full.ms_per_turn),
                _ms(t.agent_ms_per_turn),
                _ms(t.harness_ms_per_turn),
                _n(t.harness_turns_per_s),
            )
        out.append(table.render())
        out += ["", "Breakdown, ms per turn (harness = without the agent's own time)"]
        table = Table(
            [
                "convs",
                "engine only",
                "+ store writes",
                "= harness",
                "agent",
                "timing wrapper",
                "report files",
                "report files s",
            ]
        )
        for t in timings:
            files = t.files_s
            table.add(
                _n(t.conversations),
                _ms(t.engine_ms_per_turn),
                _ms(t.store_ms_per_turn),
                _ms(t.harness_ms_per_turn),
                _ms(t.agent_ms_per_turn),
                _ms(t.wrapper_ms_per_turn),
                "-" if files is None else _ms(1000 * files / t.turns),
                "-" if files is None else f"{files:.3f}",
            )
        out.append(table.render())
        out.append(
            "  engine only: a null store that keeps nothing; + store writes: full minus engine "
            "only;\n  timing wrapper: what wrapping the agents to time them costs (not in "
            "harness);\n  report files: report.json + transcripts.jsonl streamed from the "
            "store, after the run."
        )
    if memories:
        out += ["", "Memory, one full run (+ report files) per fresh subprocess"]
        table = Table(
            [
                "convs",
                "turns",
                "RSS before MiB",
                "peak RSS MiB",
                "RSS growth MiB",
                "traced peak run KiB",
                "traced peak files KiB",
            ]
        )
        for m in memories:
            table.add(
                _n(m.conversations),
                _n(m.turns),
                f"{m.rss_before_kib / KIB:.1f}",
                f"{m.rss_peak_kib / KIB:.1f}",
                f"{m.rss_growth_kib / KIB:.1f}",
                f"{m.traced_run_peak / KIB:,.0f}",
                "-" if m.traced_files_peak is None else f"{m.traced_files_peak / KIB:,.0f}",
            )
        out.append(table.render())
        out.append(
            "  RSS before: peak RSS after imports and a warm-up; traced peak: tracemalloc peak "
            "above the\n  level before the run, in a second pass (tracemalloc is slow, so it "
            "times nothing)."
        )
    out += ["", "Ratios (largest vs smallest size)"]
    out += _ratios(timings, memories)
    out += ["", "Targets"]
    out += _verdicts(timings, memories)
    return "\n".join(out)


def _ratios(timings: Sequence[SizeTiming], memories: Sequence[SizeMemory]) -> list[str]:
    lines: list[str] = []
    if len(timings) >= 2:
        small, large = timings[0], timings[-1]
        span = f"{large.conversations:,} vs {small.conversations:,} conversations"
        lines.append(
            f"  harness ms/turn {span}: "
            f"{_ratio(large.harness_ms_per_turn, small.harness_ms_per_turn)}"
        )
        lines.append(f"  turns/s {span}: {_ratio(large.full.turns_per_s, small.full.turns_per_s)}")
    if len(memories) >= 2:
        small_m, large_m = memories[0], memories[-1]
        span = f"{large_m.conversations:,} vs {small_m.conversations:,} conversations"
        lines.append(
            f"  peak traced memory (run) {span}: "
            f"{_ratio(large_m.traced_run_peak, small_m.traced_run_peak)} "
            f"({_per_conversation(small_m, large_m):,.0f} bytes per extra conversation)"
        )
        if large_m.traced_files_peak is not None and small_m.traced_files_peak is not None:
            lines.append(
                f"  peak traced memory (report files) {span}: "
                f"{_ratio(large_m.traced_files_peak, small_m.traced_files_peak)}"
            )
        lines.append(
            f"  peak RSS {span}: {_ratio(large_m.rss_peak_kib, small_m.rss_peak_kib)} "
            f"(growth during the run: {large_m.rss_growth_kib / KIB:.1f} MiB vs "
            f"{small_m.rss_growth_kib / KIB:.1f} MiB)"
        )
    return lines or ["  (one size only: nothing to compare)"]


def _per_conversation(small: SizeMemory, large: SizeMemory) -> float:
    """How much the traced run peak grows per extra conversation, in bytes."""
    extra = large.conversations - small.conversations
    return (large.traced_run_peak - small.traced_run_peak) / extra if extra else 0.0


def _verdicts(timings: Sequence[SizeTiming], memories: Sequence[SizeMemory]) -> list[str]:
    lines: list[str] = []
    if timings:
        worst = max(timings, key=lambda t: t.harness_ms_per_turn)
        met = worst.harness_ms_per_turn <= TARGET_HARNESS_MS_PER_TURN
        lines.append(
            f"  harness <= {TARGET_HARNESS_MS_PER_TURN} ms/turn (>= {TARGET_TURNS_PER_SECOND:,} "
            f"turns/s on one core): {'MET' if met else 'NOT MET'} (worst "
            f"{_ms(worst.harness_ms_per_turn)} ms/turn = {_n(worst.harness_turns_per_s)} "
            f"turns/s, at {worst.conversations:,} conversations)"
        )
        slowest = min(timings, key=lambda t: t.full.turns_per_s)
        lines.append(
            f"  full pipeline incl. the example agent: slowest {_n(slowest.full.turns_per_s)} "
            f"turns/s ({_ms(slowest.full.ms_per_turn)} ms/turn)"
        )
        consistent = all(t.consistent for t in timings)
        lines.append(
            "  stored conversations and turns equal the simulated ones in every pass: "
            + ("yes" if consistent else "NO")
        )
    if len(memories) >= 2:
        small, large = memories[0], memories[-1]
        ratio = large.traced_run_peak / small.traced_run_peak
        met = ratio <= FLAT_MEMORY_RATIO
        lines.append(
            f"  memory flat in N (traced run peak ratio <= {FLAT_MEMORY_RATIO}x over a "
            f"{large.conversations / small.conversations:.0f}x larger run): "
            f"{'MET' if met else 'NOT MET'} ({ratio:.2f}x)"
        )
    return lines


# --- command line ---------------------------------------------------------------------------


def parse_sizes(text: str) -> list[int]:
    """'100,1000,10000' -> [100, 1000, 10000]; sorted, each >= 1."""
    try:
        sizes = sorted({int(part.replace("_", "")) for part in text.split(",") if part.strip()})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not a list of integers: {text!r}") from exc
    if not sizes or sizes[0] < 1:
        raise argparse.ArgumentTypeError("sizes must be positive integers, e.g. 100,1000,10000")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """The command-line options."""
    parser = argparse.ArgumentParser(
        prog="bench/engine.py",
        description="Turns per second and peak memory of the whole polygon run pipeline.",
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=list(DEFAULT_SIZES),
        help="conversation counts N, comma-separated (default 100,1000,10000; each is rounded "
        "up to a whole number of repeats of the 9 example scenarios)",
    )
    parser.add_argument("--concurrency", type=int, default=1, help="conversations at once")
    parser.add_argument("--seed", type=int, default=0, help="run seed")
    parser.add_argument("--cpu", type=int, default=0, help="CPU to pin to (default 0)")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    parser.add_argument(
        "--files",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also write report.json and transcripts.jsonl from the store (timed apart)",
    )
    parser.add_argument(
        "--memory",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="measure peak RSS and tracemalloc peaks (another subprocess per size)",
    )
    parser.add_argument(
        "--min-conversations",
        type=int,
        default=2000,
        help="repeat small sizes until each pass kind ran this many conversations (median)",
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this JSON file")
    parser.add_argument("--child", choices=("timing", "memory"), help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every size in fresh subprocesses and print the tables."""
    args = build_parser().parse_args(argv)
    options = ChildOptions(
        concurrency=max(1, args.concurrency),
        seed=args.seed,
        cpu=None if args.no_pin else args.cpu,
        write_files=args.files,
        min_conversations=max(1, args.min_conversations),
    )
    if args.child is not None:
        return child_main(args.child, args.sizes[0], options)
    info = machine_info()
    pinned = pin_to_cpu(options.cpu) if options.cpu is not None else None
    if pinned is not None:
        options = ChildOptions(**{**asdict(options), "cpu": pinned})
    started = time.perf_counter()
    timings: list[SizeTiming] = []
    memories: list[SizeMemory] = []
    for size in args.sizes:
        print(f"measuring N={size:,} ...", file=sys.stderr, flush=True)
        timings.append(timing_from(run_child("timing", size, options)))
        if args.memory:
            memories.append(memory_from(run_child("memory", size, options)))
    print(report(timings, memories, options, pinned, info))
    print(f"\n(benchmark took {time.perf_counter() - started:.0f} s)")
    if args.json is not None:
        data = {
            "machine": info,
            "options": asdict(options),
            "timings": [asdict(t) for t in timings],
            "memory": [asdict(m) for m in memories],
        }
        args.json.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
