"""FakeLLMServer: a real OpenAI-compatible HTTP server on loopback, answering from a script.

What it answers is decided here, the same for both ways of serving: an asyncio server on
aiohttp (asyncio_http.py) when aiohttp is installed (the `llm` extra), else a thread per
connection (threaded_http.py), which holds fewer clients at once but needs nothing.
"""

from __future__ import annotations

import importlib.util
import json
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol, TextIO

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
# A request body over this is refused with 413 before it is read: a real chat request,
# images aside, is far smaller, and the server must not hold a hostile one in memory.
MAX_REQUEST_BYTES = 16 * 1024 * 1024
# The listening socket's queue: 512+ async clients connect at once, the default drops some.
BACKLOG = 1024


class Serving(Protocol):
    """A running way of serving the fake (asyncio or threads)."""

    address: tuple[str, int]

    def stop(self) -> None:
        """Close the listening socket and end the connections; returns when done."""


@dataclass
class Arrivals:
    """When requests of one kind arrived: how many, the first and the last (Unix seconds)."""

    count: int = 0
    first: float | None = None
    last: float | None = None

    def add(self, at: float) -> None:
        self.count += 1
        self.first = at if self.first is None else self.first
        self.last = at


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
        # Kept apart from stats(): one small record per kind of request, never per request.
        self._arrivals: dict[str, Arrivals] = {}
        self._connections = 0
        self._stopping = threading.Event()
        self._serving: Serving | None = None

    @property
    def base_url(self) -> str:
        """The URL to give a client as its base URL (`http://127.0.0.1:PORT/v1`)."""
        if self._serving is None:
            raise RuntimeError("the fake LLM server is not started")
        host, port = self._serving.address
        return f"http://{host}:{port}/v1"

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
    def connections(self) -> int:
        """How many TCP connections the server has accepted (a client reusing its
        connections opens one per concurrent request, not one per request)."""
        with self._lock:
            return self._connections

    @property
    def request_count(self) -> int:
        """How many chat-completion requests arrived (also when the log is not kept)."""
        with self._lock:
            return self._received

    def start(self) -> FakeLLMServer:
        """Bind and serve in a daemon thread; returns self."""
        if asyncio_available():
            from polygon_voice.testing.asyncio_http import serve_asyncio

            self._serving = serve_asyncio(self, self._host, self._port)
        else:
            from polygon_voice.testing.threaded_http import serve_threaded

            self._serving = serve_threaded(self, self._host, self._port)
        return self

    def stop(self) -> None:
        """Stop serving; scripted hangs and latencies in progress end at once."""
        self._stopping.set()
        if self._serving is not None:
            self._serving.stop()

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

    def arrivals(self) -> dict[str, dict[str, float | int | None]]:
        """Per kind of request, how many arrived and when the first and last did.

        Times are Unix seconds (`time.time()`) taken as the request's headers were read, so
        another process can compare them with its own clock: how long after a command started
        did its first request arrive. Kinds: `chat` (chat completions), `probe` (capability
        probes), `completions` (prompt log-probabilities), `models` (GET .../models, the
        preflight's check), `other` (any other route); `any` is all of them together. The
        server's own `/_polygon/` routes are not counted.
        """
        with self._lock:
            kinds = dict(self._arrivals)
            total = Arrivals()
            for arrived in kinds.values():
                total.count += arrived.count
                firsts = [t for t in (total.first, arrived.first) if t is not None]
                lasts = [t for t in (total.last, arrived.last) if t is not None]
                total.first = min(firsts) if firsts else None
                total.last = max(lasts) if lasts else None
            return {kind: asdict(arrived) for kind, arrived in {**kinds, "any": total}.items()}

    # -- what the ways of serving call: the same answers whichever serves -----------------

    @property
    def stopping(self) -> bool:
        """Whether stop() was called: delays are no longer waited for."""
        return self._stopping.is_set()

    def wait(self, delay: float) -> None:
        """Block this thread `delay` seconds, or until stop() (the threaded server's delay)."""
        if delay > 0:
            self._stopping.wait(delay)

    def get(self, path: str) -> Answer:
        """The answer to GET `path` (the raw request target, query included)."""
        route = _route(path)
        if not route.startswith("/_polygon/"):
            self._arrived("models" if route.endswith("/models") else "other", time.time())
        if route.endswith("/models"):
            return models_answer(self.dialect, "fake")
        props = props_answer(self.dialect) if route == "/props" else None
        if props is not None:
            return props
        if route == "/_polygon/stats":
            return Answer(200, json.dumps(self.stats()).encode())
        if route == "/_polygon/arrivals":
            return Answer(200, json.dumps(self.arrivals()).encode())
        return error_answer(404, f"fake LLM server: no route {mask_url(path)}")

    def post_arrived(self, path: str, probe_header: str | None) -> None:
        """Note a POST's arrival, as its headers are read (before its body)."""
        self._arrived(_post_kind(path, probe_header), time.time())

    def post_body(self, path: str, raw: bytes) -> dict[str, Any] | Answer:
        """A POST's JSON body, or the answer it gets without reaching the script: a route
        other than completions, or a body that is not a JSON object."""
        route = _route(path)
        if route == "/api/show":
            # Ollama's model details (its context length); 404 from the other kinds.
            shown = show_answer(self.dialect, {})
            return shown or error_answer(404, f"fake LLM server: no route {mask_url(path)}")
        # /completions too: prompt log-probabilities (a rule with `logprobs`) for the lint.
        if not route.endswith("/completions"):
            return error_answer(404, f"fake LLM server: no route {mask_url(path)}")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            # RecursionError: JSON nested thousands deep, which json.loads cannot follow.
            reason = exc if isinstance(exc, ValueError) else "nested too deep"
            return error_answer(400, f"fake LLM server: request is not JSON: {reason}")
        if not isinstance(body, dict):
            return error_answer(400, "fake LLM server: request is not JSON: not an object")
        return body

    def post_answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Answer:
        """Log the request and pick its answer; counts it in flight until `post_done()`,
        which the caller makes once its delay is over and before the answer goes out."""
        self._enter()
        try:
            # Logged with a key in the query masked, like the Authorization header.
            return self._answer(mask_url(path), headers, body)
        except Exception as exc:
            # A body no client sends (`"messages": 5`) gets a clear 400, not a traceback.
            problem = f"{type(exc).__name__}: {exc}"
            return error_answer(400, f"fake LLM server: cannot read this request ({problem})")

    def post_done(self) -> None:
        """The request's delay is over: it leaves the in-flight count."""
        self._leave()

    def connected(self) -> None:
        """Count one accepted TCP connection."""
        with self._lock:
            self._connections += 1

    def _arrived(self, kind: str, at: float) -> None:
        with self._lock:
            self._arrivals.setdefault(kind, Arrivals()).add(at)

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
            if self._keep_log or self._log_file is not None:
                self._record(
                    LoggedRequest(number, role, request.call, index, path, body, _redact(headers))
                )
        if refused is not None:
            return refused
        if unlimited(self.dialect, body):
            return Answer(status=0, body=None, delay=UNLIMITED_SECONDS)  # until the client quits
        rule = self.script.rules[index] if index is not None else None
        rule = adjusted(self.dialect, body, rule)
        answer = answer_for(rule, request, number, self.script.latency)
        # Frameworks (LiveKit Agents, Pipecat) always stream: the same answer as SSE chunks.
        return as_stream(answer, body) if body.get("stream") else answer

    def _record(self, entry: LoggedRequest) -> None:
        # Under the lock: the log and the file keep the order of arrival.
        if self._keep_log:
            self._log.append(entry)
        if self._log_file is not None:
            self._log_file.write(json.dumps(asdict(entry)) + "\n")
            self._log_file.flush()

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


