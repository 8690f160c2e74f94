"""A logging proxy on loopback between Polygon and a model server: every exchange recorded.

It forwards each request as it came (method, path, body, content type) and keeps the
request and the upstream's answer (status, the headers that matter, body), and the role
from Polygon's `X-Polygon-Role` header. The end-to-end test counts requests with it (no
retry storms), and `tests/llm/recorded/record.py` stores exchanges from it. Standard
library only.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# Headers of an answer that a client's behaviour depends on.
KEPT_HEADERS = ("content-type", "retry-after", "retry-after-ms")
# A CPU server may take minutes for one answer; the client's own timeout decides earlier.
UPSTREAM_TIMEOUT = 1800.0


@dataclass
class Exchange:
    """One request and the upstream's answer (status None: no answer, `error` says why)."""

    role: str
    method: str
    path: str
    request: Any
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    response: Any = None
    error: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "request": {"method": self.method, "path": self.path, "body": self.request},
            "response": {"status": self.status, "headers": self.headers, "body": self.response},
            "error": self.error,
            "seconds": round(self.seconds, 2),
        }


def _decoded(raw: bytes) -> Any:
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


class LoggingProxy:
    """`with LoggingProxy(upstream) as proxy:` a base URL (`proxy.base_url`) that forwards."""

    def __init__(self, upstream_base_url: str) -> None:
        self.upstream = upstream_base_url.rstrip("/")
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The proxy's base URL, with the upstream's path (`/v1`)."""
        path = "/" + self.upstream.split("/", 3)[3] if self.upstream.count("/") >= 3 else ""
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    def requests_by_role(self) -> Counter[str]:
        """How many requests each role sent."""
        with self._lock:
            return Counter(exchange.role for exchange in self.exchanges)

    def __enter__(self) -> LoggingProxy:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:  # quiet: the exchanges are the log
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self._forward(self.rfile.read(length))

            def _forward(self, body: bytes) -> None:
                # The upstream's base URL ends in /v1, and so does the proxy's: the path maps 1:1.
                host = proxy.upstream.split("/", 3)
                url = f"{host[0]}//{host[2]}{self.path}"
                role = self.headers.get("X-Polygon-Role") or "unknown"
                exchange = Exchange(role, self.command, self.path, _decoded(body) if body else None)
                headers = {"Content-Type": self.headers.get("Content-Type") or "application/json"}
                request = urllib.request.Request(
                    url, data=body or None, headers=headers, method=self.command
                )
                started = time.monotonic()
                status, answer_headers, answer = 502, {}, b""
                try:
                    with urllib.request.urlopen(request, timeout=UPSTREAM_TIMEOUT) as response:
                        status, answer = response.status, response.read()
                        answer_headers = dict(response.headers.items())
                except urllib.error.HTTPError as error:
                    status, answer = error.code, error.read()
                    answer_headers = dict(error.headers.items())
                except OSError as error:
                    # The upstream died or went silent: the client sees the connection close.
                    exchange.error = f"{type(error).__name__}: {error}"
                    exchange.seconds = time.monotonic() - started
                    proxy._record(exchange)
                    self.close_connection = True
                    return
                exchange.seconds = time.monotonic() - started
                exchange.status = status
                exchange.headers = {
                    k.lower(): v for k, v in answer_headers.items() if k.lower() in KEPT_HEADERS
                }
                exchange.response = _decoded(answer)
                proxy._record(exchange)
                try:
                    self.send_response(status)
                    ctype = exchange.headers.get("content-type", "application/json")
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except OSError:
                    pass  # the client gave up first; the exchange is recorded all the same

        return Handler
