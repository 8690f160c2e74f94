"""Exchanges recorded from a real server, and a loopback server that answers with them.

Each fixture (`<server>/<name>.json`) holds one request as Polygon sent it and the server's
real answer: status, the headers that matter, body. `ReplayServer(fixtures)` answers a
request with the first fixture whose request has the same *shape* (`shape_of`): the path,
the `response_format` type, tools and `tool_choice`, a `content: null` assistant message,
a tool's answer among the messages, `echo` (with its alternatives and its prompt's length).
A request of no recorded shape gets HTTP 418 naming its shape, so a test fails plainly
rather than on an invented answer.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LLAMA_CPP_PYTHON = HERE / "llama_cpp_python_0_3_36"
NO_SHAPE_STATUS = 418


def shape_of(path: str, body: Any) -> dict[str, Any]:
    """What a server's handling of a request depends on, and nothing else."""
    body = body if isinstance(body, dict) else {}
    given = body.get("response_format")
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    return {
        "path": path.split("?")[0],
        "response_format": given.get("type") if isinstance(given, dict) else None,
        "tools": bool(body.get("tools")),
        "tool_choice": "tool_choice" in body,
        "null_content": any(
            isinstance(m, dict) and m.get("role") == "assistant" and m.get("content", "") is None
            for m in messages
        ),
        "tool_round": any(isinstance(m, dict) and m.get("role") == "tool" for m in messages),
        "echo": bool(body.get("echo")),
        # How many alternatives per token an echo asks for: lint reads a misaligned server's.
        "alternatives": body.get("logprobs") if body.get("echo") else None,
        # An echo's answer is the prompt's: the check sentence's is not a prompt's.
        "prompt_chars": len(str(body.get("prompt"))) if body.get("echo") else None,
    }


@dataclass(frozen=True)
class Recorded:
    """One recorded exchange."""

    name: str
    what: str
    request: dict[str, Any]
    status: int
    headers: dict[str, str]
    body: Any

    @property
    def shape(self) -> dict[str, Any]:
        return shape_of(self.request["path"], self.request.get("body"))

    @property
    def raw(self) -> bytes:
        """The body as the server sent it (JSON re-encoded; text as is)."""
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")

    def content(self) -> str:
        """The first choice's message content (or completion text)."""
        choice = self.body["choices"][0]
        return str(choice["message"]["content"] if "message" in choice else choice["text"])


def load(name: str, folder: Path = LLAMA_CPP_PYTHON) -> Recorded:
    """The fixture `name` of a server's folder."""
    data = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
    response = data["response"]
    return Recorded(
        data["name"], data["what"], data["request"], response["status"],
        response["headers"], response["body"],
    )  # fmt: skip


class ReplayServer:
    """`with ReplayServer([...]) as server:` answers at `server.base_url` from the fixtures."""

    def __init__(self, fixtures: list[Recorded]) -> None:
        self.fixtures = fixtures
        self.requests: list[tuple[dict[str, Any], Recorded | None]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answered(self) -> list[str | None]:
        """The fixture that answered each request, in order (None: no shape matched)."""
        with self._lock:
            return [fixture.name if fixture else None for _, fixture in self.requests]

    def bodies(self) -> list[dict[str, Any]]:
        """The request bodies received, in order."""
        with self._lock:
            return [body for body, _ in self.requests]

    def __enter__(self) -> ReplayServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _match(self, path: str, body: Any) -> Recorded | None:
        shape = shape_of(path, body)
        return next((f for f in self.fixtures if f.shape == shape), None)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_GET(self) -> None:
                self._answer(None)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                self._answer(body)

            def _answer(self, body: Any) -> None:
                fixture = replay._match(self.path, body)
                with replay._lock:
                    replay.requests.append((body, fixture))
                if fixture is None:
                    message = f"no recorded exchange of this shape: {shape_of(self.path, body)}"
                    status, payload, ctype = NO_SHAPE_STATUS, message.encode(), "text/plain"
                else:
                    status, payload = fixture.status, fixture.raw
                    ctype = fixture.headers.get("content-type", "application/json")
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler
