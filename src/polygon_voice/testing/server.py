"""FakeLLMServer: a real OpenAI-compatible HTTP server on loopback, answering from a script."""

from __future__ import annotations

import json
import socket
import struct
import threading
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from polygon_voice.masking import mask_url
from polygon_voice.testing.answers import Answer, answer_for, error_answer
from polygon_voice.testing.dialects import (
    DIALECTS,
    UNLIMITED_SECONDS,
    Dialect,
    adjusted,
    models_answer,
    probe_answer,
    props_answer,
    refusal,
    show_answer,
    tools_refusal,
    unlimited,
)
from polygon_voice.testing.script import Rule, Script, ScriptState, role_of
from polygon_voice.testing.streaming import as_stream

REDACTED = "[redacted]"
_SECRET_HEADERS = frozenset({"authorization", "api-key", "x-api-key"})


@dataclass(frozen=True)
class LoggedRequest:
    """One request as received; secret headers are redacted before it is kept."""

    number: int
    role: str
    call: int
    rule: int | None
    path: str
    body: dict[str, Any]
    headers: dict[str, str]


class _HTTPServer(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when 100+ async clients connect at once.
    request_queue_size = 1024
    daemon_threads = True
    block_on_close = False
    fake: FakeLLMServer


class FakeLLMServer:
    """Serves POST .../chat/completions from `script` on 127.0.0.1 in a background thread.

    Use as a context manager (or `start()` / `stop()`); point clients at `base_url`.
    `requests` is the log, `max_in_flight` the most requests it held at once. With `api_key`,
    requests without that bearer token get 401 (and are not logged). `dialect` makes it
    take requests as llama.cpp, vLLM or Ollama do (testing/dialects.py; "openai", the
    default, takes every shape); `tool_flags=False` makes vLLM refuse tools, as when it is
    started without --enable-auto-tool-choice. Capability probes (requests with the
    `X-Polygon-Probe` header) are answered by the dialect alone, never by a rule, and kept
    apart in `probes`, so a script's calls and counts are the run's own.
    """

    def __init__(
        self,
        script: Script | Sequence[Rule] | None = None,
        *,
        latency: float | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_log: bool = True,
        log_file: TextIO | None = None,
        api_key: str | None = None,
        dialect: Dialect = "openai",
        tool_flags: bool = True,
    ) -> None:
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(DIALECTS)}")
        self.dialect: Dialect = dialect
        self.tool_flags = tool_flags
        # Each fake is a server of its own to a cache keyed by the Server header.
        self.server_header = f"polygon-fake-llm/{dialect} ({uuid.uuid4().hex[:12]})"
        self._probe_log: list[LoggedRequest] = []
        if script is None or not isinstance(script, Script):
            script = Script(rules=list(script or ()))
        if latency is not None:
            script = script.model_copy(update={"latency": latency})
        self.script = script
        self._state = ScriptState(script)
        self._host, self._port = host, port
        self._keep_log, self._log_file = keep_log, log_file
        # When set, a request must carry `Authorization: Bearer <api_key>`, else 401 as for real.
        self._api_key = api_key
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self._received = 0
        self._in_flight = 0
        self.max_in_flight = 0
        self._stopping = threading.Event()
        self._server: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The URL to give a client as its base URL (`http://127.0.0.1:PORT/v1`)."""
        if self._server is None:
            raise RuntimeError("the fake LLM server is not started")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def requests(self) -> list[LoggedRequest]:
        """A copy of the request log, in order of arrival."""
        with self._lock:
            return list(self._log)

    @property
    def probes(self) -> list[LoggedRequest]:
        """A copy of the capability probes received (never in `requests`), in order."""
        with self._lock:
            return list(self._probe_log)

    @property
    def request_count(self) -> int:
        """How many chat-completion requests arrived (also when the log is not kept)."""
        with self._lock:
            return self._received

    def start(self) -> FakeLLMServer:
        """Bind and serve in a daemon thread; returns self."""
        self._server = _HTTPServer((self._host, self._port), _Handler)
        self._server.fake = self
        # A short poll interval: stop() waits for the serving loop to notice, up to this long.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-llm-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; scripted hangs and latencies in progress end at once."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def clear_log(self) -> None:
        """Forget the logged requests (counters of calls and rules keep going)."""
        with self._lock:
            self._log.clear()

    def stats(self) -> dict[str, int]:
        """Requests received, in flight now and at most."""
        with self._lock:
            return {
                "requests": self._received,
                "in_flight": self._in_flight,
                "max_in_flight": self.max_in_flight,
            }

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Answer:
        if self._api_key is not None and headers.get("authorization") != f"Bearer {self._api_key}":
            return error_answer(401, "fake LLM server: incorrect API key provided")
        role = role_of(headers.get("x-polygon-role"), body)
        refused = refusal(self.dialect, body) or tools_refusal(self.dialect, body, self.tool_flags)
        if headers.get("x-polygon-probe"):
            return self._probe(path, role, headers, body, refused)
        request, index = self._state.pick(role, body, match=refused is None)
        with self._lock:
            self._received += 1
            number = self._received
            entry = LoggedRequest(number, role, request.call, index, path, body, _redact(headers))
            if self._keep_log:
                self._log.append(entry)
            if self._log_file is not None:
                self._log_file.write(json.dumps(asdict(entry)) + "\n")
                self._log_file.flush()
        if refused is not None:
            return refused
        if unlimited(self.dialect, body):
            return Answer(status=0, body=None, delay=UNLIMITED_SECONDS)  # until the client quits
        rule = self.script.rules[index] if index is not None else None
        rule = adjusted(self.dialect, body, rule)
        answer = answer_for(rule, request, number, self.script.latency)
        # Frameworks (LiveKit Agents, Pipecat) always stream: the same answer as SSE chunks.
        return as_stream(answer, body) if body.get("stream") else answer

    def _probe(
        self,
        path: str,
        role: str,
        headers: dict[str, str],
        body: dict[str, Any],
        refused: Answer | None,
    ) -> Answer:
        """A capability probe: refused as the dialect refuses, else answered by it."""
        with self._lock:
            number = len(self._probe_log) + 1
            self._probe_log.append(
                LoggedRequest(number, role, number, None, path, body, _redact(headers))
            )
        if refused is not None:
            return Answer(refused.status, refused.body, self.script.latency)
        answer = probe_answer(self.dialect, body, number)
        return Answer(answer.status, answer.body, self.script.latency)

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall
    timeout = 300  # an idle keep-alive connection's thread ends eventually
    server: _HTTPServer

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if _route(self.path) == "/api/show":
            # Ollama's model details (its context length); 404 from the other kinds.
            shown = show_answer(fake.dialect, {})
            self._send(shown or error_answer(404, f"fake LLM server: no route {self.path}"))
            return
        # /completions too: prompt log-probabilities (a rule with `logprobs`) for the lint.
        if not _route(self.path).endswith("/completions"):
            self._send(error_answer(404, f"fake LLM server: no route {mask_url(self.path)}"))
            return
        try:
            body = json.loads(raw)
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            self._send(error_answer(400, f"fake LLM server: request is not JSON: {exc}"))
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        fake._enter()
        try:
            # Logged with a key in the query masked, like the Authorization header.
            answer = fake._answer(mask_url(self.path), headers, body)
            if answer.delay:
                fake._stopping.wait(answer.delay)
        finally:
            # Before the answer goes out: once the client has it, it may send the next request.
            fake._leave()
        if answer.body is None:
            self.close_connection = True  # a scripted hang or reset: never answer
            if answer.reset:
                # Linger 0: closing sends a TCP RST instead of a clean FIN.
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
            return
        self._send(answer)

    def do_GET(self) -> None:
        dialect = self.server.fake.dialect
        props = props_answer(dialect) if _route(self.path) == "/props" else None
        if _route(self.path).endswith("/models"):
            self._send(models_answer(dialect, "fake"))
        elif props is not None:
            self._send(props)
        elif _route(self.path) == "/_polygon/stats":
            self._send(Answer(200, json.dumps(self.server.fake.stats()).encode()))
        else:
            self._send(error_answer(404, f"fake LLM server: no route {mask_url(self.path)}"))

    def version_string(self) -> str:
        """The Server header: the dialect and this fake's own id."""
        return self.server.fake.server_header

    def _send(self, answer: Answer) -> None:
        assert answer.body is not None
        try:
            self.send_response(answer.status)
            if "Content-Type" not in answer.headers:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer.body)))
            for key, value in answer.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(answer.body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout): nothing left to tell it.
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""


def _redact(headers: dict[str, str]) -> dict[str, str]:
    return {k: REDACTED if k in _SECRET_HEADERS else v for k, v in headers.items()}


def _route(path: str) -> str:
    # The path without its query: a base URL may carry one (`?api-version=`, `?key=`).
    return path.partition("?")[0].rstrip("/")


def open_log(path: str | Path) -> TextIO:
    """A JSON-lines request log file for `log_file=` (the caller closes it)."""
    return Path(path).open("a", encoding="utf-8")
