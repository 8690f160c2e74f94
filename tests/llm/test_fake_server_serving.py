"""How the fake server serves: requests overlap, delays do not block, hostile input is refused.

Each test runs against both ways of serving: the asyncio server (aiohttp installed, the
default) and the threaded fallback (without aiohttp).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.testing import server as server_module
from polygon_voice.testing.server import MAX_REQUEST_BYTES

CHAT = "/v1/chat/completions"
ASK = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(params=["asyncio", "threads"])
def serving(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which way of serving the test's servers use."""
    if request.param == "threads":
        monkeypatch.setattr(server_module, "asyncio_available", lambda: False)
    return str(request.param)


@pytest.fixture
def fake(serving: str) -> Iterator[FakeLLMServer]:
    with FakeLLMServer([Rule(text="hello")]) as server:
        yield server


def _port(server: FakeLLMServer) -> int:
    return int(server.base_url.split(":")[2].split("/")[0])


def _request(
    server: FakeLLMServer, method: str, path: str, body: bytes = b"", **headers: str
) -> tuple[int, Any]:
    connection = http.client.HTTPConnection("127.0.0.1", _port(server), timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _error(answer: Any) -> str:
    return str(answer["error"]["message"])


async def _post_many(base_url: str, count: int) -> list[int]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as client:

        async def one() -> int:
            async with client.post(base_url + "/chat/completions", json=ASK) as response:
                await response.read()
                return response.status

        return await asyncio.gather(*(one() for _ in range(count)))


def test_the_asyncio_server_is_the_default_where_aiohttp_is_installed() -> None:
    with FakeLLMServer([Rule(text="hello")]) as server:
        assert type(server._serving).__name__ == "AsyncioServing"
        assert _request(server, "POST", CHAT, json.dumps(ASK).encode())[0] == 200


def test_concurrent_requests_wait_out_their_delays_together(serving: str) -> None:
    # 64 requests of 200 ms each: one after another 12.8 s; served together, a fraction.
    with FakeLLMServer([Rule(text="hello")], latency=0.2) as server:
        started = time.perf_counter()
        statuses = asyncio.run(_post_many(server.base_url, 64))
        took = time.perf_counter() - started
        assert statuses == [200] * 64
        assert took < 64 * 0.2 / 4, took
        assert server.max_in_flight >= 32  # they really were held at the same time
        assert server.stats()["in_flight"] == 0


def test_a_hang_holds_back_no_other_request(serving: str) -> None:
    rules = [Rule(contains="wait", hang=30), Rule(text="hello")]
    with FakeLLMServer(rules) as server:
        waiting = {"model": "m", "messages": [{"role": "user", "content": "wait"}]}
        hung = threading.Thread(
            target=_swallow, args=(server, json.dumps(waiting).encode()), daemon=True
        )
        hung.start()
        _wait_until(lambda: server.stats()["in_flight"] == 1)
        started = time.perf_counter()
        status, answer = _request(server, "POST", CHAT, json.dumps(ASK).encode())
        assert status == 200
        assert answer["choices"][0]["message"]["content"] == "hello"
        assert time.perf_counter() - started < 5
        stopping = time.perf_counter()
        server.stop()  # ends the 30 s hang at once
        assert time.perf_counter() - stopping < 5
        hung.join(timeout=5)
        assert not hung.is_alive()


def test_stop_sends_an_answer_still_waiting_out_its_latency_at_once(serving: str) -> None:
    with FakeLLMServer([Rule(text="late")], latency=30) as server:
        answers: list[tuple[int, Any]] = []
        asking = threading.Thread(
            target=lambda: answers.append(_request(server, "POST", CHAT, json.dumps(ASK).encode()))
        )
        asking.start()
        _wait_until(lambda: server.stats()["in_flight"] == 1)
        server.stop()
        asking.join(timeout=10)
    assert answers
    assert answers[0][0] == 200
    assert answers[0][1]["choices"][0]["message"]["content"] == "late"


def test_arrivals_count_concurrent_requests_as_they_come(serving: str) -> None:
    with FakeLLMServer([Rule(text="hello")], latency=0.05) as server:
        before = time.time()
        asyncio.run(_post_many(server.base_url, 20))
        status, arrived = _request(server, "GET", "/_polygon/arrivals")
    assert status == 200
    assert arrived["chat"]["count"] == arrived["any"]["count"] == 20
    assert before - 1 <= arrived["chat"]["first"] <= arrived["chat"]["last"] <= time.time()


def test_a_body_that_is_not_json_is_a_clear_400(fake: FakeLLMServer) -> None:
    status, answer = _request(fake, "POST", CHAT, b"{not json")
    assert status == 400
    assert "request is not JSON" in _error(answer)
    status, answer = _request(fake, "POST", CHAT, b"[1, 2]")
    assert (status, _error(answer)) == (400, "fake LLM server: request is not JSON: not an object")
    status, answer = _request(fake, "POST", CHAT, b"\xff\xfe\x00garbage")
    assert status == 400
    assert fake.request_count == 0  # none reached the script


def test_json_nested_too_deep_to_read_is_a_400(fake: FakeLLMServer) -> None:
    status, answer = _request(fake, "POST", CHAT, b"[" * 100_000 + b"]" * 100_000)
    assert status == 400
    assert "nested too deep" in _error(answer)


def test_a_body_no_client_sends_is_a_400_not_a_traceback(
    fake: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    body = json.dumps({"model": "m", "messages": 5}).encode()
    with caplog.at_level(logging.ERROR):
        status, answer = _request(fake, "POST", CHAT, body)
    assert status == 400
    assert "cannot read this request (TypeError" in _error(answer)
    assert fake.stats()["in_flight"] == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_a_body_announced_over_the_limit_is_refused_unread(fake: FakeLLMServer) -> None:
    # Only the headers are sent: the 413 must come without waiting for 17 MiB.
    size = MAX_REQUEST_BYTES + 1
    connection = http.client.HTTPConnection("127.0.0.1", _port(fake), timeout=10)
    try:
        connection.putrequest("POST", CHAT)
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(size))
        connection.endheaders()
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        connection.close()
    assert status == 413
    assert _error(answer).endswith(f"{size:,} bytes is over the 16 MiB limit")
    assert fake.request_count == 0


def test_a_chunked_body_over_the_limit_is_a_413(serving: str) -> None:
    if serving == "threads":
        pytest.skip("the threaded server reads Content-Length bodies only, as before")
    with FakeLLMServer([Rule(text="hello")]) as server:

        def chunks() -> Iterator[bytes]:
            piece = b" " * (1024 * 1024)
            for _ in range(MAX_REQUEST_BYTES // len(piece) + 2):
                yield piece

        connection = http.client.HTTPConnection("127.0.0.1", _port(server), timeout=30)
        try:
            connection.request("POST", CHAT, body=chunks(), encode_chunked=True)
            response = connection.getresponse()
            status, answer = response.status, json.loads(response.read())
        except (BrokenPipeError, ConnectionResetError):
            pytest.fail("the server closed the connection instead of answering 413")
        finally:
            connection.close()
    assert status == 413
    assert "over the 16 MiB limit" in _error(answer)


def test_a_chunked_body_within_the_limit_is_read(serving: str) -> None:
    if serving == "threads":
        pytest.skip("the threaded server reads Content-Length bodies only, as before")
    with FakeLLMServer([Rule(text="hello")]) as server:
        connection = http.client.HTTPConnection("127.0.0.1", _port(server), timeout=10)
        try:
            body = iter([json.dumps(ASK).encode()])
            connection.request("POST", CHAT, body=body, encode_chunked=True)
            response = connection.getresponse()
            assert response.status == 200
            assert json.loads(response.read())["choices"][0]["message"]["content"] == "hello"
        finally:
            connection.close()
        assert server.requests[0].body == ASK


@pytest.mark.parametrize("length", ["-5", "many"])
def test_a_bad_content_length_is_a_400_and_no_traceback(
    fake: FakeLLMServer, length: str, caplog: pytest.LogCaptureFixture
) -> None:
    request = f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
    with (
        caplog.at_level(logging.INFO),
        socket.create_connection(("127.0.0.1", _port(fake)), timeout=10) as connection,
    ):
        connection.sendall(request.encode())
        head = connection.recv(65536)
    status_line = head.split(b"\r\n")[0]
    assert status_line.startswith(b"HTTP/1."), head[:80]
    assert b" 400 " in status_line
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_garbage_instead_of_http_gets_a_400_and_the_server_goes_on(
    fake: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.INFO),
        socket.create_connection(("127.0.0.1", _port(fake)), timeout=10) as connection,
    ):
        connection.sendall(b"\x16\x03\x01\x02\x00 not http at all\r\n\r\n")
        head = connection.recv(65536)
    # The asyncio server answers with a status line; the standard library's, with a page.
    assert b"400" in head[:1000], head[:200]
    assert _request(fake, "POST", CHAT, json.dumps(ASK).encode())[0] == 200
    assert not [r for r in caplog.records if r.levelno >= logging.INFO]


def test_other_methods_are_refused(fake: FakeLLMServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", _port(fake), timeout=10)
    try:
        connection.request("DELETE", CHAT)
        status = connection.getresponse().status
    finally:
        connection.close()
    assert status in (405, 501)  # the asyncio server says 405; the standard library's 501


def test_connections_are_counted_and_kept_alive(fake: FakeLLMServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", _port(fake), timeout=10)
    try:
        for _ in range(3):
            connection.request("POST", CHAT, body=json.dumps(ASK).encode())
            assert connection.getresponse().read()
    finally:
        connection.close()
    _request(fake, "POST", CHAT, json.dumps(ASK).encode())
    assert fake.connections == 2
    assert fake.request_count == 4


def test_the_server_header_names_the_dialect_and_this_fake(serving: str) -> None:
    with FakeLLMServer([Rule(text="hello")], dialect="vllm") as server:
        connection = http.client.HTTPConnection("127.0.0.1", _port(server), timeout=10)
        try:
            connection.request("GET", "/v1/models")
            response = connection.getresponse()
            response.read()
        finally:
            connection.close()
        assert response.getheader("Server") == server.server_header
        assert response.getheader("Content-Type") == "application/json"


def test_a_port_in_use_fails_start(serving: str) -> None:
    with FakeLLMServer([Rule(text="hello")]) as first:
        taken = FakeLLMServer([Rule(text="hello")], port=_port(first))
        with pytest.raises(OSError, match="in use"):
            taken.start()


def _swallow(server: FakeLLMServer, body: bytes) -> None:
    # The hang ends with the connection closed, which is the point.
    with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
        _request(server, "POST", CHAT, body)


def _wait_until(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition did not come true in time")
        time.sleep(0.01)
