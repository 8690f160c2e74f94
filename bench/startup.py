"""Start-up benchmark: how long `polygon` takes before (and while) it does little.

    .venv/bin/python bench/startup.py [--repeats 10] [--quick] [--top 5] [--json FILE]

Each command runs as a user runs it, as a new process of the installed `polygon` command,
once to warm the file cache and then `--repeats` times; the median wall time is printed
with the fastest and slowest run, beside the target. A second pass runs each command once
under `python -X importtime` and lists the imports that cost most (the top-level ones, by
their cumulative time), so a slow command names its import chain.

The commands: `--help`, `--version`, `schema`, `runs` and `show RUN` on a database with
one stored run (the order-line example, run once before timing), `lint --max-tier 2` on a
two-page prompt (bench/prompts/two_pages.md), and `run --help`. The machine's load average
is printed before and after: the figures mean something only on a quiet machine.
`--quick` (3 repeats, top 3) is sized for CI. Nothing here is a test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "examples" / "order_line" / "suite.yaml"
TWO_PAGES = ROOT / "bench" / "prompts" / "two_pages.md"
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


@dataclass(frozen=True)
class Command:
    """One command line to time, and the wall time it should stay under."""

    label: str
    args: tuple[str, ...]
    target_s: float | None


@dataclass
class Figure:
    """What one command cost."""

    label: str
    args: list[str]
    median_s: float
    min_s: float
    max_s: float
    target_s: float | None
    imports_s: float
    top_imports: list[tuple[str, float]] = field(default_factory=list)

    @property
    def within_target(self) -> bool | None:
        return None if self.target_s is None else self.median_s < self.target_s


def commands(db: Path, run_id: str) -> list[Command]:
    """The command lines, with the database and run the set-up made."""
    where = ("--db", str(db))
    return [
        Command("polygon --help", ("--help",), 0.5),
        Command("polygon --version", ("--version",), 0.5),
        Command("polygon schema", ("schema",), 0.5),
        Command("polygon runs", ("runs", *where), 0.5),
        Command("polygon show RUN", ("show", run_id, *where), None),
        Command(
            "polygon lint (tiers 1-2, 2 pages)", ("lint", str(TWO_PAGES), "--max-tier", "2"), 2.0
        ),
        Command("polygon run --help", ("run", "--help"), None),
    ]


def polygon_command() -> list[str]:
    """The installed `polygon` script beside this Python, else `python -m polygon_voice`."""
    script = Path(sys.executable).with_name("polygon")
    return [str(script)] if script.exists() else [sys.executable, "-m", "polygon_voice"]


def quiet_env() -> dict[str, str]:
    env = {**os.environ, "COLUMNS": "120"}
    env.pop("POLYGON_DB", None)
    # Bytecode read and written as an installed package has it: with PYTHONDONTWRITEBYTECODE
    # (set in some containers and CI images) every start compiles Polygon from source again.
    # The bytecode goes to a folder of its own, not into the source tree.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault(
        "PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / "polygon-bench-bytecode")
    )
    return env


def set_up(workdir: Path) -> tuple[Path, str]:
    """A database with one stored run of the example suite; its path and the run's id."""
    db = workdir / "polygon.db"
    out = workdir / "out"
    done = subprocess.run(
        [*polygon_command(), "run", str(SUITE), "--db", str(db), "--out", str(out)],
        cwd=workdir,
        env=quiet_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"setting up the example run failed:\n{done.stderr}")
    run_id = json.loads((out / "report.json").read_text(encoding="utf-8"))["run_id"]
    return db, str(run_id)


class CommandFailed(Exception):
    """A timed command exited non-zero (an older version without it, say)."""


def wall_seconds(argv: Sequence[str], workdir: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        argv, cwd=workdir, env=quiet_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or [""])[-1]
        raise CommandFailed(f"exited {done.returncode}: {last.strip(' │')}")
    return elapsed


