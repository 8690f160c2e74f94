"""Import benchmark: calls per second and memory of `polygon import` with deterministic scoring.

    .venv/bin/python bench/imports.py [--sizes 10000,40000] [--format vapi|openai] [--judge ...]

For each size N the script writes N generated call records of realistic size (a Vapi
end-of-call report, or OpenAI chat messages: 18 turns, four tool calls with results, one
of them failed in the Vapi records, about 5.6 KB a record: the median size of the public
corpora) to a JSONL file in a temporary folder, then imports it the way `polygon import`
does (`import_calls`, a real SQLite store in that folder, a transaction per record) with
the deterministic judge, in a fresh subprocess pinned to one core, after a warm-up. It
prints, per size: wall time, calls/s, ms and CPU ms per call, the share spent parsing, and
the tracemalloc peak of a second, traced pass; then the ratio of the peaks. Memory counts
as flat when the largest size's peak is at most FLAT_RATIO times the smallest's (the
import streams: one record in memory at a time, and the per-text caches are bounded).
Nothing here is a test (tests/test_bench_imports.py checks that its figures add up).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polygon_voice import __version__
from polygon_voice.imports.base import Format
from polygon_voice.imports.formats import find_format
from polygon_voice.imports.judging import CallJudging
from polygon_voice.imports.reader import iter_records
from polygon_voice.imports.run import ImportOptions, import_calls
from polygon_voice.judge import Judging
from polygon_voice.store import Store

DEFAULT_SIZES = (10000, 40000)  # the per-text caches are full by 10,000 calls
TARGET_CALLS_PER_SECOND = 1000
FLAT_RATIO = 1.5
WARM_UP = 50  # records imported before the timed pass
# The size of a call: the median of the public task-oriented corpora Polygon imports
# (tau-bench airline 14 turns and 5 tool calls, Schema-Guided Dialogue 18 turns), rounded up.
TURN_PAIRS = 9  # 18 turns
TOOL_AFTER_PAIRS = (1, 3, 5, 7)  # four tool calls, the last one failing
WORDS = (
    "order",
    "delivery",
    "tomorrow",
    "morning",
    "address",
    "quantity",
    "change",
    "please",
    "thanks",
    "confirm",
    "number",
    "reference",
    "appointment",
    "friday",
    "account",
    "payment",
    "card",
    "refund",
    "invoice",
    "total",
    "price",
    "the",
    "a",
    "to",
    "my",
    "your",
    "is",
    "for",
    "and",
    "we",
    "can",
    "you",
    "it",
    "of",
    "that",
    "on",
    "this",
    "with",
    "have",
    "be",
    "what",
    "when",
)


def _sentence(rng: random.Random, length: int) -> str:
    """Words drawn at random, with a number in them: no two calls say the same things, so
    nothing a cache keeps from one call serves the next."""
    words = rng.choices(WORDS, k=length)
    words[rng.randrange(length)] = str(rng.randrange(10_000))
    return " ".join(words).capitalize() + "."


def vapi_record(number: int) -> dict[str, Any]:
    """A Vapi end-of-call report webhook of realistic size, with four tool calls."""
    rng = random.Random(number)
    clock = 0.5
    messages: list[dict[str, Any]] = [
        {"role": "system", "message": "You are the order line agent. " * 8, "secondsFromStart": 0}
    ]
    for pair in range(TURN_PAIRS):
        for role, length in (("bot", 16), ("user", 9)):
            duration = 0.4 * length
            messages.append(
                {
                    "role": role,
                    "message": _sentence(rng, length),
                    "secondsFromStart": round(clock, 2),
                    "duration": int(duration * 1000),
                    "time": 1741093883000 + int(clock * 1000),
                    "endTime": 1741093883000 + int((clock + duration) * 1000),
                }
            )
            clock += duration + 0.3
        if pair in TOOL_AFTER_PAIRS:
            call_id = f"call_{number}_{pair}"
            order = str(5500 + number % 400)
            messages.append(
                {
                    "role": "tool_calls",
                    "message": "",
                    "secondsFromStart": round(clock, 2),
                    "toolCalls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": "update_order"
                                if pair == TOOL_AFTER_PAIRS[1]
                                else "get_order",
                                "arguments": json.dumps({"order_id": order, "quantity": pair}),
                            },
                        }
                    ],
                }
            )
            failed = pair == TOOL_AFTER_PAIRS[-1]
            answer = {"error": "backend timeout"} if failed else {"order_id": order}
            result = json.dumps(answer)
            messages.append(
                {
                    "role": "tool_call_result",
                    "toolCallId": call_id,
                    "name": "get_order",
                    "result": result,
                    "secondsFromStart": round(clock + 0.4, 2),
                }
            )
            clock += 0.6
    return {
        "message": {
            "type": "end-of-call-report",
            "endedReason": "customer-ended-call",
            "startedAt": "2025-03-04T13:11:22.000Z",
            "call": {"id": f"bench-{number}", "orgId": "org_1"},
            "customer": {"number": f"+1555{number:07d}"},
            "analysis": {"summary": "Changed the order.", "successEvaluation": "true"},
            "artifact": {"messages": messages, "recordingUrl": "https://example.com/r.wav"},
        }
    }


def openai_record(number: int) -> dict[str, Any]:
    """The same call as OpenAI chat messages."""
    vapi = vapi_record(number)["message"]["artifact"]["messages"]
    messages: list[dict[str, Any]] = []
    for message in vapi:
        role = message["role"]
        if role == "tool_calls":
            messages.append(
                {"role": "assistant", "content": None, "tool_calls": message["toolCalls"]}
            )
        elif role == "tool_call_result":
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": message["toolCallId"],
                    "content": message["result"],
                }
            )
        else:
            messages.append(
                {"role": {"bot": "assistant"}.get(role, role), "content": message["message"]}
            )
    return {"id": f"bench-{number}", "messages": messages}


RECORDS = {"vapi": vapi_record, "openai": openai_record}


def write_records(path: Path, size: int, fmt: str) -> int:
    """Write `size` records as JSONL; the mean record size in bytes."""
    make = RECORDS[fmt]
    with path.open("w", encoding="utf-8") as out:
        for number in range(size):
            out.write(json.dumps(make(number)) + "\n")
    return path.stat().st_size // max(size, 1)


def options_for(path: Path, fmt: str) -> ImportOptions:
    return ImportOptions(paths=(str(path),), format_name=fmt)


def judging_for(judge: str) -> CallJudging | None:
    """What `polygon import --judge deterministic` (or `none`) judges with."""
    return CallJudging(Judging()) if judge == "deterministic" else None


@dataclass
class Measured:
    size: int
    record_bytes: int
    wall: float
    cpu: float  # process CPU seconds of the timed pass: steadier than wall on a busy machine
    parse_wall: float
    peak_mib: float
    imported: int
    failed: int
    judged: int | None

    @property
    def per_second(self) -> float:
        return self.size / self.wall if self.wall else 0.0


def parse_only(path: Path, fmt: Format) -> float:
    """Seconds to read and parse every record, storing nothing: the parsing share."""
    started = time.perf_counter()
    for item in iter_records((str(path),), fmt.detect):
        value = getattr(item, "value", None)
        if value is not None:
            fmt.parse(value)
    return time.perf_counter() - started


def measure(size: int, fmt: str, judge: str) -> Measured:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "calls.jsonl"
        record_bytes = write_records(path, size, fmt)
        found = find_format(fmt)
        assert found is not None
        parse_wall = parse_only(path, found)
        _warm_up(Path(folder), fmt, judge)
        store = Store(f"sqlite:///{Path(folder) / 'polygon.db'}")
        started, cpu_started = time.perf_counter(), time.process_time()
        summary = import_calls(store, options_for(path, fmt), None, judging_for(judge))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        traced = Store(f"sqlite:///{Path(folder) / 'traced.db'}")
        tracemalloc.start()
        import_calls(traced, options_for(path, fmt), None, judging_for(judge))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return Measured(
            size=size,
            record_bytes=record_bytes,
            wall=wall,
            cpu=cpu,
            parse_wall=parse_wall,
            peak_mib=peak / 2**20,
            imported=summary.imported,
            failed=len(summary.failed),
            judged=summary.judged if judge != "none" else None,
        )


def _warm_up(folder: Path, fmt: str, judge: str) -> None:
    """Import a few records first, so that the timed pass does not pay for the first use of
    each module, model and pattern (what a long import pays once)."""
    path = folder / "warm-up.jsonl"
    write_records(path, WARM_UP, fmt)
    store = Store(f"sqlite:///{folder / 'warm-up.db'}")
    import_calls(store, options_for(path, fmt), None, judging_for(judge))
    store.close()


def _child(size: int, fmt: str, judge: str) -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    result = measure(size, fmt, judge)
    print(json.dumps(result.__dict__))


def run_sizes(sizes: list[int], fmt: str, judge: str) -> list[Measured]:
    results = []
    for size in sizes:
        command = [
            sys.executable,
            __file__,
            "--child",
            str(size),
            "--format",
            fmt,
            "--judge",
            judge,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"size {size} failed:\n{done.stderr}")
        results.append(Measured(**json.loads(done.stdout.strip().splitlines()[-1])))
    return results


def report(results: list[Measured], fmt: str, judge: str) -> None:
    print(f"polygon {__version__}, Python {platform.python_version()}, {platform.machine()}")
    print(f"format {fmt}, judge {judge}, one core, SQLite in a temporary folder")
    print(
        "  calls  bytes/rec  imported  judged  wall s  calls/s  ms/call  cpu ms/call  parse %"
        "  peak MiB"
    )
    for r in results:
        judged = "-" if r.judged is None else str(r.judged)
        share = 100 * r.parse_wall / r.wall if r.wall else 0.0
        print(
            f"{r.size:7d}  {r.record_bytes:9d}  {r.imported:8d}  {judged:>6}  {r.wall:6.2f}  "
            f"{r.per_second:7.0f}  {1000 * r.wall / r.size:7.3f}  {1000 * r.cpu / r.size:11.3f}  "
            f"{share:6.0f}%  {r.peak_mib:8.2f}"
        )
    smallest, largest = results[0], results[-1]
    ratio = largest.peak_mib / smallest.peak_mib if smallest.peak_mib else float("inf")
    slowest = min(r.per_second for r in results)
    met = "MET" if slowest >= TARGET_CALLS_PER_SECOND else "NOT MET"
    flat = "flat" if ratio <= FLAT_RATIO else "NOT flat"
    print(f"  peak memory {largest.size} vs {smallest.size} calls: {ratio:.2f}x ({flat})")
    target = f">= {TARGET_CALLS_PER_SECOND} calls/s on one core"
    print(f"  {target}: {met} (slowest {slowest:.0f} calls/s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--format", default="vapi", choices=sorted(RECORDS))
    parser.add_argument("--judge", default="deterministic", choices=("deterministic", "none"))
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child, args.format, args.judge)
        return
    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    report(run_sizes(sizes, args.format, args.judge), args.format, args.judge)


if __name__ == "__main__":
    main()