def asyncio_available() -> bool:
    """Whether aiohttp is installed, for the asyncio server (the `llm` extra)."""
    return importlib.util.find_spec("aiohttp") is not None


def too_large(length: int) -> Answer:
    """413 for a body of `length` bytes (or more) over MAX_REQUEST_BYTES."""
    limit = MAX_REQUEST_BYTES // (1024 * 1024)
    message = f"fake LLM server: a request body of {length:,} bytes is over the {limit} MiB limit"
    return error_answer(413, message)


def _redact(headers: dict[str, str]) -> dict[str, str]:
    return {k: REDACTED if k in _SECRET_HEADERS else v for k, v in headers.items()}


def _post_kind(path: str, probe_header: str | None) -> str:
    """The kind of a POST for `arrivals()`: probe, chat, completions or other."""
    route = _route(path)
    if probe_header:
        return "probe"
    if route.endswith("/chat/completions"):
        return "chat"
    return "completions" if route.endswith("/completions") else "other"


def _route(path: str) -> str:
    # The path without its query: a base URL may carry one (`?api-version=`, `?key=`).
    return path.partition("?")[0].rstrip("/")


def open_log(path: str | Path) -> TextIO:
    """A JSON-lines request log file for `log_file=` (the caller closes it)."""
    return Path(path).open("a", encoding="utf-8")
