"""`polygon personas generate` when its model cannot work, run as a user runs it: a separate
process, a real fake server (or a closed port), a missing key, the `llm` extra missing."""

from __future__ import annotations

import os
import pty
import re
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice.store import PersonaRecord, Store
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import ROOT, Polygon

CANARY = "sk-persona-canary-0a1b2c3d4e"
PERSONA = {"name": "Maria Lopez", "goal": "Change order 4821.", "facts": {"order_id": "4821"}}
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A finder that refuses the `aiohttp` package, as if the `llm` extra were not installed.
NO_LLM_EXTRA = """
import sys

class _NoClient:
    def find_spec(self, name, path=None, target=None):
        if name == "aiohttp" or name.startswith("aiohttp."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NoClient())
"""


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the model settings a test gives (the developer's shell may set some)."""
    for name in list(os.environ):
        if name.startswith("POLYGON_") and name != "POLYGON_DB":
            monkeypatch.delenv(name)


@pytest.fixture
def prompt(polygon: Polygon) -> Path:
    path = polygon.workdir / "prompt.md"
    path.write_text((ROOT / "examples" / "order_line" / "prompt.md").read_text())
    return path


def stored(polygon: Polygon) -> list[PersonaRecord]:
    with Store(f"sqlite:///{polygon.db}") as store:
        return store.list_personas()


def generate(polygon: Polygon, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return polygon.subprocess("personas", "generate", "--prompt", "prompt.md", *args, env=env)


def model_env(base_url: str, **more: str) -> dict[str, str]:
    return {"POLYGON_CALLER_BASE_URL": base_url, "POLYGON_CALLER_MODEL": "fake-model", **more}


def use(persona_id: str) -> str:
    return f"Use one in a suite: persona_ref: {persona_id}"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def assert_plain(result: subprocess.CompletedProcess[str]) -> None:
    """No traceback and no key, on either stream."""
    for stream in (result.stdout, result.stderr):
        assert "Traceback" not in stream
        assert CANARY not in stream


@pytest.fixture
def failing_model() -> Iterator[FakeLLMServer]:
    with FakeLLMServer([Rule(error=500, message="boom")]) as server:
        yield server


def test_a_model_failing_for_all_exits_3_naming_the_cause_once(
    polygon: Polygon, prompt: Path, failing_model: FakeLLMServer
) -> None:
    (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 1}\n")
    result = generate(
        polygon, model_env(failing_model.base_url), "--n", "3", "--llm-config", "llm.yaml"
    )
    assert result.returncode == 3, result.stderr
    assert_plain(result)
    assert result.stderr.count("HTTP 500: boom") == 1  # one cause, printed once
    assert (
        "personas 1 (cooperative, success), 2 (busy, refusal), 3 (distrustful, callback) "
        f"failed: caller call to {failing_model.base_url} (model fake-model) failed after "
        "2 attempts: HTTP 500: boom"
    ) in result.stderr
    usage, shown = result.stdout.strip().splitlines()
    assert shown == "No persona stored: the model failed for all 3 (see above)."
    assert usage.startswith("model usage: 0 requests (0 cached, 3 retried, 3 failed)")
    assert "persona_ref" not in result.stdout
    assert stored(polygon) == []
    assert failing_model.request_count == 6  # two attempts each, no more


def test_a_partial_generation_stores_what_it_got_and_exits_3(
    polygon: Polygon, prompt: Path
) -> None:
    rules = [
        Rule(contains="Persona number 2:", error=503, message="overloaded"),
        Rule(structured=True, json=PERSONA),
    ]
    with FakeLLMServer(rules) as server:
        (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 0}\n")
        result = generate(
            polygon, model_env(server.base_url), "--n", "3", "--llm-config", "llm.yaml"
        )
    assert result.returncode == 3
    assert_plain(result)
    assert "persona 2 (busy, refusal) failed:" in result.stderr
    assert result.stderr.count("overloaded") == 1
    records = stored(polygon)
    assert [r.persona.type.value for r in records] == ["cooperative", "distrustful"]
    last = result.stdout.splitlines()[-1]
    assert last == f"2 of 3 personas stored; 1 failed (see above). {use(records[0].id)}"


def test_a_closed_port_stops_before_any_persona_with_exit_2(polygon: Polygon, prompt: Path) -> None:
    port = closed_port()
    result = generate(polygon, model_env(f"http://127.0.0.1:{port}/v1"), "--n", "2")
    assert result.returncode == 2
    assert_plain(result)
    assert result.stderr.startswith(
        "error: persona generation cannot start; nothing was sent or run:\n"
        "  - caller (persona generation): cannot connect to "
        f"http://127.0.0.1:{port}/v1: connection refused. Is the server running?"
    )
    assert result.stdout == ""
    assert stored(polygon) == []


def test_a_missing_key_stops_before_any_request(polygon: Polygon, prompt: Path) -> None:
    with FakeLLMServer([Rule(structured=True, json=PERSONA)]) as server:
        (polygon.workdir / "llm.yaml").write_text("llm:\n  api_key_env: MY_PERSONA_KEY\n")
        result = generate(
            polygon, model_env(server.base_url), "--n", "2", "--llm-config", "llm.yaml"
        )
        assert server.request_count == 0
    assert result.returncode == 2
    assert_plain(result)
    assert "caller (persona generation): the API key variable MY_PERSONA_KEY is not set" in (
        result.stderr
    )
    # The hosted default endpoint with no key at all: stopped without touching the network.
    result = generate(polygon, {"POLYGON_CALLER_MODEL": "gpt-4o-mini"}, "--n", "1")
    assert result.returncode == 2
    assert "no API key for https://api.openai.com/v1" in result.stderr


def test_a_refused_key_is_reported_without_its_value(polygon: Polygon, prompt: Path) -> None:
    with FakeLLMServer([Rule(structured=True, json=PERSONA)], api_key="the-right-key") as server:
        (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 0}\n")
        env = model_env(server.base_url, POLYGON_CALLER_API_KEY=CANARY)
        result = generate(polygon, env, "--n", "1", "--llm-config", "llm.yaml")
    assert result.returncode == 3
    assert_plain(result)
    assert "HTTP 401: fake LLM server: incorrect API key provided" in result.stderr


def test_without_the_llm_extra_a_model_stops_with_the_install_command(
    polygon: Polygon, prompt: Path, tmp_path: Path
) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(NO_LLM_EXTRA)
    blocked = {"PYTHONPATH": str(hooks)}
    with FakeLLMServer([Rule(structured=True, json=PERSONA)]) as server:
        result = generate(polygon, {**blocked, **model_env(server.base_url)}, "--n", "1")
    assert result.returncode == 2
    assert_plain(result)
    assert (
        "caller (persona generation): the `llm` extra is not installed (the aiohttp package "
        "is missing). Install it: pip install 'polygon-voice[llm]'"
    ) in result.stderr
    # Without a model the extra is not needed: the personas are made from the prompt.
    result = generate(polygon, blocked, "--n", "1")
    assert result.returncode == 0, result.stderr
    assert "no caller model is named" in result.stderr
    assert [r.generator for r in stored(polygon)] == ["deterministic"]


def test_the_progress_bar_shows_requests_in_flight_on_a_terminal(
    polygon: Polygon, prompt: Path
) -> None:
    with FakeLLMServer([Rule(structured=True, json=PERSONA, latency=0.8)]) as server:
        env = {**os.environ, **model_env(server.base_url), "TERM": "xterm", "COLUMNS": "160"}
        screen = on_a_terminal(polygon, env, "--n", "2", "--concurrency", "1")
    assert "personas from prompt.md" in screen
    assert "0/2" in screen
    assert "model requests: 1 in flight, 1 sent, 0 retried, 0 failed" in screen
    assert "2 of 2 personas stored" in screen
    # --quiet: no bar, no table, only the last line.
    with FakeLLMServer([Rule(structured=True, json=PERSONA)]) as server:
        env = {**os.environ, **model_env(server.base_url), "TERM": "xterm", "COLUMNS": "160"}
        screen = on_a_terminal(polygon, env, "--n", "1", "--quiet")
    assert "in flight" not in screen
    assert "Generated personas" not in screen
    assert "1 of 1 personas stored" in screen


def on_a_terminal(polygon: Polygon, env: dict[str, str], *args: str) -> str:
    """What `personas generate --prompt prompt.md ARGS` writes to a pseudo-terminal, as a
    user's terminal receives it, without its colours and cursor moves."""
    command = [sys.executable, "-m", "polygon_voice", "personas", "generate"]
    command += ["--prompt", "prompt.md", *args, "--db", str(polygon.db)]
    main, child = pty.openpty()
    process = subprocess.Popen(command, cwd=polygon.workdir, env=env, stdout=child, stderr=child)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.1)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child side closed: all is read
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=10)
    os.close(main)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))


def test_refresh_checks_the_model_first_and_exits_3_when_it_fails(
    polygon: Polygon, prompt: Path, failing_model: FakeLLMServer
) -> None:
    assert generate(polygon, {}, "--n", "2").returncode == 0  # made without a model
    prompt.write_text(prompt.read_text() + "\nAlso ask for the caller's email address.\n")
    before = stored(polygon)
    port = closed_port()
    result = polygon.subprocess("personas", "refresh", env=model_env(f"http://127.0.0.1:{port}/v1"))
    assert result.returncode == 2
    assert "persona generation cannot start" in result.stderr
    (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 0}\n")
    env = model_env(failing_model.base_url)
    result = polygon.subprocess("personas", "refresh", "--llm-config", "llm.yaml", env=env)
    assert result.returncode == 3
    assert_plain(result)
    assert result.stderr.count("HTTP 500: boom") == 1
    assert result.stdout.splitlines()[-1] == (
        "0 of 2 stale personas refreshed (same ids); 2 failed (see above)."
    )
    assert stored(polygon) == before  # nothing replaced
