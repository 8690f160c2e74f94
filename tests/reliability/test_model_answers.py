"""A model server that drips its answer, or sends far too much, fails that call in bounded
time with an error saying so; it never holds the run."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from polygon_voice.llm import LLMClient, LLMRequestError
from polygon_voice.llm.config import RoleConfig
from polygon_voice.llm.transport import MAX_ANSWER_BYTES

HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"


def serve(
    answer: str, drip_seconds: float | None, length: int, endless: bool = False
) -> Iterator[str]:
    """A one-request server on loopback: the head, then the body at once or a byte at a time."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def run() -> None:
        listener.settimeout(5)
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.recv(65536)
            try:
                conn.sendall(HEAD.format(length=length).encode())
                if endless:  # as fast as the client reads, until it hangs up
                    block = b"0" * 65536
                    while not stop.is_set():
                        conn.sendall(block)
                if drip_seconds is None:
                    conn.sendall(answer.encode())
                    return
                for byte in answer.encode():
                    if stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(drip_seconds)
            except OSError:
                return

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}/v1"
    stop.set()
    listener.close()
    thread.join(timeout=5)


def ask(base_url: str, timeout: float) -> LLMRequestError:
    config = RoleConfig(
        role="judge", model="m", base_url=base_url, timeout=timeout, max_retries=0, cache=False
    )

    async def go() -> LLMRequestError:
        async with LLMClient(config) as client:
            with pytest.raises(LLMRequestError) as caught:
                await client.chat([{"role": "user", "content": "hi"}])
            return caught.value

    return asyncio.run(go())


def test_a_dripping_answer_fails_within_the_timeout() -> None:
    body = '{"choices": [{"message": {"content": "' + "x" * 200 + '"}}]}'
    server = serve(body, drip_seconds=0.05, length=len(body))
    started = time.perf_counter()
    error = ask(next(server), timeout=0.5)
    took = time.perf_counter() - started
    next(server, None)
    assert "no complete answer within 0.625 s" in str(error)
    assert took < 3  # 200+ bytes at 50 ms each would take over 10 s


def test_an_oversized_answer_is_refused() -> None:
    body = '{"choices": [{"message": {"content": "' + "x" * (MAX_ANSWER_BYTES + 10) + '"}}]}'
    server = serve(body, drip_seconds=None, length=len(body))
    error = ask(next(server), timeout=10)
    next(server, None)
    assert f"the limit is {MAX_ANSWER_BYTES:,}" in str(error)


def test_an_endless_answer_is_cut_off_at_the_limit_not_read_to_the_end() -> None:
    # A terabyte announced and streamed: the client stops reading past the limit.
    server = serve("", drip_seconds=None, length=10**12, endless=True)
    started = time.perf_counter()
    error = ask(next(server), timeout=30)
    took = time.perf_counter() - started
    next(server, None)
    assert f"answer over {MAX_ANSWER_BYTES:,} bytes" in str(error)
    assert took < 15
