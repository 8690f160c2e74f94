"""How long after `polygon run` starts does the first request reach the model?

    .venv/bin/python bench/first_request.py [--rounds 5] [--top 8] [--json FILE]

The fake server (`python -m polygon_voice.testing.fake_llm`) starts first, as its own process,
and records when each kind of request arrives (`GET /_polygon/arrivals`). Then, per round, a
fresh `polygon run SUITE --agent prompt:agent.yaml --judge llm --llm-config llm.yaml`
(bench/model_played.py: one `caller: llm` scenario, every role a model, one conversation) is
launched as a new process, and the benchmark reads back how long after the launch

* **the first request** arrived: the first request of any kind. That is the preflight's
  endpoint check (`GET /models`) when it is on: from then on the run is talking to the model,
  which is what a user waits for. This is the figure the target (1 s) is about;
* **the first chat completion** arrived: the first request of the conversations themselves
  (the prompt agent's greeting), after the preflight, the run record and the first call's
  set-up;
* the process ended (the whole run of one conversation);

and how much CPU time (user + system, read from /proc every 10 ms) the run had used by the
first request and by the first chat completion: on a busy machine the wall times stretch with
the load, the CPU times much less, so they say what a quiet machine would see.

Each round runs three cases: a new database (the folder's first run), the same command again
on the database the first made, and a new database with `POLYGON_PREFLIGHT=0` (no endpoint
check: what the preflight costs). The median, fastest and slowest of the rounds are printed,
beside the target, after one untimed run that fills the file cache and writes the bytecode.
Then one more run of the first case under `python -X importtime`, its import log stamped line
by line as it arrives, lists the costliest imports before the first request and between it
and the first chat completion. The load average is printed before and after: the wall times
mean something only on a quiet machine. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.model_played import (
    Workload,
    clean_env,
    fake_server,
    polygon_command,
    server_get,
    write_script,
    write_workload,
)
from bench.startup import import_tree

TARGET_S = 1.0
CASES = ("new database", "existing database", "new database, POLYGON_PREFLIGHT=0")


@dataclass(frozen=True)
class Launch:
    """One `polygon run`: seconds from its launch to each moment, and its exit code.

    `cpu_at_first_request_s` is the CPU time (user + system) the process had used when the
    first request arrived, sampled from /proc every 10 ms (None where there is no /proc): on a
    busy machine the wall time stretches with the load, the CPU time much less.
    """

    first_request_s: float | None
    first_chat_s: float | None
    ended_s: float
    exit_code: int
    requests: int
    cpu_at_first_request_s: float | None = None
    cpu_at_first_chat_s: float | None = None


@dataclass
class CaseFigures:
    """The rounds of one case, summarised."""

    case: str
    launches: list[Launch] = field(default_factory=list)

    def figures(self, pick: str) -> tuple[float, float, float] | None:
        """Median, fastest and slowest of one moment over the rounds (None if never seen)."""
        values = [getattr(launch, pick) for launch in self.launches]
        seen = [value for value in values if value is not None]
        if not seen:
            return None
        return statistics.median(seen), min(seen), max(seen)


def since(start: float, moment: float | None) -> float | None:
    return None if moment is None else moment - start


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process, from /proc (None when unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # Fields 14 and 15 of the line (utime, stime), counted after the ")" that ends the name.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_at(samples: Sequence[tuple[float, float]], moment: float | None) -> float | None:
    """The last CPU sample taken at or before `moment`."""
    if moment is None:
        return None
    taken = [cpu for at, cpu in samples if at <= moment]
    return taken[-1] if taken else None


def launch(workload: Workload, base_url: str, env: dict[str, str]) -> Launch:
    """Run `polygon run` once as a new process and read the server's arrival times back."""
    argv = [*polygon_command(), *workload.run_args()]
    before = server_get(base_url, "arrivals").get("any", {}).get("count") or 0
    samples: list[tuple[float, float]] = []
    with tempfile.TemporaryFile() as errors:
        start = time.time()
        process = subprocess.Popen(
            argv, cwd=workload.folder, env=env, stdout=subprocess.DEVNULL, stderr=errors
        )
        while process.poll() is None:
            cpu = cpu_seconds(process.pid)
            if cpu is not None:
                samples.append((time.time(), cpu))
            time.sleep(0.01)
        ended = time.time() - start
        if process.returncode != 0:
            errors.seek(0)
            tail = errors.read().decode(errors="replace")[-2000:]
            raise RuntimeError(f"polygon run exited {process.returncode}:\n{tail}")
    arrivals = server_get(base_url, "arrivals")
    first_any, first_chat = arrivals.get("any", {}), arrivals.get("chat", {})
    return Launch(
        first_request_s=since(start, first_any.get("first")),
        first_chat_s=since(start, first_chat.get("first")),
        ended_s=ended,
        exit_code=process.returncode,
        requests=int(first_any.get("count") or 0) - int(before),
        cpu_at_first_request_s=cpu_at(samples, first_any.get("first")),
        cpu_at_first_chat_s=cpu_at(samples, first_chat.get("first")),
    )


def warm_up(root: Path, script: Path) -> None:
    """One untimed run: the file cache filled and the bytecode written, as after an install."""
    with fake_server(script) as base_url:
        launch(write_workload(root / "warm-up", base_url, conversations=1), base_url, clean_env())


