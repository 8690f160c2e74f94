"""LLM client benchmark: harness CPU per LLM call, and efficiency against the latency bound.

    .venv/bin/python bench/llm.py [--calls 5000] [--conversations 1000] [--concurrency 128]
                                  [--latency 0.2] [--rounds 5] [--json]

The fake server runs as its own process (`python -m polygon_voice.testing.fake_llm`), so
its work is not counted. Calls go through `LLMClient` with default settings: caller and
judge write the response cache, the agent does not; the roles share one endpoint limit.
A conversation is 3 caller calls, 3 agent calls (tool schema, growing transcript) and one
judge call with structured output. Before each measurement a warm-up round runs one
conversation per worker (imports the SDK, opens the connections: paid once per run).

* CPU per call: at zero latency, `time.process_time()` of this process / calls (<= 1 ms).
* Efficiency: at `--latency` (200 ms), `--conversations` (1,000) run `--concurrency` (128)
  at a time; bound = calls x latency / concurrency; efficiency = bound / wall (>= 95 % at
  128, >= 90 % at 512).
* Ceiling (`--ceiling`): the same calls, `--concurrency` at a time, by a bare aiohttp client
  posting one fixed body, no harness at all: how close to the bound this server and machine
  let any client come.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from polygon_voice.llm import EndpointLimits, LLMClient, ResponseCache, Role, RoleConfig, Usage

CALLS_PER_CONVERSATION = 7
TARGET_CPU_MS = 1.0
TARGET_EFFICIENCY = {128: 0.95, 512: 0.90}
"""Efficiency targets by concurrency; other concurrencies are held to the nearest lower one."""
SCRIPT = """\
rules:
  - role: judge
    json: {score: 4, evidence: "The agent changed the order and confirmed it."}
  - role: agent
    turn: 1
    text: "Let me look that order up for you."
    tool_calls: [{name: lookup_order, arguments: {order_id: "A-17"}}]
  - role: agent
    text: "I have changed the delivery address. Is there anything else I can help with?"
  - role: caller
    text: "Yes, the order A-17, I need it delivered to my office instead, please."
"""
CALLER_PROMPT = (
    "You play a busy caller phoning a shop about an order. Talk like a person on the phone: "
    "short sentences, interruptions, corrections. Your facts: order A-17, new address "
    "12 Harbour Street. Goal: have the delivery address changed. " * 3
)
AGENT_PROMPT = (
    "You are the voice agent of an online shop. Be brief and friendly, confirm before any "
    "change, use the tools to look up and change orders, never invent order details. " * 6
)
LOOKUP_ORDER = {
    "name": "lookup_order",
    "description": "Find an order by its id.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
}
TOOLS = [{"type": "function", "function": LOOKUP_ORDER}]


class Verdict(BaseModel):
    """The judge's structured answer."""

    score: int
    evidence: str


@dataclass
class Measurement:
    """One measured run."""

    latency_s: float
    concurrency: int
    conversations: int
    calls: int
    wall_s: float
    cpu_s: float
    server_requests: int
    server_max_in_flight: int
    # The fake server's own CPU (its process; Linux only, else None): on a machine of two
    # cores, the client and the server share them.
    server_cpu_s: float | None = None

    @property
    def server_cpu_ms_per_call(self) -> float | None:
        return None if self.server_cpu_s is None else 1000 * self.server_cpu_s / self.calls

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls

    @property
    def bound_s(self) -> float:
        """The shortest possible wall time: calls x latency / concurrency."""
        return self.calls * self.latency_s / self.concurrency

    @property
    def efficiency(self) -> float:
        return self.bound_s / self.wall_s if self.wall_s else 0.0

    def figures(self) -> dict[str, float]:
        """Everything measured and derived, for --json."""
        derived = {
            "cpu_ms_per_call": self.cpu_ms_per_call,
            "efficiency": self.efficiency,
            "server_cpu_ms_per_call": self.server_cpu_ms_per_call,
        }
        return {**asdict(self), **derived}