@dataclass
class Imported:
    """One line of `-X importtime`: a module, its own and cumulative seconds, its imports."""

    name: str
    cumulative_s: float
    children: list[Imported] = field(default_factory=list)

    def chain(self, depth: int = 4) -> str:
        """This import and, below it, the costliest import of each level ("a > b > c")."""
        names, node = [self.name], self
        while node.children and len(names) < depth:
            node = max(node.children, key=lambda child: child.cumulative_s)
            names.append(node.name)
        return " > ".join(names)


def import_tree(stderr: str) -> list[Imported]:
    """The top-level imports of an `-X importtime` log, each with its imports below it."""
    # A module's line comes after the lines of the modules it imported, one level deeper.
    waiting: dict[int, list[Imported]] = {}
    for line in stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match is None:
            continue
        level = len(match.group(3)) // 2
        node = Imported(match.group(4), int(match.group(2)) / 1e6, waiting.pop(level + 1, []))
        waiting.setdefault(level, []).append(node)
    return waiting.get(0, [])


def import_costs(
    args: Sequence[str], workdir: Path, top: int
) -> tuple[float, list[tuple[str, float]]]:
    """Total import seconds of one run, and its `top` costliest import chains."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "polygon_voice", *args],
        cwd=workdir,
        env=quiet_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    roots = import_tree(done.stderr)
    total = sum(root.cumulative_s for root in roots)
    costliest = sorted(roots, key=lambda root: -root.cumulative_s)[:top]
    return total, [(root.chain(), root.cumulative_s) for root in costliest]


def measure(command: Command, workdir: Path, repeats: int, top: int) -> Figure | None:
    """The command's figures; None (with a note) when it fails."""
    argv = [*polygon_command(), *command.args]
    try:
        wall_seconds(argv, workdir)  # warm-up: file cache and bytecode
        times = [wall_seconds(argv, workdir) for _ in range(repeats)]
    except CommandFailed as exc:
        print(f"skipped {command.label}: {exc}", file=sys.stderr)
        return None
    imports_s, top_imports = import_costs(command.args, workdir, top)
    return Figure(
        label=command.label,
        args=list(command.args),
        median_s=statistics.median(times),
        min_s=min(times),
        max_s=max(times),
        target_s=command.target_s,
        imports_s=imports_s,
        top_imports=top_imports,
    )


def load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:  # not on this platform
        return "unknown"
    return f"{one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def print_figures(figures: Sequence[Figure]) -> None:
    width = max(len(f.label) for f in figures)
    print(f"{'command':<{width}}  median    min    max  target  imports")
    for f in figures:
        target = (
            "-" if f.target_s is None else f"{f.target_s:.1f} {'ok' if f.within_target else 'OVER'}"
        )
        print(
            f"{f.label:<{width}}  {f.median_s:5.3f}  {f.min_s:5.3f}  {f.max_s:5.3f}  "
            f"{target:>7}  {f.imports_s:5.3f}"
        )
    print("\ncostliest imports (cumulative seconds, one run under -X importtime), each with")
    print("the costliest import below it, level by level:")
    for f in figures:
        print(f"  {f.label}:")
        for chain, seconds in f.top_imports:
            print(f"    {seconds:5.3f}  {chain}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per command")
    parser.add_argument("--top", type=int, default=5, help="imports listed per command")
    parser.add_argument("--quick", action="store_true", help="3 repeats, top 3 (for CI)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = build_parser().parse_args(argv)
    repeats, top = (3, 3) if options.quick else (max(1, options.repeats), options.top)
    print(f"load before: {load()}")
    workdir = Path(tempfile.mkdtemp(prefix="polygon-startup-"))
    try:
        db, run_id = set_up(workdir)
        measured = [measure(command, workdir, repeats, top) for command in commands(db, run_id)]
        figures = [figure for figure in measured if figure is not None]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print(f"load after:  {load()}\n")
    print(f"{repeats} runs per command, wall seconds, {sys.version.split()[0]}\n")
    print_figures(figures)
    if options.json is not None:
        document = {
            "repeats": repeats,
            "python": sys.version.split()[0],
            "figures": [asdict(f) | {"within_target": f.within_target} for f in figures],
        }
        options.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
