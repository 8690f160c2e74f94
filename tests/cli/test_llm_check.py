"""`polygon llm check`: what each role's endpoint supports, its output and exit codes."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polygon_voice.cli import app
from polygon_voice.llm.capabilities import forget_capabilities
from polygon_voice.llm.dialects import forget_forms
from polygon_voice.testing import FakeLLMServer

CLEAN = {name: "" for name in os.environ if name.startswith("POLYGON_")}


@pytest.fixture(autouse=True)
def fresh(tmp_path: Path) -> Iterator[None]:
    forget_capabilities()
    forget_forms()
    cwd = Path.cwd()
    os.chdir(tmp_path)  # the capability cache goes to .polygon/llm-cache here
    yield
    os.chdir(cwd)
    forget_capabilities()
    forget_forms()


def check(*args: str, **env: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        app, ["llm", "check", *args], env={**CLEAN, "COLUMNS": "200", **env}
    )
    return result.exit_code, result.stdout, result.stderr


def lines_of(out: str) -> dict[str, list[str]]:
    """Each capability line of the text output, split into its columns."""
    found = {}
    for line in out.splitlines():
        if line.startswith("  "):
            cells = [cell for cell in line.strip().split("  ") if cell.strip()]
            found[cells[0].strip()] = [cell.strip() for cell in cells[1:]]
    return found


def test_a_llamacpp_judge_is_described(tmp_path: Path) -> None:
    with FakeLLMServer(dialect="llamacpp") as server:
        code, out, err = check("--role", "judge", POLYGON_BASE_URL=server.base_url,
                               POLYGON_JUDGE_MODEL="any-name")  # fmt: skip
    assert code == 0, err
    assert f"judge: {server.base_url} (model any-name, llama.cpp)" in out
    shown = lines_of(out)
    assert shown["structured output"][:2] == ["json_object", "found"]
    assert shown["tools"][:2] == ["with tool choice", "found"]
    assert shown["prompt logprobs"][:2] == ["unaligned", "found"]
    assert shown["context length"][:2] == ["4096 tokens", "found"]
    assert shown["slots"][:2] == ["1", "found"]
    assert "max_concurrency: 1" in shown["slots"][2]


def test_json_output_and_the_cache(tmp_path: Path) -> None:
    with FakeLLMServer(dialect="vllm") as server:
        env = {"POLYGON_BASE_URL": server.base_url, "POLYGON_CALLER_MODEL": "m"}
        code, out, _ = check("--json", **env)
        probes = len(server.probes)
        forget_capabilities()  # a new process: only the file remembers
        again, out_again, _ = check("--json", **env)
        cached_probes = len(server.probes)
        check("--refresh", **env)
        refreshed = len(server.probes)
    [report] = json.loads(out)
    assert code == again == 0
    assert report["role"] == "caller"
    assert report["server_kind"] == "vllm"
    assert report["capabilities"]["structured output"] == {
        "value": "json_schema", "source": "found", "hint": "response_format json_schema is taken"
    }  # fmt: skip
    assert report["capabilities"]["context length"]["value"] == "8192 tokens"
    assert json.loads(out_again) == [report]
    assert cached_probes == probes  # the cache answered: no probe sent
    assert refreshed > cached_probes  # --refresh ignores it
    assert (tmp_path / ".polygon" / "llm-cache" / "capabilities.json").exists()


def test_configured_values_are_shown_as_such_and_not_probed(tmp_path: Path) -> None:
    with FakeLLMServer(dialect="vllm", tool_flags=False) as server:
        config = tmp_path / "polygon.yaml"
        config.write_text(
            f"llm:\n  base_url: {server.base_url}\n  agent:\n    model: m\n"
            "    structured_output: json_object\n    tool_choice: omit\n    seed_max: 65535\n"
        )
        code, out, err = check("--config", str(config))
        sent = [p.body for p in server.probes]
    assert code == 0, err  # tools refused with tool_choice, but the user chose to omit it
    shown = lines_of(out)
    assert shown["structured output"][:2] == ["json_object", "configured"]
    assert shown["tools"][:2] == ["tool_choice omit", "configured"]
    assert shown["seed range"][:2] == ["up to 65535", "configured"]
    assert not any("response_format" in body or "tools" in body or "seed" in body for body in sent)


def test_an_endpoint_refusing_tools_fails_the_agent(tmp_path: Path) -> None:
    with FakeLLMServer(dialect="vllm", tool_flags=False) as server:
        code, out, err = check(POLYGON_AGENT_BASE_URL=server.base_url, POLYGON_AGENT_MODEL="m")
    assert code == 2
    assert lines_of(out)["tools"][:2] == ["refused", "found"]
    assert "refuses tool calls" in err
    assert "--enable-auto-tool-choice" in " ".join(err.split())


def test_an_endpoint_that_cannot_be_reached_exits_3() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = check(POLYGON_JUDGE_BASE_URL=f"http://127.0.0.1:{port}/v1?key=CANARY-9",
                           POLYGON_JUDGE_MODEL="m")  # fmt: skip
    assert code == 3
    assert f"cannot connect to http://127.0.0.1:{port}/v1?key=***" in " ".join(err.split())
    assert "CANARY-9" not in out + err


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (("--role", "waiter"), {"POLYGON_JUDGE_MODEL": "m"}, "--role 'waiter'"),
        ((), {}, "no role has a model"),
        ((), {"POLYGON_JUDGE_MODEL": "m", "POLYGON_PROBE_TIMEOUT": "-1"}, "POLYGON_PROBE_TIMEOUT"),
        (("--config", "missing.yaml"), {}, "missing.yaml"),
        (("--role", "agent"), {"POLYGON_JUDGE_MODEL": "m"}, "no model is named"),
    ],
)
def test_bad_input_exits_2(args: tuple[str, ...], env: dict[str, str], message: str) -> None:
    code, _, err = check(*args, **env)
    assert code == 2
    assert message in " ".join(err.split())


def test_the_command_is_listed() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert "llm" in result.stdout


def test_a_server_too_slow_for_the_probe_leaves_unknowns_and_says_why() -> None:
    with FakeLLMServer(dialect="llamacpp", latency=5) as server:
        code, out, err = check(POLYGON_JUDGE_BASE_URL=server.base_url, POLYGON_JUDGE_MODEL="m",
                               POLYGON_PROBE_TIMEOUT="0.3")  # fmt: skip
        sent = len(server.probes)
    assert code == 0  # reachable; nothing found is not something refused
    shown = lines_of(out)
    assert shown["structured output"][:2] == ["unknown", "unknown"]
    assert "not answered within 0.3 s" in shown["structured output"][2]
    assert shown["context length"][:2] == ["4096 tokens", "found"]  # GET /props answered
    assert "POLYGON_PROBE_TIMEOUT" in " ".join(err.split())
    assert sent == 1  # after the first unanswered request no more are sent


def test_roles_on_one_endpoint_and_model_are_shown_once(tmp_path: Path) -> None:
    with FakeLLMServer(dialect="vllm") as server:
        code, out, err = check(POLYGON_BASE_URL=server.base_url, POLYGON_JUDGE_MODEL="m",
                               POLYGON_CALLER_MODEL="m", POLYGON_AGENT_MODEL="other")  # fmt: skip
    assert code == 0, err
    heads = [line for line in out.splitlines() if not line.startswith("  ")]
    assert heads[0].startswith("caller: ")
    assert heads[1] == f"judge: {server.base_url} (model m): as caller above"
    assert heads[2].startswith("agent: ")
    assert "as caller" not in heads[2]
    assert out.count("structured output") == 2
