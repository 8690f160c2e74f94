"""The preflight: each kind of problem, found before a run, named plainly, never with a key."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.llm import LLMSettings, RoleConfig, load_llm_config
from polygon_voice.preflight import (
    RoleNeed,
    SetupError,
    check_roles,
    check_roles_async,
    check_run_roles,
    require_ready,
    run_needs,
)
from polygon_voice.testing import FakeLLMServer, Rule

CANARY = "sk-canary-7f3e9d2b1a"
JUDGE = RoleNeed("judge", "--judge llm")
CALLER = RoleNeed("caller", "scenario 'refund' has caller: llm")


class StubEndpoint:
    """A loopback HTTP server answering each path with a scripted (status, body)."""

    def __init__(self, answers: dict[str, tuple[int, str]]) -> None:
        self.answers = answers
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                stub.requests.append((self.command, self.path, dict(self.headers), body))
                status, text = stub.answers.get(self.path.partition("?")[0], (404, "{}"))
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[type[StubEndpoint]]:
    made: list[StubEndpoint] = []

    class Started(StubEndpoint):
        def __init__(self, answers: dict[str, tuple[int, str]]) -> None:
            super().__init__(answers)
            made.append(self)

    yield Started
    for server in made:
        server.close()


def error_body(message: str) -> str:
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}})


def settings_for(env: dict[str, str]) -> LLMSettings:
    return load_llm_config(None, env=env)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_no_model_named_says_which_variable_and_key_to_set() -> None:
    [problem] = check_roles([JUDGE], settings_for({}), env={})
    assert problem.role == "judge (--judge llm)"
    assert problem.what == "no model is named"
    assert "POLYGON_JUDGE_MODEL" in problem.hint
    assert "llm.judge.model" in problem.hint


def test_a_key_variable_that_is_not_set_or_empty_is_named() -> None:
    env = {"POLYGON_BASE_URL": "http://127.0.0.1:9/v1", "POLYGON_JUDGE_MODEL": "m"}
    settings = settings_for({**env, "POLYGON_JUDGE_API_KEY": CANARY})
    [missing] = check_roles([JUDGE], settings, env=env)
    assert missing.what == "the API key variable POLYGON_JUDGE_API_KEY is not set"
    [empty] = check_roles([JUDGE], settings, env={**env, "POLYGON_JUDGE_API_KEY": ""})
    assert empty.what == "the API key variable POLYGON_JUDGE_API_KEY is empty"
    assert "export POLYGON_JUDGE_API_KEY=" in empty.hint


def test_the_hosted_default_endpoint_without_a_key_cannot_work() -> None:
    env = {"POLYGON_CALLER_MODEL": "gpt-4o-mini"}
    [problem] = check_roles([CALLER], settings_for(env), env=env)
    assert problem.what == "no API key for https://api.openai.com/v1"
    assert "POLYGON_CALLER_API_KEY" in problem.hint
    assert "OPENAI_API_KEY" not in problem.hint
    # The SDK's own variable is not read unless named; the hint says how to name it.
    [named] = check_roles([CALLER], settings_for(env), env={**env, "OPENAI_API_KEY": CANARY})
    assert "llm.caller.api_key_env: OPENAI_API_KEY" in named.hint
    assert CANARY not in str(named)
    # A key carried in the base URL counts as one (and is never shown).
    keyed = {**env, "POLYGON_CALLER_BASE_URL": f"https://api.openai.com/v1?key={CANARY}"}
    assert check_roles([CALLER], settings_for(keyed), env=keyed, endpoints=False) == []


def test_a_local_endpoint_needs_no_key() -> None:
    with FakeLLMServer([Rule(text="OK")]) as server:
        env = {"POLYGON_BASE_URL": server.base_url, "POLYGON_JUDGE_MODEL": "m"}
        assert check_roles([JUDGE], settings_for(env), env=env) == []
        # The check lists the models: it sends no chat request the script would answer.
        assert server.request_count == 0


def test_a_refused_connection_names_the_role_and_the_endpoint() -> None:
    port = closed_port()
    env = {"POLYGON_BASE_URL": f"http://127.0.0.1:{port}/v1", "POLYGON_JUDGE_MODEL": "m"}
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert problem.role == "judge (--judge llm)"
    assert problem.what == f"cannot connect to http://127.0.0.1:{port}/v1: connection refused"
    assert problem.hint.startswith("Is the server running? Check the base URL")
    assert "POLYGON_JUDGE_BASE_URL" in problem.hint


def test_an_unknown_host_name_is_told_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_host(*args: object, **kwargs: object) -> None:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    env = {"POLYGON_BASE_URL": "http://llm.example.internal:8000/v1", "POLYGON_JUDGE_MODEL": "m"}
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert problem.what == (
        "cannot connect to http://llm.example.internal:8000/v1: "
        "the host name 'llm.example.internal' is not known"
    )


def test_a_silent_endpoint_fails_within_the_bound(silent_port: int) -> None:
    env = {"POLYGON_BASE_URL": f"http://127.0.0.1:{silent_port}/v1", "POLYGON_JUDGE_MODEL": "m"}
    started = time.monotonic()
    [problem] = check_roles([JUDGE], settings_for(env), env=env, timeout=0.5)
    assert time.monotonic() - started < 2
    assert problem.what == f"http://127.0.0.1:{silent_port}/v1 did not answer within 0.5 s"
    assert "POLYGON_PREFLIGHT=0" in problem.hint


def test_endpoints_are_checked_concurrently_within_one_bound(silent_port: int) -> None:
    env = {
        "POLYGON_JUDGE_BASE_URL": f"http://127.0.0.1:{silent_port}/v1",
        "POLYGON_CALLER_BASE_URL": f"http://localhost:{silent_port}/v1",
        "POLYGON_JUDGE_MODEL": "m",
        "POLYGON_CALLER_MODEL": "m",
    }
    started = time.monotonic()
    problems = check_roles([JUDGE, CALLER], settings_for(env), env=env, timeout=1.0)
    assert time.monotonic() - started < 1.8  # not one bound after the other
    assert [p.role.split()[0] for p in problems] == ["judge", "caller"]


def test_roles_sharing_an_endpoint_and_model_are_asked_once(stub: type[StubEndpoint]) -> None:
    endpoint = stub(
        {
            "/v1/models": (503, error_body("overloaded")),
            "/v1/chat/completions": (500, error_body("boom")),
        }
    )
    env = {"POLYGON_BASE_URL": endpoint.base_url, "POLYGON_JUDGE_MODEL": "m"}
    env["POLYGON_CALLER_MODEL"] = "m"
    [problem] = check_roles([JUDGE, CALLER], settings_for(env), env=env)
    assert problem.role == "judge (--judge llm); caller (scenario 'refund' has caller: llm)"
    assert problem.what == f"{endpoint.base_url} refused a one-token request: HTTP 500: boom"
    assert [r[1] for r in endpoint.requests] == ["/v1/models", "/v1/chat/completions"]


def test_a_port_of_another_service_is_named() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]

        def greet_and_close() -> None:
            conn, _ = sock.accept()
            conn.recv(1024)
            conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")
            conn.close()

        threading.Thread(target=greet_and_close, daemon=True).start()
        env = {"POLYGON_BASE_URL": f"http://127.0.0.1:{port}/v1", "POLYGON_JUDGE_MODEL": "m"}
        [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert problem.what == (
        f"http://127.0.0.1:{port}/v1 does not answer as an HTTP server (BadStatusLine)"
    )


def test_a_refused_key_is_named_without_its_value(stub: type[StubEndpoint]) -> None:
    endpoint = stub({"/v1/models": (401, error_body(f"Incorrect API key provided: {CANARY}"))})
    env = {
        "POLYGON_BASE_URL": endpoint.base_url,
        "POLYGON_JUDGE_MODEL": "m",
        "POLYGON_JUDGE_API_KEY": CANARY,
    }
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert problem.what == (
        f"{endpoint.base_url} refused the key in POLYGON_JUDGE_API_KEY: "
        "HTTP 401: Incorrect API key provided: ***"
    )
    assert problem.hint == "Check the key in POLYGON_JUDGE_API_KEY"
    assert CANARY not in str(problem)
    assert endpoint.requests[0][2]["Authorization"] == f"Bearer {CANARY}"


def test_without_a_models_route_one_token_is_asked_and_an_unknown_model_named(
    stub: type[StubEndpoint],
) -> None:
    endpoint = stub(
        {"/v1/chat/completions": (404, error_body("The model `gpt-5-turbo` does not exist."))}
    )
    env = {"POLYGON_BASE_URL": endpoint.base_url, "POLYGON_JUDGE_MODEL": "gpt-5-turbo"}
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert problem.what == (
        f"{endpoint.base_url} answered HTTP 404 for model 'gpt-5-turbo': "
        "The model `gpt-5-turbo` does not exist."
    )
    assert "POLYGON_JUDGE_MODEL" in problem.hint
    method, path, headers, body = endpoint.requests[1]
    assert (method, path) == ("POST", "/v1/chat/completions")
    assert json.loads(body)["max_tokens"] == 1
    assert headers["X-Polygon-Role"] == "judge"
    # The same server answering the one-token request: the role can work.
    endpoint.answers["/v1/chat/completions"] = (200, json.dumps({"choices": []}))
    assert check_roles([JUDGE], settings_for(env), env=env) == []


def test_a_base_url_that_is_no_api_is_named(stub: type[StubEndpoint]) -> None:
    endpoint = stub({"/v1/models": (200, "<html>Welcome to nginx</html>")})
    env = {"POLYGON_BASE_URL": endpoint.base_url, "POLYGON_JUDGE_MODEL": "m"}
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert (
        problem.what == f"{endpoint.base_url} answered GET /models with something that is not JSON"
    )
    assert "up to and including /v1" in problem.hint


def test_credentials_in_the_base_url_are_masked_everywhere(stub: type[StubEndpoint]) -> None:
    endpoint = stub({"/v1/models": (403, error_body(f"bad token {CANARY}"))})
    base = endpoint.base_url.replace("http://", f"http://user:{CANARY}@") + f"?key={CANARY}"
    env = {"POLYGON_BASE_URL": base, "POLYGON_JUDGE_MODEL": "m"}
    [problem] = check_roles([JUDGE], settings_for(env), env=env)
    assert CANARY not in str(problem)
    assert "?key=***" in problem.what
    assert "user:" not in problem.what
    # The query is kept after the path, as the client sends it; the login goes as Basic auth.
    assert endpoint.requests[0][1] == f"/v1/models?key={CANARY}"
    assert endpoint.requests[0][2]["Authorization"].startswith("Basic ")


def test_every_problem_is_collected_and_raised_as_one_error() -> None:
    port = closed_port()
    env = {
        "POLYGON_CALLER_BASE_URL": f"http://127.0.0.1:{port}/v1",
        "POLYGON_CALLER_MODEL": "m",
        "MY_AGENT_KEY": "",
    }
    agent = RoleConfig(
        role="agent", model="a", base_url="http://x:1/v1", api_key_env="MY_AGENT_KEY"
    )
    needs = run_needs(
        judge_llm=True,
        llm_caller_scenarios=["refund", "late"],
        prompt_agent=agent,
        prompt_agent_file="agent.yaml",
        model_probes=["explains_refusal"],
    )
    with pytest.raises(SetupError) as raised:
        require_ready(needs, settings_for(env), env=env)
    problems = raised.value.problems
    # The probes share the judge role: one problem for both, not two.
    assert [p.role for p in problems] == [
        "judge (--judge llm; probes explains_refusal)",
        "agent (the prompt agent agent.yaml)",
        "caller (scenarios 'refund', 'late' have caller: llm)",
    ]
    assert problems[1].what == "the API key variable MY_AGENT_KEY is empty"
    assert "api_key_env:` in agent.yaml" in problems[1].hint
    message = str(raised.value)
    assert message.startswith("the run cannot start; nothing was sent or run:\n  - judge")
    assert message.count("\n  - ") == 3


def test_the_endpoint_check_can_be_skipped() -> None:
    env = {"POLYGON_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "POLYGON_JUDGE_MODEL": "m"}
    assert check_roles([JUDGE], settings_for(env), env={**env, "POLYGON_PREFLIGHT": "0"}) == []
    assert check_run_roles(settings_for(env), judge_llm=True, env=env, endpoints=False) == []
    # The offline checks still run.
    [problem] = check_roles([CALLER], settings_for(env), env={**env, "POLYGON_PREFLIGHT": "off"})
    assert problem.what == "no model is named"


def test_nothing_needed_is_nothing_checked() -> None:
    assert check_roles([], settings_for({}), env={}) == []
    assert run_needs() == []


async def test_the_async_check_does_not_block_the_loop(silent_port: int) -> None:
    env = {"POLYGON_BASE_URL": f"http://127.0.0.1:{silent_port}/v1", "POLYGON_JUDGE_MODEL": "m"}
    ticks = 0

    async def ticking() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    ticker = asyncio.create_task(ticking())
    problems = await check_roles_async([JUDGE], settings_for(env), env=env, timeout=0.6)
    ticker.cancel()
    assert [p.what.endswith("did not answer within 0.6 s") for p in problems] == [True]
    assert ticks >= 5


def test_the_example_in_docs_llm_runs() -> None:
    doc = (Path(__file__).resolve().parents[1] / "docs" / "llm.md").read_text()
    [example] = [b for b in re.findall(r"```python\n(.*?)```", doc, re.S) if "check_roles" in b]
    exec(compile(example, "docs/llm.md", "exec"), {})
    section = doc.split("## Before a run", 1)[1].split("\n## ", 1)[0]
    # The whole error shown there is the one a closed port gives.
    [shown] = re.findall(r"```text\n(.*?)```", section, re.S)
    port = closed_port()
    env = {"POLYGON_CALLER_BASE_URL": f"http://127.0.0.1:{port}/v1", "POLYGON_CALLER_MODEL": "m"}
    problems = check_roles([RoleNeed("caller", "persona generation")], settings_for(env), env=env)
    printed = f"error: {SetupError(problems, 'persona generation')}\n"
    assert printed.replace(f":{port}/", ":8000/") == shown
