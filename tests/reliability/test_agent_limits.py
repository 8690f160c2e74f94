"""Limits on what agents send, and runs that always end (docs/agents.md, "Limits and failures").

Fault servers on 127.0.0.1 answer the HTTP agent protocol badly on purpose — dripping one
byte at a time, never answering, oversized, garbage, resets — and every case must end in a
clean `HttpAgentError` (so the engine ends that call with reason `error`) within its
deadline, while healthy calls of the same run pass and the process exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import os
import socket
import socketserver
import struct
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygon_voice.agents import AgentContext, as_factory
from polygon_voice.agents.http_agent import HttpAgentError, HttpAgentFactory
from polygon_voice.agents.http_client import HttpAnswer, HttpFailure, post_json
from polygon_voice.model import (
    Action,
    CallStarted,
    EndCall,
    EndReason,
    EngineSettings,
    Event,
    Say,
    SetTimer,
    Suite,
)
from polygon_voice.runner import SuiteRunner
from polygon_voice.store import Store
from tests.store.store_factories import make_run

OK_BODY = json.dumps(
    {"actions": [{"kind": "say", "text": "Hello."}, {"kind": "end_call", "reason": "done"}]}
).encode()
CONTEXT = AgentContext(conversation_id="c#1", scenario_id="c", language="en", seed=1, tools={})


# --- a fault server ----------------------------------------------------------------------


class FaultServer:
    """A threaded loopback server; each request's behaviour is chosen by the conversation id's
    prefix (`drip-3#1` drips) or, for raw replies, by `raw` (bytes sent, then closed)."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.raw: bytes | None = None
        self.open_now = 0
        self.open_most = 0
        self._lock = threading.Lock()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                with contextlib.suppress(OSError):  # the client gave up: what some cases test
                    outer.serve(self)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            request_queue_size = 128

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/agent"

    def close(self) -> None:
        self.stop.set()
        self._server.shutdown()
        self._server.server_close()

    def track(self, change: int) -> None:
        with self._lock:
            self.open_now += change
            self.open_most = max(self.open_most, self.open_now)

    def serve(self, handler: socketserver.StreamRequestHandler) -> None:
        body = read_request(handler.rfile)
        if self.raw is not None:
            handler.wfile.write(self.raw)
            return
        conversation = json.loads(body)["conversation_id"]
        behaviour = BEHAVIOURS[conversation.split("-")[0].split("#")[0]]
        behaviour(self, handler)


def read_request(rfile: object) -> bytes:
    length = 0
    while True:
        line = rfile.readline()  # type: ignore[attr-defined]
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.lower() == "content-length":
            length = int(value)
    data: bytes = rfile.read(length)  # type: ignore[attr-defined]
    return data


def head(status: int = 200, length: int | None = None, extra: str = "") -> bytes:
    lines = [f"HTTP/1.1 {status} X", "Content-Type: application/json", "Connection: close"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + extra + "\r\n\r\n").encode()


def ok(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(length=len(OK_BODY)) + OK_BODY)


