"""Harness CPU per model request, end to end, with deepeval side by side on the same workload.

    .venv/bin/python bench/cost_per_request.py [--conversations 200] [--concurrency 32]
        [--rounds 3] [--no-deepeval] [--deepeval-model custom|local] [--json]

Every role is played by a model through the fake OpenAI-compatible server, run as its own
process at zero latency (`python -m polygon_voice.testing.fake_llm`), so only the harness's
own work is measured:

* Polygon: `polygon_voice.api.run_suite` with a prompt agent, a `caller: llm` scenario
  played `--conversations` times (trials) and `judge="llm"`; 5 exchanges per call (the
  agent greets, the caller speaks 5 times and hangs up after the agent's fifth answer); the
  behaviour probes off (`run_probes=False`: they ask no model); the response cache off (every
  request reaches the server, as with deepeval, which has none).
* deepeval 4.3.1 (bench/peers/deepeval_workload.py, in a venv of its own, made on first use
  under .polygon/bench/deepeval-venv): `ConversationSimulator` plays the caller for 5
  exchanges against a model callback that calls the server with the `openai` client, then
  `ConversationalGEval` scores each conversation (one request each) through `evaluate()`;
  the simulator's and the metric's model is a `DeepEvalBaseLLM` over one shared `openai`
  client (`--deepeval-model local`: deepeval's own `LocalModel`, a new client per request).

Each harness runs in a child process; its CPU is `time.process_time()` at the end of that
process (imports included), and from the call of its entry point on (`run_suite`; deepeval's
`simulate` and `evaluate`: the imports made before it excluded, the lazy ones made inside it
included), divided by the requests the server counted; Polygon's own count must match. The
ratio is Polygon's figure from the entry point on over deepeval's; the target is at most 0.5.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make `bench.llm` importable
    sys.path.insert(0, str(ROOT))

from bench.llm import fake_server, server_stats  # noqa: E402

EXCHANGES = 5
TARGET_RATIO = 0.5
DEEPEVAL = "deepeval==4.3.1"
DEEPEVAL_VENV = ROOT / ".polygon" / "bench" / "deepeval-venv"
DEEPEVAL_WORKLOAD = ROOT / "bench" / "peers" / "deepeval_workload.py"
QUOTE = "Order 5590, three items instead of two"
CRITERIA = (
    "goal_achievement",
    "instruction_following",
    "tool_use_quality",
    "factual_accuracy",
    "dialogue_quality",
    "robustness",
    "safety_compliance",
    "persona_tone",
)
# One script answers both harnesses: Polygon's roles by their header, deepeval's prompts by
# the JSON key each one asks for (its simulator and its metric send a single user message).
_JUDGE_ANSWER = {
    "criteria": {c: {"score": 5, "evidence": QUOTE, "reason": "as asked"} for c in CRITERIA}
}
CALLER_LINES = (
    "Hello, I am calling about my order 5590.",
    "I would like it changed to 3 items, please.",
    "Yes, 3 items, that is right.",
    "And it still comes on the same day?",
    "That is all, thank you. Goodbye.",
)
AGENT_LINES = (
    "Thank you for calling the order line, how can I help?",
    "Sure, which change would you like for order 5590?",
    f"{QUOTE}: shall I make that change?",
    "Done: order 5590 now has 3 items.",
    "Yes, the delivery date stays as it was.",
    "You are welcome, goodbye.",
)


def _rules() -> str:
    """One agent line per turn and one caller line per turn: no reply repeats (the engine
    would end the call as a loop), and the caller hangs up after its last line."""
    rules = [{"role": "judge", "json": _JUDGE_ANSWER}]
    for turn, line in enumerate(CALLER_LINES, start=1):
        said = {"say": line, "end_call": turn == len(CALLER_LINES)}
        rules.append({"role": "caller", "turn": turn, "json": said})
    for turn, line in enumerate(AGENT_LINES, start=1):
        rules.append({"role": "agent", "turn": turn, "text": line})
    rules += [
        {"contains": "simulated_input", "json": {"simulated_input": CALLER_LINES[1]}},
        {"contains": '"score"', "json": {"score": 8, "reason": "It asked before changing it."}},
        {"text": AGENT_LINES[2]},  # deepeval's agent, and anything else
    ]
    return json.dumps({"rules": rules}, indent=1)  # JSON is YAML


RULES = _rules()
SUITE = """\
name: cost-per-request
agent: prompt:agent.yaml
language: en
scenarios:
  - id: change-quantity
    caller: llm
    persona:
      goal: Change the quantity of order 5590 to 3.
      facts: {order_id: "5590", quantity: 3}