def one_round(root: Path, script: Path, number: int) -> dict[str, Launch]:
    """The three cases once, each against a server of its own (its arrivals are the case's)."""
    launches: dict[str, Launch] = {}
    plain = clean_env()
    no_preflight = {**plain, "POLYGON_PREFLIGHT": "0"}
    with fake_server(script) as base_url:
        workload = write_workload(root / f"round-{number}", base_url, conversations=1)
        launches[CASES[0]] = launch(workload, base_url, plain)
    with fake_server(script) as base_url:
        # The same folder and database; a new server, whose arrivals are this run's alone.
        workload = write_workload(root / f"round-{number}", base_url, conversations=1)
        launches[CASES[1]] = launch(workload, base_url, plain)
    with fake_server(script) as base_url:
        workload = write_workload(root / f"round-{number}-np", base_url, conversations=1)
        launches[CASES[2]] = launch(workload, base_url, no_preflight)
    return launches


@dataclass(frozen=True)
class StampedLine:
    at: float
    text: str


def stamped_stderr(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> list[StampedLine]:
    """Run `argv`, stamping each line of its stderr with the time it arrived."""
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    lines: list[StampedLine] = []
    assert process.stderr is not None
    stream = process.stderr

    def read() -> None:
        for text in stream:
            lines.append(StampedLine(time.time(), text.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    process.wait()
    reader.join(timeout=10)
    return lines


def costliest(lines: Sequence[StampedLine], top: int) -> tuple[float, list[tuple[str, float]]]:
    """Total import seconds of these `-X importtime` lines and their `top` costliest chains."""
    roots = import_tree("\n".join(line.text for line in lines))
    total = sum(root.cumulative_s for root in roots)
    ranked = sorted(roots, key=lambda root: -root.cumulative_s)[:top]
    return total, [(root.chain(6), root.cumulative_s) for root in ranked]


@dataclass
class ImportSplit:
    """Imports before the first request, and between it and the first chat completion."""

    before_total_s: float
    before: list[tuple[str, float]]
    between_total_s: float
    between: list[tuple[str, float]]


def split_imports(lines: Sequence[StampedLine], first: float, chat: float, top: int) -> ImportSplit:
    """The import log cut at the two arrivals (the preflight's request, the first chat)."""
    before = [line for line in lines if line.at < first]
    between = [line for line in lines if first <= line.at < chat]
    before_total, before_top = costliest(before, top)
    between_total, between_top = costliest(between, top)
    return ImportSplit(before_total, before_top, between_total, between_top)


def imports_run(root: Path, script: Path, top: int) -> ImportSplit | None:
    """One run of the first case under `-X importtime`, its imports cut at the arrivals."""
    with fake_server(script) as base_url:
        workload = write_workload(root / "importtime", base_url, conversations=1)
        argv = [sys.executable, "-X", "importtime", "-m", "polygon_voice", *workload.run_args()]
        lines = stamped_stderr(argv, workload.folder, clean_env())
        arrivals = server_get(base_url, "arrivals")
    first, chat = arrivals["any"]["first"], arrivals.get("chat", {}).get("first")
    if first is None or chat is None:
        return None
    return split_imports(lines, first, chat, top)


def load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:  # not on this platform
        return "unknown"
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def _cell(values: tuple[float, float, float] | None) -> str:
    if values is None:
        return f"{'-':>20}"
    median, fastest, slowest = values
    return f"{median:6.3f} ({fastest:5.3f}-{slowest:5.3f})"


def print_figures(cases: Sequence[CaseFigures], split: ImportSplit | None) -> None:
    width = max(len(case.case) for case in cases)
    rounds = len(cases[0].launches)
    print(f"seconds after launch: median (fastest-slowest) of {rounds} rounds; CPU: the")
    print("run's CPU seconds (user + system) by that moment, read from /proc every 10 ms\n")
    columns = {
        "first request": "first_request_s",
        "CPU by then": "cpu_at_first_request_s",
        "first chat": "first_chat_s",
        "CPU by then ": "cpu_at_first_chat_s",
        "process end": "ended_s",
    }
    print(f"{'case':<{width}}" + "".join(f"  {title.strip():>20}" for title in columns))
    for case in cases:
        cells = "".join(f"  {_cell(case.figures(pick))}" for pick in columns.values())
        print(f"{case.case:<{width}}{cells}")
    first = cases[0].figures("first_request_s")
    verdict = "unknown" if first is None else ("met" if first[0] <= TARGET_S else "OVER")
    print(f"\ntarget: first request within {TARGET_S:.1f} s of start (new database): {verdict}")
    print("(the first request is the preflight's endpoint check when it is on)")
    if split is None:
        return
    print(f"\nimports before the first request: {split.before_total_s:.3f} s under -X importtime")
    for chain, seconds in split.before:
        print(f"  {seconds:5.3f}  {chain}")
    print(f"imports between it and the first chat completion: {split.between_total_s:.3f} s")
    for chain, seconds in split.between:
        print(f"  {seconds:5.3f}  {chain}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the three cases")
    parser.add_argument("--top", type=int, default=8, help="import chains listed per part")
    parser.add_argument("--no-imports", action="store_true", help="skip the -X importtime run")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    print(f"load before: {load()}")
    root = Path(tempfile.mkdtemp(prefix="polygon-first-request-"))
    cases = [CaseFigures(case) for case in CASES]
    try:
        script = write_script(root)
        warm_up(root, script)
        for number in range(max(1, options.rounds)):
            launches = one_round(root, script, number)
            for case in cases:
                case.launches.append(launches[case.case])
        split = None if options.no_imports else imports_run(root, script, options.top)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"load after:  {load()}\n")
    print_figures(cases, split)
    if options.json is not None:
        document = {
            "target_s": TARGET_S,
            "python": sys.version.split()[0],
            "cases": [asdict(case) for case in cases],
            "imports": None if split is None else asdict(split),
        }
        options.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
