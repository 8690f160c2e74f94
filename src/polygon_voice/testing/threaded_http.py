"""Serving the fake LLM server with a thread per connection (the standard library only).

The fallback when aiohttp is not installed: it needs nothing, but each connection costs a
thread, so on two cores it falls behind from a few hundred concurrent clients on.
"""

from __future__ import annotations

import socket
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from polygon_voice.testing.answers import Answer, error_answer
from polygon_voice.testing.server import BACKLOG, MAX_REQUEST_BYTES, too_large

if TYPE_CHECKING:
    from polygon_voice.testing.server import FakeLLMServer


class _HTTPServer(ThreadingHTTPServer):
    request_queue_size = BACKLOG
    daemon_threads = True
    block_on_close = False
    fake: FakeLLMServer

    def process_request(self, request: Any, client_address: Any) -> None:
        self.fake.connected()
        super().process_request(request, client_address)


class ThreadedServing:
    """A `ThreadingHTTPServer` serving in a daemon thread."""

    def __init__(self, fake: FakeLLMServer, host: str, port: int) -> None:
        self._server = _HTTPServer((host, port), _Handler)
        self._server.fake = fake
        bound_host, bound_port = self._server.server_address[:2]
        self.address = (str(bound_host), int(bound_port))
        # A short poll interval: stop() waits for the serving loop to notice, up to this long.
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-llm-server",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting; the handlers' delays end as the fake's stop flag is set."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_threaded(fake: FakeLLMServer, host: str, port: int) -> ThreadedServing:
    """Bind `host:port` and serve `fake` with a thread per connection."""
    return ThreadedServing(fake, host, port)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do
    disable_nagle_algorithm = True  # headers and body go out at once, no 40 ms delayed-ACK stall
    timeout = 300  # an idle keep-alive connection's thread ends eventually
    server: _HTTPServer

    def do_POST(self) -> None:
        fake = self.server.fake
        fake.post_arrived(self.path, self.headers.get("X-Polygon-Probe"))
        raw = self._read_body()
        if isinstance(raw, Answer):
            self.close_connection = True  # the unread body would be taken for the next request
            self._send(raw)
            return
        parsed = fake.post_body(self.path, raw)
        if isinstance(parsed, Answer):
            self._send(parsed)
            return
        headers = {key.lower(): value for key, value in self.headers.items()}
        answer = fake.post_answer(self.path, headers, parsed)
        try:
            fake.wait(answer.delay)
        finally:
            # Before the answer goes out: once the client has it, it may send the next request.
            fake.post_done()
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
        self._send(self.server.fake.get(self.path))

    def version_string(self) -> str:
        """The Server header: the dialect and this fake's own id."""
        return self.server.fake.server_header

    def _read_body(self) -> bytes | Answer:
        given = self.headers.get("Content-Length") or "0"
        try:
            length = int(given)
        except ValueError:
            return error_answer(400, f"fake LLM server: bad Content-Length {given[:40]!r}")
        if length < 0:
            return error_answer(400, f"fake LLM server: bad Content-Length {given[:40]!r}")
        if length > MAX_REQUEST_BYTES:
            return too_large(length)
        return self.rfile.read(length)

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