"""
AGENT = """\
system_prompt: prompt.md
params: {temperature: 0.3, max_tokens: 300}
"""
AGENT_PROMPT = (
    "You are the phone agent of an order line. Speak in short, spoken sentences. Before "
    "changing an order, read back the order number and the change, and wait for a yes.\n"
)


@dataclass
class Side:
    """One harness's run of the workload."""

    harness: str
    conversations: int
    turns: int
    server_requests: int
    client_requests: int  # what the harness itself counted (-1: it counts none)
    cpu_s: float  # the whole child process, imports included
    cpu_s_from_first_request: float  # from the entry point's call on (see the docstring)

    @property
    def cpu_ms_per_request(self) -> float:
        """From the entry point's call on: the figure compared."""
        return 1000 * self.cpu_s_from_first_request / max(self.server_requests, 1)

    @property
    def cpu_ms_per_request_with_imports(self) -> float:
        return 1000 * self.cpu_s / max(self.server_requests, 1)

    @property
    def cpu_ms_per_turn(self) -> float:
        return 1000 * self.cpu_s_from_first_request / max(self.turns, 1)

    def figures(self) -> dict[str, Any]:
        """Everything measured and derived, for --json."""
        derived = {
            "cpu_ms_per_request": self.cpu_ms_per_request,
            "cpu_ms_per_request_with_imports": self.cpu_ms_per_request_with_imports,
            "cpu_ms_per_turn": self.cpu_ms_per_turn,
        }
        return {**asdict(self), **derived}


def write_workload(folder: Path, base_url: str, concurrency: int) -> Path:
    """The suite, the prompt agent and the LLM config of Polygon's side; returns the suite."""
    role = {
        "model": "fake",
        "base_url": base_url,
        "cache": False,
        "max_concurrency": concurrency,
    }
    llm = {"llm": {"cache_dir": str(folder / "cache"), "caller": role, "judge": role}}
    (folder / "llm.json").write_text(json.dumps(llm), encoding="utf-8")
    (folder / "prompt.md").write_text(AGENT_PROMPT, encoding="utf-8")
    agent = AGENT + f"llm_config: llm.json\nmodel: fake-agent\nbase_url: {base_url}\n"
    (folder / "agent.yaml").write_text(agent, encoding="utf-8")
    suite = folder / "suite.yaml"
    suite.write_text(SUITE, encoding="utf-8")
    return suite


def polygon_workload(folder: Path, conversations: int, concurrency: int) -> dict[str, Any]:
    """Run Polygon's side in this process (the child); its figures."""
    from polygon_voice.api import run_suite

    started = time.process_time()
    result = run_suite(
        folder / "suite.yaml",
        judge="llm",
        run_probes=False,
        trials=conversations,
        concurrency=concurrency,
        llm_config=folder / "llm.json",
        db=str(folder / "polygon.db"),
        out=folder / "out",
    )
    cpu_from_first_request = time.process_time() - started
    usage = result.usage or {}
    requests = int(usage.get("total", {}).get("calls", 0))
    errors = [message for _, message in result.errors]
    return {
        "harness": "polygon",
        "cpu_s": time.process_time(),
        "cpu_s_from_first_request": cpu_from_first_request,
        "conversations": len(result.calls),
        "turns": result.turns_run,
        "client_requests": requests,
        "errors": errors[:3],
        "verdicts": result.verdicts,
    }


def run_child(command: list[str], cwd: Path) -> dict[str, Any]:
    """A harness's child process; its last stdout line is its figures as JSON."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=3600)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{command[1]} failed ({done.returncode}): {done.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def measure_polygon(conversations: int, concurrency: int) -> Side:
    """Polygon's side against a fresh fake server."""
    with tempfile.TemporaryDirectory(prefix="polygon-bench-cost-") as tmp:
        folder = Path(tmp)
        with fake_server(0.0, folder, RULES) as base_url:
            write_workload(folder, base_url, concurrency)
            command = [sys.executable, __file__, "--child", str(folder)]
            command += ["--conversations", str(conversations), "--concurrency", str(concurrency)]
            figures = run_child(command, folder)
            requests = server_stats(base_url)["requests"]
    if figures["errors"]:
        raise RuntimeError(f"polygon: calls ended in error: {figures['errors']}")
    return _side(figures, requests)


def measure_deepeval(
    python: Path, conversations: int, concurrency: int, model: str = "custom"
) -> Side:
    """deepeval's side against a fresh fake server, in its own venv (`model`: "custom", one
    shared SDK client; "local", deepeval's LocalModel)."""
    with tempfile.TemporaryDirectory(prefix="polygon-bench-deepeval-") as tmp:
        folder = Path(tmp)
        with fake_server(0.0, folder, RULES) as base_url:
            command = [str(python), str(DEEPEVAL_WORKLOAD), "--base-url", base_url]
            command += ["--conversations", str(conversations), "--concurrency", str(concurrency)]
            command += ["--exchanges", str(EXCHANGES), "--model", model]
            figures = run_child(command, folder)  # deepeval writes its .deepeval/ folder here
            requests = server_stats(base_url)["requests"]
    if figures["scored"] != figures["conversations"]:
        raise RuntimeError(f"deepeval scored {figures['scored']} of {figures['conversations']}")
    return _side(figures, requests)


