"""A model-played run for the benchmarks: every role a model, the fake server its own process.

Used by bench/first_request.py (time to the first request) and bench/model_memory.py (peak
memory over N conversations). The run is `polygon run SUITE --agent prompt:agent.yaml
--judge llm --llm-config llm.yaml` in a folder of its own:

* the suite is the order-line example's tools and records with one `caller: llm` scenario,
  its `repeat` set to the number of conversations wanted;
* the prompt agent (`agent.yaml`) plays the order line's prompt through the fake server;
* the caller and the judge are models too, through the same server (`llm.yaml`);
* the fake server (`python -m polygon_voice.testing.fake_llm`) answers all three from
  SCRIPT at zero latency (or `--latency`), as its own process, so its work is not counted.

A conversation is two caller lines, about four agent requests (greeting, tool call, report,
goodbye) and one judge request.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_SUITE = ROOT / "examples" / "order_line" / "suite.yaml"
EXAMPLE_PROMPT = ROOT / "examples" / "order_line" / "prompt.md"
READY = "fake LLM server listening on "
JUDGE_CRITERIA = (
    "goal_achievement",
    "instruction_following",
    "factual_accuracy",
    "tool_use_quality",
    "conversation_flow",
    "robustness",
    "persona_tone",
    "safety_compliance",
)
QUOTE = "order 5590 now has 3 items"

SCENARIO = """
  - id: change-quantity-{number:02d}
    caller: llm
    expect:
      outcome: success
      backend: {{orders: {{"5590": {{quantity: 3}}}}}}
    persona:
      goal: Change the quantity of order 5590 to 3.
      facts: {{order_id: "5590", quantity: 3}}
"""


def script_text() -> str:
    """The fake server's rules for the caller, the prompt agent and the judge."""
    judge = {
        "criteria": {
            cid: {"score": 5, "evidence": QUOTE, "reason": "done as asked"}
            for cid in JUDGE_CRITERIA
        }
    }
    rules: list[dict[str, Any]] = [
        {"role": "judge", "json": judge},
        # The caller: its request for the first line holds one user message (the greeting).
        {
            "role": "caller",
            "turn": 1,
            "json": {"say": "Hi, I'd like to change order 5590 to 3 please.", "end_call": False},
        },
        {"role": "caller", "json": {"say": "No thanks, that's all.", "end_call": True}},
        # The agent, keyed on the caller's words and on a tool's answer.
        {"role": "agent", "contains": "[the call has connected]", "text": "Order line, hello."},
        {
            "role": "agent",
            "last_role": "user",
            "regex": "(?i)\\b(bye|that's all|no thanks)\\b",
            "tool_calls": [{"name": "end_call", "arguments": {"reason": "the caller is done"}}],
        },
        {"role": "agent", "last_role": "tool", "text": f"Done: {QUOTE}. Anything else?"},
        {
            "role": "agent",
            "regex": "\\b5590\\b.*\\b3\\b",
            "tool_calls": [
                {"name": "update_order", "arguments": {"order_id": "5590", "quantity": 3}}
            ],
        },
        {"role": "agent", "text": "Sorry, could you say the order number again?"},
    ]
    return json.dumps({"rules": rules}, indent=1)


def suite_text(conversations: int, scenarios: int = 1) -> str:
    """The order line's tools and records, `scenarios` copies of one `caller: llm` scenario,
    with `repeat` raised so the suite plans at least `conversations` calls."""
    head = EXAMPLE_SUITE.read_text(encoding="utf-8").split("\nscenarios:", 1)[0]
    head = head.replace("agent: agent.py:OrderLineAgent", "agent: prompt:agent.yaml")
    repeat = max(1, math.ceil(conversations / scenarios))
    listed = "".join(SCENARIO.format(number=n) for n in range(1, scenarios + 1))
    return f"{head}\nrepeat: {repeat}\nscenarios:{listed}"