@contextmanager
def fake_server(latency: float, folder: Path, rules: str = SCRIPT) -> Iterator[str]:
    """Start `python -m polygon_voice.testing.fake_llm` answering by `rules` (a script's
    YAML) and yield its base URL."""
    script = folder / "script.yaml"
    script.write_text(rules)
    command = [sys.executable, "-m", "polygon_voice.testing.fake_llm", "--script", str(script)]
    process = subprocess.Popen(
        [*command, "--latency", str(latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("fake LLM server listening on "):
            raise RuntimeError(f"the fake server did not start: {line!r}")
        base_url = line.split()[-1]
        _SERVER_PIDS[base_url] = process.pid
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)


_SERVER_PIDS: dict[str, int] = {}


def server_cpu(base_url: str) -> float | None:
    """CPU seconds (user + system) the fake server's process has used so far, read from
    /proc (Linux); None where that cannot be read."""
    pid = _SERVER_PIDS.get(base_url)
    stat = Path(f"/proc/{pid}/stat")
    if pid is None or not stat.exists():
        return None
    # After the command name, which may hold spaces: utime and stime are fields 12 and 13.
    fields = stat.read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_stats(base_url: str) -> dict[str, int]:
    """The fake server's counters (requests, max in flight)."""
    with urllib.request.urlopen(base_url.replace("/v1", "/_polygon/stats"), timeout=5) as r:
        stats: dict[str, int] = json.loads(r.read())
        return stats


def make_clients(
    base_url: str, concurrency: int, cache_dir: Path, usage: Usage
) -> dict[Role, LLMClient]:
    """Caller, agent and judge clients of one endpoint, with the default cache behaviour."""
    limits = EndpointLimits()
    cache = ResponseCache(cache_dir)
    clients: dict[Role, LLMClient] = {}
    for role in ("caller", "agent", "judge"):
        config = RoleConfig(
            role=role, model=f"bench-{role}", base_url=base_url, max_concurrency=concurrency
        )
        clients[role] = LLMClient(config, cache=cache, usage=usage, limits=limits)
    return clients


async def conversation(clients: dict[Role, LLMClient], number: int) -> int:
    """One simulated conversation through the client; returns the calls made."""
    caller_view: list[dict[str, Any]] = [
        {"role": "system", "content": f"{CALLER_PROMPT} (conversation {number})"}
    ]
    agent_view: list[dict[str, Any]] = [{"role": "system", "content": AGENT_PROMPT}]
    for _ in range(3):
        said = (await clients["caller"].chat(caller_view)).text or ""
        caller_view.append({"role": "assistant", "content": said})
        agent_view.append({"role": "user", "content": said})
        reply = await clients["agent"].chat(agent_view, tools=TOOLS)
        answer = reply.text or ""
        agent_view.append({"role": "assistant", "content": answer})
        caller_view.append({"role": "user", "content": answer})
    # The conversation's number keeps every request unique: no call is answered from cache.
    lines = [f"{m['role']}: {m['content']}" for m in agent_view[1:]]
    transcript = "\n".join([f"Conversation {number}", *lines])
    judged = await clients["judge"].chat(
        [{"role": "system", "content": "Score the call."}, {"role": "user", "content": transcript}],
        response_schema=Verdict,
    )
    assert isinstance(judged.parsed, Verdict)
    return CALLS_PER_CONVERSATION


async def run_conversations(
    clients: dict[Role, LLMClient], first: int, count: int, concurrency: int
) -> int:
    """`count` conversations, `concurrency` at a time; returns the calls made."""
    numbers = iter(range(first, first + count))
    calls = 0

    async def worker() -> None:
        nonlocal calls
        for number in numbers:
            # Await first: `calls += await ...` would read `calls` before the await.
            made = await conversation(clients, number)
            calls += made

    await asyncio.gather(*(worker() for _ in range(min(concurrency, count))))
    return calls


async def measure(
    base_url: str, latency: float, conversations: int, concurrency: int, folder: Path
) -> Measurement:
    """A warm-up round, then `conversations` conversations timed (CPU of this process, wall)."""
    usage = Usage()
    clients = make_clients(base_url, concurrency, folder / "cache", usage)
    warm_up = concurrency
    await run_conversations(clients, 0, warm_up, concurrency)
    before = server_stats(base_url)["requests"]
    server_before = server_cpu(base_url)
    cpu, wall = time.process_time(), time.perf_counter()
    calls = await run_conversations(clients, warm_up, conversations, concurrency)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    server_after = server_cpu(base_url)
    for client in clients.values():
        await client.aclose()
    stats = server_stats(base_url)
    return Measurement(
        latency_s=latency,
        concurrency=concurrency,
        conversations=conversations,
        calls=calls,
        wall_s=wall,
        cpu_s=cpu,
        server_requests=stats["requests"] - before,
        server_max_in_flight=stats["max_in_flight"],
        server_cpu_s=(
            None if server_before is None or server_after is None else server_after - server_before
        ),
    )


def target_efficiency(concurrency: int) -> float:
    """The efficiency target at `concurrency`: 95 % up to 128, 90 % at 512 and above."""
    return TARGET_EFFICIENCY[512] if concurrency >= 512 else TARGET_EFFICIENCY[128]


async def bare_client(base_url: str, calls: int, concurrency: int) -> float:
    """Wall seconds for `calls` POSTs of one fixed body, `concurrency` at a time, by a bare
    aiohttp session (the ceiling: no harness work at all)."""
    import aiohttp

    url = base_url + "/chat/completions"
    body = json.dumps({"model": "bench-caller", "messages": [{"role": "user", "content": "hi"}]})
    headers = {"Content-Type": "application/json", "X-Polygon-Role": "caller"}
    remaining = iter(range(calls))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def worker() -> None:
            for _ in remaining:
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()

        await asyncio.gather(*(worker() for _ in range(concurrency)))  # warm-up: connections
        remaining = iter(range(calls))
        wall = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - wall


def run_ceiling(latency: float, calls: int, concurrency: int) -> float:
    """The bare client's efficiency (bound / wall) against a fresh fake-server process."""
    with (
        tempfile.TemporaryDirectory(prefix="polygon-bench-llm-") as tmp,
        fake_server(latency, Path(tmp)) as base_url,
    ):
        wall = asyncio.run(bare_client(base_url, calls, concurrency))
    return (calls * latency / concurrency) / wall


def run_measurement(latency: float, conversations: int, concurrency: int) -> Measurement:
    """One measurement against a fresh fake-server process."""
    with tempfile.TemporaryDirectory(prefix="polygon-bench-llm-") as tmp:
        folder = Path(tmp)
        with fake_server(latency, folder) as base_url:
            return asyncio.run(measure(base_url, latency, conversations, concurrency, folder))


def median_of(runs: Sequence[Measurement], figure: str) -> Measurement:
    """The run whose `figure` is the median (the lower middle one for an even count)."""
    ordered = sorted(runs, key=lambda m: float(getattr(m, figure)))
    return ordered[(len(ordered) - 1) // 2]


def spread(runs: Sequence[Measurement], figure: str, scale: float, unit: str) -> str:
    """`(range a-b over N rounds)` for a figure."""
    values = sorted(float(getattr(m, figure)) * scale for m in runs)
    if len(values) == 1:
        return ""
    return f"; range {values[0]:.3g}-{values[-1]:.3g}{unit} over {len(values)} rounds"


def server_share(measured: Measurement) -> str:
    """`, the server's N ms` when its CPU could be read."""
    server = measured.server_cpu_ms_per_call
    return "" if server is None else f", the fake server's {server:.3f} ms"


def report(cpu_runs: Sequence[Measurement], bound_runs: Sequence[Measurement]) -> str:
    """The two figures (medians over the rounds) against their targets, plainly."""
    cpu = median_of(cpu_runs, "cpu_ms_per_call")
    bound = median_of(bound_runs, "efficiency")
    target = target_efficiency(bound.concurrency)
    cpu_ok = "meets" if cpu.cpu_ms_per_call <= TARGET_CPU_MS else "MISSES"
    eff_ok = "meets" if bound.efficiency >= target else "MISSES"
    return "\n".join(
        [
            "LLM client (caller, agent, judge through LLMClient); medians over the rounds.",
            f"Harness CPU per call at zero latency: {cpu.cpu_ms_per_call:.3f} ms "
            f"({cpu.calls:,} calls, {cpu.conversations:,} conversations, concurrency "
            f"{cpu.concurrency}, {cpu.calls / cpu.wall_s:,.0f} calls/s wall"
            f"{spread(cpu_runs, 'cpu_ms_per_call', 1, ' ms')}) "
            f"-> {cpu_ok} the target of {TARGET_CPU_MS:g} ms",
            f"Efficiency at {bound.latency_s * 1000:.0f} ms latency: {bound.efficiency:.1%} "
            f"of the bound ({bound.calls:,} calls x {bound.latency_s:g} s / "
            f"{bound.concurrency} = {bound.bound_s:.2f} s; wall {bound.wall_s:.2f} s; "
            f"server saw {bound.server_requests:,} requests, at most "
            f"{bound.server_max_in_flight} in flight; harness CPU "
            f"{bound.cpu_ms_per_call:.3f} ms per call{server_share(bound)}"
            f"{spread(bound_runs, 'efficiency', 100, ' %')})"
            f" -> {eff_ok} the target of {target:.0%}",
        ]
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls for the CPU figure")
    parser.add_argument("--conversations", type=int, default=1000, help="for the efficiency")
    parser.add_argument("--concurrency", type=int, default=128)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per answer")
    parser.add_argument("--rounds", type=int, default=5, help="repeat, report the medians")
    parser.add_argument("--json", action="store_true", help="print every round as JSON")
    parser.add_argument(
        "--ceiling", action="store_true", help="also time a bare aiohttp client (the ceiling)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run both measurements `--rounds` times and print them."""
    options = build_parser().parse_args(argv)
    conversations_for_cpu = math.ceil(options.calls / CALLS_PER_CONVERSATION)
    cpu_runs, bound_runs = [], []
    for _ in range(options.rounds):
        cpu_runs.append(run_measurement(0.0, conversations_for_cpu, options.concurrency))
        bound_runs.append(
            run_measurement(options.latency, options.conversations, options.concurrency)
        )
    rounds = {"zero_latency": cpu_runs, "with_latency": bound_runs}
    as_json: dict[str, Any] = {name: [m.figures() for m in runs] for name, runs in rounds.items()}
    ceilings = []
    if options.ceiling:
        calls = bound_runs[0].calls
        ceilings = [run_ceiling(options.latency, calls, options.concurrency) for _ in cpu_runs]
        as_json["bare_client_efficiency"] = ceilings
    print(json.dumps(as_json, indent=2) if options.json else report(cpu_runs, bound_runs))
    if ceilings and not options.json:
        print(
            f"Ceiling: a bare aiohttp client, the same {bound_runs[0].calls:,} calls at "
            f"concurrency {options.concurrency}: {sorted(ceilings)[(len(ceilings) - 1) // 2]:.1%}"
            f" of the bound (median of {len(ceilings)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