def drip(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    # A whole, valid answer, one byte every 0.05 s: a per-read timeout would never fire.
    handler.wfile.write(head(length=len(OK_BODY)))
    for byte in OK_BODY:
        if server.stop.wait(0.05):
            return
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()


def slow(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    # A healthy agent that thinks for a moment; counted before it answers, so a request the
    # client starts after this answer can never overlap it in the count.
    server.track(+1)
    server.stop.wait(0.2)
    server.track(-1)
    ok(server, handler)


def silent(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    server.stop.wait(30)  # accepts, reads, never answers


def announced_huge(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(length=10**12) + b'{"actions": [')


def streamed_huge(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head())  # no length: the body runs until the connection closes
    chunk = b" " * 65536
    for _ in range(200):  # 13 MB, far over the cap the tests set
        handler.wfile.write(chunk)


def chunked_huge(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(extra="\r\nTransfer-Encoding: chunked"))
    for _ in range(200):
        handler.wfile.write(b"10000\r\n" + b" " * 65536 + b"\r\n")


def chunked_ok(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    half = len(OK_BODY) // 2
    parts = [OK_BODY[:half], OK_BODY[half:]]
    data = b"".join(f"{len(p):x}\r\n".encode() + p + b"\r\n" for p in parts) + b"0\r\n\r\n"
    handler.wfile.write(head(extra="\r\nTransfer-Encoding: chunked") + data)


def reset(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(length=len(OK_BODY)) + OK_BODY[:10])
    handler.wfile.flush()
    # SO_LINGER 0: close with a TCP reset, not a clean end of stream.
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.connection.close()


def cut(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(length=len(OK_BODY)) + OK_BODY[:10])  # then a clean close


def garbage(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(b"\x00\xff\xfeSSH-2.0 hello\r\n\r\n")


def no_json(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(length=5) + b"hello")


def error_500(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    handler.wfile.write(head(status=500, length=2) + b"{}")


def long_say(server: FaultServer, handler: socketserver.StreamRequestHandler) -> None:
    body = json.dumps({"actions": [{"kind": "say", "text": "word " * 5000}]}).encode()
    handler.wfile.write(head(length=len(body)) + body)


Behaviour = Callable[[FaultServer, socketserver.StreamRequestHandler], None]
BEHAVIOURS: dict[str, Behaviour] = {
    "ok": ok,
    "drip": drip,
    "silent": silent,
    "slow": slow,
    "announcedhuge": announced_huge,
    "streamedhuge": streamed_huge,
    "chunkedhuge": chunked_huge,
    "chunkedok": chunked_ok,
    "reset": reset,
    "cut": cut,
    "garbage": garbage,
    "nojson": no_json,
    "error500": error_500,
    "longsay": long_say,
}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    running = FaultServer()
    yield running
    running.close()


def limited(url: str, **limits: float) -> HttpAgentFactory:
    factory = HttpAgentFactory(url)
    factory.configure(EngineSettings(agent_turn_timeout=0.5, max_reply_bytes=100_000, **limits))
    return factory


async def first_answer(factory: HttpAgentFactory, conversation: str) -> list[Action]:
    context = dataclasses.replace(CONTEXT, conversation_id=conversation)
    agent = factory(context)
    return [action async for action in agent.respond(CallStarted())]  # type: ignore[attr-defined]


# --- one request at a time ---------------------------------------------------------------

FAILURES = [
    ("drip", "no answer within 0.5s \\(an incomplete answer: .* bytes received\\)"),
    ("silent", "no answer within 0.5s \\(connected, nothing received\\)"),
    ("announcedhuge", "more than 100,000 bytes \\(Content-Length 1,000,000,000,000\\)"),
    ("streamedhuge", "more than 100,000 bytes \\(cut off while reading\\)"),
    ("chunkedhuge", "more than 100,000 bytes"),
    ("reset", "connection reset|closed the connection"),
    ("cut", "closed the connection after 10 of"),
    ("garbage", "no HTTP status line"),
    ("nojson", "no JSON"),
    ("error500", "HTTP 500"),
]


@pytest.mark.parametrize(("case", "message"), FAILURES, ids=[case for case, _ in FAILURES])
async def test_a_bad_answer_is_a_clean_agent_error_within_the_deadline(
    server: FaultServer, case: str, message: str
) -> None:
    started = time.monotonic()
    with pytest.raises(HttpAgentError, match=message) as raised:
        await first_answer(limited(server.url), f"{case}#1")
    assert time.monotonic() - started < 2.0  # the deadline is 0.5 s, total, not per read
    assert server.url in str(raised.value)  # which agent failed
    assert "\n" not in str(raised.value)  # one line, never a traceback


async def test_a_chunked_answer_is_read(server: FaultServer) -> None:
    actions = await first_answer(limited(server.url), "chunkedok#1")
    assert actions == [Say(text="Hello."), EndCall(reason="done")]


async def test_a_refused_connection_is_unreachable_not_a_timeout() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(HttpAgentError, match="unreachable"):
        await first_answer(limited(f"http://127.0.0.1:{port}/agent"), "ok#1")


async def test_the_connection_limit_holds_requests_back(server: FaultServer) -> None:
    factory = limited(server.url, max_agent_connections=2)
    factory.timeout = 5.0
    answers = await asyncio.gather(*(first_answer(factory, f"slow-{n}#1") for n in range(5)))
    assert all(len(actions) == 2 for actions in answers)
    assert server.open_most == 2


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.builds(
            lambda status, headers, body: head(status, None, headers) + body,
            st.integers(100, 999),
            st.sampled_from(
                [
                    "",
                    "\r\nContent-Length: 3",
                    "\r\nContent-Length: -1",
                    "\r\nContent-Length: x",
                    "\r\nTransfer-Encoding: chunked",
                    "\r\nbroken header",
                ]
            ),
            st.binary(max_size=300),
        ),
    )
)
def test_any_bytes_back_are_an_answer_or_a_clean_failure(server: FaultServer, raw: bytes) -> None:
    server.raw = raw

    async def post() -> HttpAnswer:
        return await post_json(server.url, b"{}", deadline=1.0, max_bytes=1000)

    started = time.monotonic()
    outcome: HttpAnswer | HttpFailure
    try:
        outcome = asyncio.run(post())
    except HttpFailure as failure:  # anything else fails the test
        outcome = failure
    assert time.monotonic() - started < 3.0
    if isinstance(outcome, HttpFailure):
        assert "\n" not in str(outcome)
    else:
        assert len(outcome.body) <= 1000


# --- what the engine does with an agent's limits -------------------------------------------


class Talker:
    """Says `text` `times` times in its first response, then hangs up."""

    text = "hello"
    times = 1
    timers = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            for _ in range(self.times):
                yield Say(text=self.text)
            for n in range(self.timers):
                yield SetTimer(name=f"t{n}", seconds=1)
            yield EndCall()


def run_suite(tmp_path: Path, agent: object, run_id: str, **settings: object) -> list[object]:
    suite = Suite.model_validate(
        {"name": "limits", "settings": settings, "scenarios": [{"id": "a", "script": []}]}
    )
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run(run_id))
    SuiteRunner(suite, as_factory(agent, "talker"), store, run_id).run()
    return list(store.iter_conversations(run_id))


@pytest.mark.parametrize(
    ("text", "times", "stored"),
    [("x" * 1_000_000, 1, 0), ("word " * 600, 5, 3)],  # one huge Say; five that add up
    ids=["one-huge-say", "many-says"],
)
def test_speech_over_the_limit_ends_the_call_with_an_error(
    tmp_path: Path, text: str, times: int, stored: int
) -> None:
    agent = type("Agent", (Talker,), {"text": text, "times": times})
    started = time.monotonic()
    [result] = run_suite(tmp_path, agent, "r1", max_say_chars=10_000)
    assert time.monotonic() - started < 3.0  # 1 MB took 6.5-9 s of checks before the limit
    assert result.end.reason is EndReason.ERROR  # type: ignore[attr-defined]
    assert "the limit is 10,000 (settings.max_say_chars)" in result.end.message  # type: ignore[attr-defined]
    notes = [e for e in result.trace if e.kind == "over_limit"]  # type: ignore[attr-defined]
    assert notes[0].data["setting"] == "max_say_chars"
    assert len(notes[0].data["start"]) <= 200
    said = [e for e in result.trace if e.kind == "say"]  # type: ignore[attr-defined]
    assert len(said) == stored  # the Say over the limit is never stored


def test_speech_up_to_the_limit_is_spoken(tmp_path: Path) -> None:
    agent = type("Agent", (Talker,), {"text": "x" * 5_000, "times": 2})
    [result] = run_suite(tmp_path, agent, "r1", max_say_chars=10_000)
    assert result.end.reason is EndReason.AGENT_HANGUP  # type: ignore[attr-defined]
    assert len(result.turns[0].text) == 10_001  # type: ignore[attr-defined]


def test_too_many_actions_in_one_response_end_the_call(tmp_path: Path) -> None:
    agent = type("Agent", (Talker,), {"timers": 50})
    [result] = run_suite(tmp_path, agent, "r1", max_actions_per_turn=20)
    assert result.end.reason is EndReason.ERROR  # type: ignore[attr-defined]
    assert "more than 20 actions in one response" in result.end.message  # type: ignore[attr-defined]


class Endless:
    """Answers with an endless plain iterable: it never awaits, so no wall-clock limit could
    ever fire; only the action limit ends it."""

    def respond(self, event: Event) -> Iterator[Action]:
        return itertools.repeat(SetTimer(name="again", seconds=1))


def test_an_endless_response_that_never_awaits_ends_at_the_action_limit(tmp_path: Path) -> None:
    started = time.monotonic()
    [result] = run_suite(tmp_path, Endless, "r1")
    assert time.monotonic() - started < 3.0
    assert result.end.reason is EndReason.ERROR  # type: ignore[attr-defined]
    assert "more than 1,000 actions" in result.end.message  # type: ignore[attr-defined]


# --- runs beside stuck agents ------------------------------------------------------------


def fault_suite(healthy: int, stuck: dict[str, int], timeout: float) -> Suite:
    # The stuck calls first: they take whatever is shared before the healthy ones start.
    ids = [f"{kind}-{n}" for kind, count in stuck.items() for n in range(count)]
    ids += [f"ok-{n}" for n in range(healthy)]
    scenarios = [{"id": sid, "script": [{"say": "hello"}]} for sid in ids]
    return Suite.model_validate(
        {"name": "faults", "settings": {"agent_turn_timeout": timeout}, "scenarios": scenarios}
    )


def test_healthy_calls_pass_beside_stuck_ones(server: FaultServer, tmp_path: Path) -> None:
    suite = fault_suite(16, {"drip": 8, "silent": 8}, timeout=0.5)
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run("r1"))
    started = time.monotonic()
    factory = HttpAgentFactory(server.url)
    SuiteRunner(suite, factory, store, "r1", concurrency=32).run()
    elapsed = time.monotonic() - started
    ends = {r.scenario_id: r.end for r in store.iter_conversations("r1")}
    assert len(ends) == 32
    healthy = [end for sid, end in ends.items() if sid.startswith("ok-")]
    assert [end.reason for end in healthy] == [EndReason.AGENT_HANGUP] * 16
    stuck = [end for sid, end in ends.items() if not sid.startswith("ok-")]
    assert all(end.reason is EndReason.ERROR for end in stuck)
    assert all("within 0.5s" in end.message for end in stuck)
    assert elapsed < 5.0  # one deadline of 0.5 s, not one per stuck call


def test_polygon_run_exits_beside_a_dripping_agent(server: FaultServer, tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    scenarios = [{"id": sid, "script": [{"say": "hello"}]} for sid in ("drip-1", "ok-1", "ok-2")]
    suite.write_text(
        json.dumps(
            {"name": "drip", "settings": {"agent_turn_timeout": 0.5}, "scenarios": scenarios}
        )
    )
    db = tmp_path / "p.db"
    command = [sys.executable, "-m", "polygon_voice", "run", str(suite), "--agent", server.url]
    command += ["--db", str(db), "--out", str(tmp_path / "out")]
    started = time.monotonic()
    done = subprocess.run(  # a hang fails here with TimeoutExpired, not by blocking CI
        command,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert time.monotonic() - started < 30
    assert "Traceback" not in done.stderr
    store = Store(f"sqlite:///{db}")
    [run] = store.list_runs()
    ends = {r.scenario_id: r.end.reason for r in store.iter_conversations(run.id)}
    assert ends == {
        "drip-1": EndReason.ERROR,
        "ok-1": EndReason.AGENT_HANGUP,
        "ok-2": EndReason.AGENT_HANGUP,
    }
    assert (tmp_path / "out" / "report.json").is_file()


def test_a_long_say_from_an_http_agent_is_the_agents_error(
    server: FaultServer, tmp_path: Path
) -> None:
    suite = fault_suite(1, {"longsay": 1}, timeout=2.0)
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run("r1"))
    SuiteRunner(suite, HttpAgentFactory(server.url), store, "r1").run()
    ends = {r.scenario_id: r.end for r in store.iter_conversations("r1")}
    assert ends["ok-0"].reason is EndReason.AGENT_HANGUP
    assert ends["longsay-0"].reason is EndReason.ERROR
    assert "settings.max_say_chars" in ends["longsay-0"].message


# --- agents that block in threads ----------------------------------------------------------

RELEASE = threading.Event()  # set at the end of the test: frees the threads left stuck


class ThreadedAgent:
    """Calls blocking code through asyncio.to_thread, as agents on blocking libraries do; the
    `stuck-` scenarios block until the test ends."""

    def __init__(self, context: AgentContext) -> None:
        self.stuck = context.scenario_id.startswith("stuck-")

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            await asyncio.to_thread(RELEASE.wait, 30 if self.stuck else 0.01)
            yield Say(text="Hello.")
            yield EndCall()


def test_threads_left_stuck_neither_starve_healthy_calls_nor_hold_the_run(
    tmp_path: Path,
) -> None:
    # More stuck threads than asyncio's default pool has workers (at most 32).
    suite = fault_suite(8, {"stuck": 40}, timeout=0.5)
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run("r1"))
    started = time.monotonic()
    try:
        SuiteRunner(suite, as_factory(ThreadedAgent, "t"), store, "r1", concurrency=48).run()
        elapsed = time.monotonic() - started
    finally:
        RELEASE.set()
    ends = {r.scenario_id: r.end.reason for r in store.iter_conversations("r1")}
    assert [ends[f"ok-{n}"] for n in range(8)] == [EndReason.AGENT_HANGUP] * 8
    assert all(ends[f"stuck-{n}"] is EndReason.ERROR for n in range(40))
    assert elapsed < 5.0  # the run returns after one deadline, not when the threads end