def planned(conversations: int, scenarios: int = 1) -> int:
    """How many conversations `suite_text(conversations, scenarios)` plans."""
    return scenarios * max(1, math.ceil(conversations / scenarios))


@dataclass(frozen=True)
class Workload:
    """The files of one model-played run, in `folder`."""

    folder: Path
    suite: Path
    agent: Path
    llm_config: Path

    def run_args(self, *extra: str) -> list[str]:
        """`polygon run`'s arguments (without the program) for this workload."""
        return [
            "run",
            str(self.suite),
            "--agent",
            f"prompt:{self.agent}",
            "--judge",
            "llm",
            "--llm-config",
            str(self.llm_config),
            "--db",
            str(self.folder / "polygon.db"),
            "--out",
            str(self.folder / "out"),
            "--quiet",
            *extra,
        ]


def write_workload(folder: Path, base_url: str, conversations: int, scenarios: int = 1) -> Workload:
    """Write the suite, the prompt agent and the LLM settings into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompt.md").write_text(EXAMPLE_PROMPT.read_text(encoding="utf-8"), "utf-8")
    agent = folder / "agent.yaml"
    agent.write_text(
        f"model: fake-agent\nbase_url: {base_url}\nsystem_prompt: prompt.md\n"
        "params:\n  temperature: 0.3\n  max_tokens: 300\n",
        encoding="utf-8",
    )
    llm_config = folder / "llm.yaml"
    # The caller and the judge keep the default response cache (a file in the folder).
    llm_config.write_text(
        f"llm:\n  base_url: {base_url}\n  cache_dir: {folder / 'llm-cache'}\n"
        "  caller: {model: fake-caller}\n  judge: {model: fake-judge}\n",
        encoding="utf-8",
    )
    suite = folder / "suite.yaml"
    suite.write_text(suite_text(conversations, scenarios), encoding="utf-8")
    return Workload(folder, suite, agent, llm_config)


def write_script(folder: Path) -> Path:
    """The fake server's script file in `folder` (written before the server starts)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "script.json"
    script.write_text(script_text(), encoding="utf-8")
    return script


def polygon_command() -> list[str]:
    """The installed `polygon` script beside this Python, else `python -m polygon_voice`."""
    script = Path(sys.executable).with_name("polygon")
    return [str(script)] if script.exists() else [sys.executable, "-m", "polygon_voice"]


BYTECODE = Path(tempfile.gettempdir()) / "polygon-bench-bytecode"


def clean_env() -> dict[str, str]:
    """The environment without the user's own model settings (the files say everything), and
    with bytecode written and read as an installed package has it.

    With PYTHONDONTWRITEBYTECODE set (some CI images and containers set it), every start
    compiles Polygon's ~170 modules from source again (0.75 s of a start under cProfile),
    which an installed package never pays. The bytecode goes to a folder of its own
    (PYTHONPYCACHEPREFIX), not into the tree.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("POLYGON_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.setdefault("PYTHONPYCACHEPREFIX", str(BYTECODE))
    env["COLUMNS"] = "120"
    return env


@contextmanager
def fake_server(script: Path, latency: float = 0.0) -> Iterator[str]:
    """Start the fake server as its own process on `script`; yield its base URL."""
    command = [sys.executable, "-m", "polygon_voice.testing.fake_llm", "--script", str(script)]
    if latency:
        command += ["--latency", str(latency)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=clean_env())
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith(READY):
            raise RuntimeError(f"the fake server did not start: {line!r}")
        yield line[len(READY) :].strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def server_get(base_url: str, route: str) -> dict[str, Any]:
    """GET one of the fake server's own routes (`stats`, `arrivals`) as JSON."""
    url = base_url.removesuffix("/v1") + f"/_polygon/{route}"
    with urllib.request.urlopen(url, timeout=5) as response:
        data: dict[str, Any] = json.loads(response.read())
        return data