def _side(figures: dict[str, Any], server_requests: int) -> Side:
    return Side(
        harness=str(figures["harness"]),
        conversations=int(figures["conversations"]),
        turns=int(figures["turns"]),
        server_requests=server_requests,
        client_requests=int(figures.get("client_requests", -1)),
        cpu_s=float(figures["cpu_s"]),
        cpu_s_from_first_request=float(figures["cpu_s_from_first_request"]),
    )


def deepeval_python(install: bool) -> Path | None:
    """The deepeval venv's interpreter, made on first use (None: absent and not made)."""
    python = DEEPEVAL_VENV / "bin" / "python"
    if python.exists():
        return python
    if not install:
        return None
    print(f"making {DEEPEVAL_VENV} with {DEEPEVAL} (once)...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(DEEPEVAL_VENV)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet", DEEPEVAL]
    subprocess.run(pip, check=True)
    return python


def median(values: Sequence[float]) -> float:
    """The median (the lower middle one for an even count)."""
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def report(polygon: Sequence[Side], deepeval: Sequence[Side]) -> str:
    """Both harnesses' figures (medians over the rounds) and the ratio against its target."""
    lines = [f"CPU per model request, end to end, {EXCHANGES} exchanges per call; medians."]
    for runs in (polygon, deepeval):
        if not runs:
            continue
        first = runs[0]
        per_request = [s.cpu_ms_per_request for s in runs]
        lines.append(
            f"{first.harness}: {median(per_request):.3f} ms per request "
            f"(range {min(per_request):.3f}-{max(per_request):.3f} over {len(runs)} rounds); "
            f"{median([s.cpu_ms_per_request_with_imports for s in runs]):.3f} ms with imports; "
            f"{median([s.cpu_ms_per_turn for s in runs]):.3f} ms per turn; "
            f"{first.conversations} conversations, {first.server_requests} requests, "
            f"{first.turns} turns"
        )
    if polygon and deepeval:
        ratio = median([s.cpu_ms_per_request for s in polygon]) / median(
            [s.cpu_ms_per_request for s in deepeval]
        )
        verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
        lines.append(f"ratio polygon/deepeval: {ratio:.2f} -> {verdict} the target of "
                     f"<= {TARGET_RATIO:g}")  # fmt: skip
    return "\n".join(lines)


def check(side: Side) -> None:
    """Refuse figures that do not add up: every request counted by the client reached the
    server, every conversation played its exchanges."""
    if side.client_requests >= 0 and side.client_requests != side.server_requests:
        raise RuntimeError(
            f"{side.harness}: the client counted {side.client_requests} requests, the server "
            f"{side.server_requests}"
        )
    if side.turns < side.conversations * 2 * EXCHANGES:
        raise RuntimeError(f"{side.harness}: {side.turns} turns in {side.conversations} calls")


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="repeat, report the medians")
    parser.add_argument("--no-deepeval", action="store_true", help="Polygon's side only")
    parser.add_argument(
        "--deepeval-model",
        choices=("custom", "local"),
        default="custom",
        help="deepeval's model: a custom one over one shared client, or its LocalModel",
    )
    parser.add_argument(
        "--no-install", action="store_true", help="skip deepeval unless its venv exists"
    )
    parser.add_argument("--json", action="store_true", help="print every round as JSON")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Measure both harnesses `--rounds` times and print the figures."""
    options = build_parser().parse_args(argv)
    if options.child is not None:
        figures = polygon_workload(options.child, options.conversations, options.concurrency)
        print(json.dumps(figures, default=str), flush=True)
        return 0
    python = None if options.no_deepeval else deepeval_python(not options.no_install)
    polygon: list[Side] = []
    deepeval: list[Side] = []
    for _ in range(options.rounds):
        polygon.append(measure_polygon(options.conversations, options.concurrency))
        if python is not None:
            deepeval.append(
                measure_deepeval(
                    python, options.conversations, options.concurrency, options.deepeval_model
                )
            )
    for side in [*polygon, *deepeval]:
        check(side)
    if options.json:
        rounds = {"polygon": polygon, "deepeval": deepeval}
        print(json.dumps({k: [s.figures() for s in v] for k, v in rounds.items()}, indent=2))
    else:
        print(report(polygon, deepeval))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
