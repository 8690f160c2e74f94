"""The HTTP transport against real servers on loopback: answers, error statuses, Retry-After,
timeouts, the size cap, connection reuse and closing (docs/llm.md)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from polygon_voice.llm import RoleConfig
from polygon_voice.llm import transport as transport_module
from polygon_voice.llm.transport import ROLE_HEADER, HTTPTransport, TransportFailure
from polygon_voice.testing import FakeLLMServer, Rule

Serve = Callable[..., FakeLLMServer]
PAYLOAD = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()


def transport_for(base_url: str, key: str | None = "sk-test", **settings: Any) -> HTTPTransport:
    config = RoleConfig(role="judge", model="m", base_url=base_url, **settings)
    return HTTPTransport(config, key)


async def failure_of(transport: HTTPTransport) -> TransportFailure:
    with pytest.raises(TransportFailure) as caught:
        await transport.send(PAYLOAD)
    await transport.aclose()
    return caught.value


async def test_an_answer_is_the_body_as_sent_with_the_role_and_the_key(serve: Serve) -> None:
    server = serve([Rule(text="hello there")])
    transport = transport_for(server.base_url)
    raw = await transport.send(PAYLOAD)
    await transport.aclose()
    assert json.loads(raw)["choices"][0]["message"]["content"] == "hello there"
    [request] = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == json.loads(PAYLOAD)
    assert request.headers[ROLE_HEADER.lower()] == "judge"
    assert request.headers["authorization"] == "[redacted]"  # a bearer token was sent
    assert request.headers["content-type"] == "application/json"


async def test_without_a_key_a_placeholder_is_sent_never_the_environments(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    server = serve([Rule(text="ok")], api_key="no-key")  # 401 unless exactly this bearer
    transport = transport_for(server.base_url, key=None)
    assert json.loads(await transport.send(PAYLOAD))["choices"]
    await transport.aclose()


async def test_a_query_in_the_base_url_stays_after_the_path(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    transport = transport_for(server.base_url + "?api-version=2024-10-21")
    await transport.send(PAYLOAD)
    await transport.aclose()
    assert server.requests[0].path == "/v1/chat/completions?api-version=2024-10-21"


async def test_connections_are_kept_alive_across_calls(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    transport = transport_for(server.base_url)
    for _ in range(5):
        await transport.send(PAYLOAD)
    assert server.connections == 1  # five requests, one connection
    await asyncio.gather(*(transport.send(PAYLOAD) for _ in range(3)))
    assert 1 <= server.connections <= 3  # concurrent requests need connections of their own
    await transport.aclose()
    assert server.request_count == 8


async def test_closing_drops_the_connections_and_the_transport_reopens(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    transport = transport_for(server.base_url)
    await transport.send(PAYLOAD)
    await transport.aclose()
    await transport.aclose()  # twice is harmless
    await transport.send(PAYLOAD)
    assert server.connections == 2  # a new connection after the close
    await transport.aclose()


def test_each_event_loop_gets_its_own_session(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    transport = transport_for(server.base_url)
    # The first loop's session is left behind unclosed; the second opens its own.
    asyncio.run(transport.send(PAYLOAD))
    asyncio.run(transport.send(PAYLOAD))
    assert server.request_count == 2


@pytest.mark.parametrize(
    ("status", "retryable"), [(400, False), (401, False), (404, False), (429, True), (500, True)]
)
async def test_an_error_status_gives_the_servers_message(
    serve: Serve, status: int, retryable: bool
) -> None:
    server = serve([Rule(error=status, message="the server says why")])
    failure = await failure_of(transport_for(server.base_url))
    assert failure.status == status
    assert failure.detail == f"HTTP {status}: the server says why"
    assert failure.retryable is retryable
    assert failure.retry_after is None
    assert not failure.timed_out


async def test_retry_after_is_read_from_the_answer(serve: Serve) -> None:
    server = serve([Rule(error=429, retry_after=7)])
    failure = await failure_of(transport_for(server.base_url))
    assert failure.status == 429
    assert failure.retry_after == 7.0


async def test_a_validation_error_behind_a_500_is_not_retried(serve: Serve) -> None:
    server = serve([Rule(error=500, message="1 validation error for ChatRequest")])
    failure = await failure_of(transport_for(server.base_url))
    assert failure.status == 500
    assert failure.retryable is False


async def test_a_silent_server_times_out_by_the_request_timeout(serve: Serve) -> None:
    server = serve([Rule(hang=5)])
    failure = await failure_of(transport_for(server.base_url, timeout=0.3))
    assert failure.detail == "no answer within 0.3 s"
    assert failure.timed_out
    assert failure.retryable
    assert failure.status is None


async def test_a_server_that_hangs_up_is_no_timeout(serve: Serve) -> None:
    server = serve([Rule(hang=0.05)])
    failure = await failure_of(transport_for(server.base_url, timeout=5))
    assert failure.detail.startswith("connection closed by the server without an answer")
    assert failure.retryable
    assert not failure.timed_out


async def test_a_reset_connection_names_the_os_error(serve: Serve) -> None:
    server = serve([Rule(reset=True)])
    failure = await failure_of(transport_for(server.base_url, timeout=5))
    assert failure.detail == "connection failed: [Errno 104] Connection reset by peer"
    assert failure.retryable
    assert not failure.timed_out


async def test_a_refused_connection_is_retryable_and_no_timeout() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    failure = await failure_of(transport_for(f"http://127.0.0.1:{port}/v1", timeout=5))
    assert failure.detail.startswith("connection failed: [Errno 111]")
    assert failure.retryable
    assert not failure.timed_out
    assert failure.status is None


async def test_credentials_in_the_url_beside_the_key_fail_without_retrying(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    host = server.base_url.removeprefix("http://")
    failure = await failure_of(transport_for(f"http://user:secret@{host}"))
    assert failure.detail.startswith("request failed: ValueError: ")
    assert failure.retryable is False
    assert server.request_count == 0


async def test_an_answer_over_the_cap_is_refused(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport_module, "MAX_ANSWER_BYTES", 2000)
    server = serve([Rule(text="word " * 1000)])
    failure = await failure_of(transport_for(server.base_url))
    assert failure.detail == "answer over 2,000 bytes; the limit is 2,000"
    assert failure.retryable is False


# --- servers the fake cannot play: odd error bodies, answers without a length ----------------


@pytest.fixture
def raw_server() -> Iterator[Callable[..., str]]:
    """A one-answer HTTP server: every POST gets `status`, `body` and `headers` as given;
    `length=False` sends no Content-Length and ends the body by closing the connection."""
    servers: list[ThreadingHTTPServer] = []

    def start(
        status: int, body: bytes, headers: dict[str, str] | None = None, length: bool = True
    ) -> str:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(status)
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                if length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (b'{"object": "error", "message": "top-level message"}', "top-level message"),  # vLLM
        (b'{"error": "a bare string"}', "Error code: 400"),  # Ollama: no message field
        (b"<html>Bad Gateway</html>", "Error code: 400"),  # a proxy's page
        (b"", "Error code: 400"),
    ],
)
async def test_error_bodies_read_as_the_sdk_read_them(
    raw_server: Callable[..., str], body: bytes, detail: str
) -> None:
    failure = await failure_of(transport_for(raw_server(400, body)))
    assert failure.detail == f"HTTP 400: {detail}"
    assert failure.status == 400


async def test_retry_after_in_milliseconds_and_as_a_date(raw_server: Callable[..., str]) -> None:
    url = raw_server(503, b"{}", {"retry-after-ms": "1500"})
    assert (await failure_of(transport_for(url))).retry_after == 1.5
    url = raw_server(503, b"{}", {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    assert (await failure_of(transport_for(url))).retry_after == 0.0  # a date in the past


async def test_an_answer_without_a_length_is_read_to_the_end_and_capped(
    raw_server: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    completion = b'{"choices": [{"message": {"content": "' + b"x" * 5000 + b'"}}]}'
    url = raw_server(200, completion, length=False)
    transport = transport_for(url)
    assert await transport.send(PAYLOAD) == completion
    await transport.aclose()
    monkeypatch.setattr(transport_module, "MAX_ANSWER_BYTES", 1000)
    failure = await failure_of(transport_for(url))
    assert failure.detail.startswith("answer over 1,000 bytes")


async def test_a_redirect_is_an_error_status_not_followed(raw_server: Callable[..., str]) -> None:
    url = raw_server(307, b"", {"Location": "http://127.0.0.1:9/elsewhere"})
    failure = await failure_of(transport_for(url))
    assert failure.detail == "HTTP 307: Error code: 307"
    assert failure.status == 307
    assert failure.retryable is False
