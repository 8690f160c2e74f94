"""What an endpoint supports: the probe against each fake dialect, its cache, its bounds,
configured values winning, and the start-up probe keeping refused requests out of a run."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from polygon_voice.agents.prompt_agent import SEED_RANGE, PromptAgentFactory
from polygon_voice.judge import V2
from polygon_voice.llm import LLMClient, RoleConfig, load_llm_config
from polygon_voice.llm.capabilities import (
    CACHE_FILE,
    TTL_SECONDS,
    Capabilities,
    adopt,
    adopted,
    cached,
    forget_capabilities,
    needed,
)
from polygon_voice.llm.capability_probe import find, probe, probe_timeout
from polygon_voice.model import CallerSaid
from polygon_voice.preflight import RoleNeed, check_roles, prompt_agent_need
from polygon_voice.testing import FakeLLMServer, Rule
from tests.agents.test_prompt_agent import CONTEXT, collect, write_agent
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.llm.conftest import KEY_VAR, SECRET_KEY

JUDGE = RoleNeed("judge", "--judge llm")


@pytest.fixture(autouse=True)
def fresh_capabilities() -> Iterator[None]:
    forget_capabilities()
    yield
    forget_capabilities()


def role(server: FakeLLMServer, name: str = "agent", **settings: Any) -> RoleConfig:
    return RoleConfig(role=name, model="m", base_url=server.base_url, **settings)  # type: ignore[arg-type]


EXPECTED = {
    # dialect: (kind, structured form, tools, logprobs, context length, slots)
    "openai": (None, "json_schema", "with_tool_choice", "aligned", None, None),
    "llamacpp": ("llama.cpp", "json_object", "with_tool_choice", "unaligned", 4096, 1),
    "vllm": ("vllm", "json_schema", "with_tool_choice", "aligned", 8192, None),
    "ollama": ("ollama", "json_schema", "with_tool_choice", "refused", 2048, None),
}


@pytest.mark.parametrize("dialect", sorted(EXPECTED))
def test_each_dialect_probed_gives_its_record(
    serve: Callable[..., FakeLLMServer], dialect: str
) -> None:
    server = serve(dialect=dialect)
    found = probe(role(server))
    kind, form, tools, logprobs, context, slots = EXPECTED[dialect]
    assert (found.server_kind, found.structured_output, found.tools) == (kind, form, tools)
    assert (found.logprobs, found.context_length, found.slots) == (logprobs, context, slots)
    assert found.seeds == "int64"
    assert found.seed_max == 2**63 - 1
    assert found.tool_called is True
    assert server.requests == []  # probes never touch the script's rules or its log
    assert all(p.headers.get("x-polygon-probe") == "capabilities" for p in server.probes)
    assert all(p.body.get("max_tokens", 1) <= 16 for p in server.probes)
    if context is None:
        assert "context length" in found.notes["context"]


def test_vllm_without_its_tool_flags_refuses_tools(serve: Callable[..., FakeLLMServer]) -> None:
    found = probe(role(serve(dialect="vllm", tool_flags=False)), ["tools"])
    assert found.tools == "refused"
    assert "--enable-auto-tool-choice" in found.notes["tools"]


class SeedLimitedHandler(BaseHTTPRequestHandler):
    """A server that takes seeds up to `limit` and refuses larger ones with a 400."""

    limit: ClassVar[int | None] = 2**31 - 1
    seeds: ClassVar[list[int]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seed = body.get("seed")
        if seed is not None:
            self.seeds.append(seed)
        refused = seed is not None and (self.limit is None or seed > self.limit)
        answer: dict[str, Any] = (
            {"error": {"message": f"seed {seed} out of range"}}
            if refused
            else {"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}}]}
        )
        data = json.dumps(answer).encode()
        self.send_response(400 if refused else 200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.mark.parametrize(
    ("limit", "expected"), [(2**31 - 1, "int31"), (2**32 - 1, "uint32"), (None, "refused")]
)
def test_the_largest_seed_taken_is_recorded(limit: int | None, expected: str) -> None:
    handler = type("Handler", (SeedLimitedHandler,), {"limit": limit, "seeds": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        found = probe(RoleConfig(role="agent", model="m", base_url=base_url), ["seed"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert found.seeds == expected
    tried = [2**63 - 1, 2**32 - 1, 2**31 - 1]
    assert handler.seeds == tried[: tried.index(limit) + 1] if limit else tried
    if expected == "refused":
        assert found.seed_max is None
        assert "out of range" in found.notes["seed"]


def test_a_cache_hit_sends_no_request(tmp_path: Path, serve: Callable[..., FakeLLMServer]) -> None:
    server = serve(dialect="llamacpp")
    config = role(server, api_key_env=KEY_VAR)
    first, sent = find(config, tmp_path, ["structured_output", "tools"], key=SECRET_KEY,
                       server=server.server_header)  # fmt: skip
    assert sent
    assert first.structured_output == "json_object"
    probes = len(server.probes)
    forget_capabilities()  # from the file, not the process's memory
    again, sent = find(config, tmp_path, ["tools"], server=server.server_header)
    assert not sent
    assert again == first
    assert len(server.probes) == probes
    written = (tmp_path / CACHE_FILE).read_text()
    assert SECRET_KEY not in written
    # Another server on the same endpoint (another Server header) is probed anew.
    _, sent = find(config, tmp_path, ["tools"], server="something else")
    assert sent


def test_what_the_cache_lacks_is_probed_and_merged(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(dialect="vllm")
    config = role(server)
    find(config, tmp_path, ["structured_output"], server=server.server_header)
    record, sent = find(
        config, tmp_path, ["structured_output", "context"], server=server.server_header
    )
    assert sent
    assert record.structured_output == "json_schema"
    assert record.context_length == 8192
    assert record.probed == {"structured_output", "context"}
    # --refresh asks again even what is cached.
    before = len(server.probes)
    find(config, tmp_path, ["structured_output"], server=server.server_header, refresh=True)
    assert len(server.probes) > before


def test_no_key_is_written_to_the_cache(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(dialect="ollama")
    config = RoleConfig(role="judge", model="m", base_url=f"{server.base_url}?key=CANARY-123")
    find(config, tmp_path, ["structured_output"], server=server.server_header)
    written = (tmp_path / CACHE_FILE).read_text()
    assert "CANARY-123" not in written
    assert cached(tmp_path, config.base_url, "m", server.server_header) is not None


@pytest.mark.parametrize(
    "damage",
    [
        "{not json",
        "[1, 2]",
        json.dumps({"k": {"endpoint": 3}}),
        "\xff\xfe",
        json.dumps({"k": {"endpoint": "e", "model": "m", "tools": "maybe"}}),
    ],
)
def test_a_damaged_cache_file_is_a_miss(
    tmp_path: Path, serve: Callable[..., FakeLLMServer], damage: str
) -> None:
    server = serve(dialect="llamacpp")
    (tmp_path / CACHE_FILE).write_text(damage, encoding="utf-8", errors="surrogateescape")
    record, sent = find(
        role(server, "judge"), tmp_path, ["structured_output"], server=server.server_header
    )
    assert sent
    assert record.structured_output == "json_object"
    # ...and the file is whole again.
    assert Capabilities.from_json(
        next(iter(json.loads((tmp_path / CACHE_FILE).read_text()).values()))
    )


def test_a_stale_entry_is_a_miss(tmp_path: Path, serve: Callable[..., FakeLLMServer]) -> None:
    server = serve()
    config = role(server, "judge")
    find(config, tmp_path, ["structured_output"], server=server.server_header)
    later = time.time() + TTL_SECONDS + 1
    assert cached(tmp_path, config.base_url, "m", server.server_header, now=later) is None


def test_a_probe_that_hangs_is_bounded_and_not_cached(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(dialect="llamacpp", latency=5)
    started = time.monotonic()
    record, _ = find(role(server), tmp_path, ["structured_output", "tools", "seed"], timeout=0.3,
                     server=server.server_header)  # fmt: skip
    assert time.monotonic() - started < 2
    assert record.structured_output is None
    assert record.tools is None
    assert "not answered within 0.3 s" in record.notes["tools"]
    assert len(server.probes) == 1  # after one unanswered request no more are sent
    assert not (tmp_path / CACHE_FILE).exists()


def test_the_probe_timeout_is_read_from_the_environment() -> None:
    assert probe_timeout({}) == 10.0
    assert probe_timeout({"POLYGON_PROBE_TIMEOUT": "2.5"}) == 2.5
    with pytest.raises(ValueError, match="POLYGON_PROBE_TIMEOUT"):
        probe_timeout({"POLYGON_PROBE_TIMEOUT": "soon"})


def test_configured_values_are_not_probed(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(dialect="vllm", tool_flags=False)
    fixed = role(server, tool_choice="omit", seed_max=1000)
    assert needed(fixed) == frozenset()
    assert needed(role(server, "judge", structured_output="json_object")) == frozenset()
    assert needed(role(server)) == {"tools", "seed"}
    settings = load_llm_config(None, env={})
    problems = check_roles(
        [prompt_agent_need(fixed, "agent.yaml")], settings, env={"POLYGON_PROBE_TIMEOUT": "5"}
    )
    assert problems == []  # tools refused, but tool_choice: omit is what the user chose
    assert server.probes == []


def test_an_endpoint_refusing_tools_stops_a_prompt_agent_run(
    serve: Callable[..., FakeLLMServer], tmp_path: Path
) -> None:
    server = serve(dialect="vllm", tool_flags=False)
    settings = load_llm_config(None, env={}).model_copy(update={"cache_dir": tmp_path})
    [problem] = check_roles([prompt_agent_need(role(server), "agent.yaml")], settings, env={})
    assert problem.role == "agent (the prompt agent agent.yaml)"
    assert f"{server.base_url} (model m) refuses tool calls" in problem.what
    assert "--enable-auto-tool-choice" in problem.hint


def test_preflight_off_probes_nothing(serve: Callable[..., FakeLLMServer], tmp_path: Path) -> None:
    server = serve(dialect="llamacpp")
    env = {
        "POLYGON_JUDGE_BASE_URL": server.base_url,
        "POLYGON_JUDGE_MODEL": "m",
        "POLYGON_PREFLIGHT": "0",
    }
    assert check_roles([JUDGE], load_llm_config(None, env=env), env=env) == []
    assert server.probes == []


async def test_the_settled_form_sends_no_refused_request(
    serve: Callable[..., FakeLLMServer], tmp_path: Path
) -> None:
    server = serve([Rule(json={"ok": True})], dialect="llamacpp")
    env = {"POLYGON_JUDGE_BASE_URL": server.base_url, "POLYGON_JUDGE_MODEL": "m"}
    settings = load_llm_config(None, env=env).model_copy(update={"cache_dir": tmp_path})
    assert check_roles([JUDGE], settings, env=env) == []
    async with LLMClient(settings.role("judge").model_copy(update={"cache": False})) as judge:
        for _ in range(3):
            await judge.chat(
                [{"role": "user", "content": "Score"}], response_schema={"type": "object"}
            )
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_object"] * 3
    assert all(r.rule is not None for r in server.requests)


def test_a_run_against_llamacpp_sends_no_refused_structured_request(
    polygon: Polygon, serve: Callable[..., FakeLLMServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    verdict = {
        "criteria": {c.id: {"score": 4, "evidence": "", "reason": "ok"} for c in V2.criteria}
    }
    server = serve([Rule(role="judge", json=verdict)], dialect="llamacpp")
    config = polygon.workdir / "llm.json"
    judge = {"model": "m", "base_url": server.base_url, "max_retries": 0}
    config.write_text(
        json.dumps({"llm": {"cache_dir": str(polygon.workdir / "cache"), "judge": judge}})
    )
    monkeypatch.delenv("POLYGON_PREFLIGHT", raising=False)
    polygon("run", str(EXAMPLE_SUITE), "--judge", "llm", "--llm-config", str(config), "--no-probes")
    judged = [r for r in server.requests if r.role == "judge"]
    assert judged
    assert all(r.rule is not None for r in judged)
    assert {r.body["response_format"]["type"] for r in judged} == {"json_object"}
    assert [
        p.body["response_format"]["type"] for p in server.probes if "response_format" in p.body
    ] == ["json_schema", "json_object"]


async def test_the_prompt_agent_uses_what_was_found(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve([Rule(text="Hello.")])
    factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
    config = factory.role_config
    found = Capabilities(config.base_url, "fake-model", tools="without_tool_choice", seeds="int31")
    adopt(config, found)
    assert adopted(config.base_url, "fake-model") == found
    await collect(factory(dataclasses.replace(CONTEXT, seed=2**40 + 5)), CallerSaid(text="Hi"))
    adopt(
        config,
        Capabilities(config.base_url, "fake-model", tools="with_tool_choice", seeds="refused"),
    )
    await collect(factory(CONTEXT), CallerSaid(text="Hi"))
    await factory.aclose()
    first, second = (r.body for r in server.requests)
    assert "tool_choice" not in first
    assert first["seed"] == (2**40 + 5) % SEED_RANGE
    assert second["tool_choice"] == "auto"
    assert "seed" not in second


async def test_configured_tool_choice_and_seed_max_win(
    tmp_path: Path, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve([Rule(text="Hello.")])
    path = write_agent(tmp_path, server.base_url)
    path.write_text(path.read_text() + "llm_config: llm.yaml\n")
    (tmp_path / "llm.yaml").write_text("llm:\n  agent: {tool_choice: omit, seed_max: 999}\n")
    factory = PromptAgentFactory(path, env={})
    adopt(
        factory.role_config,
        Capabilities(server.base_url, "fake-model", tools="with_tool_choice", seeds="int64"),
    )
    await collect(factory(dataclasses.replace(CONTEXT, seed=123456)), CallerSaid(text="Hi"))
    await factory.aclose()
    [request] = server.requests
    assert "tool_choice" not in request.body
    assert request.body["seed"] == 123456 % 1000


def stub_server(
    answer: Callable[[str, dict[str, Any] | None], tuple[int, bytes]],
) -> ThreadingHTTPServer:
    """A loopback server answering every request with `answer(path, body)`."""

    class Handler(BaseHTTPRequestHandler):
        def _reply(self, body: dict[str, Any] | None) -> None:
            status, data = answer(self.path, body)
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._reply(None)

        def do_POST(self) -> None:
            self._reply(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def echo_answer(shift: int) -> bytes:
    from polygon_voice.lint.logprobs import CHECK_SENTENCE

    tokens = [f" {word}" if i else word for i, word in enumerate(CHECK_SENTENCE.split())]
    values: list[float | None] = [None] + [-12.0 if "zq" in t else -1.0 for t in tokens[1:]]
    values = ([None] * shift + values)[: len(values)]
    logprobs = {"tokens": tokens, "token_logprobs": values}
    return json.dumps({"choices": [{"text": CHECK_SENTENCE, "logprobs": logprobs}]}).encode()


@pytest.mark.parametrize(("shift", "expected"), [(0, "aligned"), (1, "shifted"), (2, "unaligned")])
def test_prompt_logprobs_are_read_by_the_lints_alignment_check(shift: int, expected: str) -> None:
    httpd = stub_server(lambda path, body: (200, echo_answer(shift)) if body else (404, b"{}"))
    try:
        base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        found = probe(RoleConfig(role="judge", model="m", base_url=base_url), ["logprobs"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert found.logprobs == expected


def test_hostile_answers_are_unknowns_not_errors() -> None:
    nested = b"[" * 100_000 + b"]" * 100_000

    def answer(path: str, body: dict[str, Any] | None) -> tuple[int, bytes]:
        if path.endswith("/models"):
            return 200, b"x" * (3 * 1024 * 1024)  # past what is read
        if path == "/props":
            return 200, nested
        if body and "seed" in body:
            return 500, b"\x00\xff not json " * 10_000
        return 200, b'{"choices": []}'

    httpd = stub_server(answer)
    try:
        base_url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        found = probe(RoleConfig(role="agent", model="m", base_url=base_url))
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert found.server_kind is None
    assert found.context_length is None
    assert found.seeds == "refused"  # a 500 for every seed, though the plain request worked
    assert len(found.notes["seed"]) < 400  # the server's words, cut short and printable
    assert "\x00" not in found.notes["seed"]


def test_llama_cpp_python_is_recognised_by_its_model_list() -> None:
    from polygon_voice.llm.capability_probe import _from_models

    listed = {
        "object": "list",
        "data": [{"id": "m", "object": "model", "owned_by": "me", "permissions": []}],
    }
    assert _from_models(listed, "m") == ("llama-cpp-python", None)
    assert _from_models({"data": [{"id": "m", "max_model_len": 32768}]}, "m") == ("vllm", 32768)
    assert _from_models("nonsense", "m") == (None, None)


async def test_the_async_check_settles_the_form_too(
    serve: Callable[..., FakeLLMServer], tmp_path: Path
) -> None:
    from polygon_voice.llm.dialects import form_choice
    from polygon_voice.preflight import check_roles_async

    server = serve(dialect="llamacpp")
    env = {"POLYGON_CALLER_BASE_URL": server.base_url, "POLYGON_CALLER_MODEL": "m"}
    settings = load_llm_config(None, env=env).model_copy(update={"cache_dir": tmp_path})
    assert (
        await check_roles_async([RoleNeed("caller", "persona generation")], settings, env=env) == []
    )
    choice = form_choice(server.base_url, "m", "auto")
    assert (choice.form, choice.settled) == ("json_object", True)


async def test_a_server_that_tells_its_slots_never_gets_more_at_once() -> None:
    # llama.cpp's /props says how many requests it computes at once: the endpoint's gate
    # takes that as its limit, whatever max_concurrency says, until forgotten.
    from polygon_voice.llm.limits import SHARED_LIMITS

    config = RoleConfig(
        role="judge", model="fake-model", base_url="http://127.0.0.1:9/v1", max_concurrency=16
    )
    adopt(config, Capabilities(endpoint="http://127.0.0.1:9/v1", model="fake-model", slots=1))
    try:
        assert SHARED_LIMITS.slots(config.base_url) == 1
    finally:
        forget_capabilities()
    assert SHARED_LIMITS.slots(config.base_url) is None
