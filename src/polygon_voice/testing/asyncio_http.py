"""Serving the fake LLM server on asyncio: aiohttp's low-level server, in a thread of its own.

One event loop holds every connection and a scripted delay is an `asyncio.sleep`, so 512
concurrent clients cost the server 512 sleeping coroutines, not 512 threads taking turns
on the cores the clients need too. The loop runs in a daemon thread, so the fake is used
the same way from synchronous tests, async tests (whose own loop is another) and its CLI.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import struct
import threading
from typing import TYPE_CHECKING, Any

from aiohttp import ClientError, web

from polygon_voice.testing.answers import Answer, error_answer
from polygon_voice.testing.server import BACKLOG, MAX_REQUEST_BYTES, too_large

if TYPE_CHECKING:
    from aiohttp.web_protocol import RequestHandler

    from polygon_voice.testing.server import FakeLLMServer

# An idle keep-alive connection is closed after this long, as the threaded server does.
KEEPALIVE_SECONDS = 300.0
# How long stop() lets answers already due go out before it closes their connections.
SHUTDOWN_SECONDS = 1.0


class _QuietLog(logging.LoggerAdapter[logging.Logger]):
    """aiohttp's log of requests it could not read (not HTTP, a bad header), at debug level:
    a hostile request gets its 400, not a traceback on the server's stderr."""

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)
        self.debug(msg, *args, **kwargs)


_LOG = _QuietLog(logging.getLogger(__name__), {})


class _CountingServer(web.Server):
    """aiohttp's low-level server, counting the connections it accepts."""

    def __init__(self, fake: FakeLLMServer, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._fake = fake

    def connection_made(self, handler: RequestHandler, transport: asyncio.Transport) -> None:
        self._fake.connected()
        super().connection_made(handler, transport)


class AsyncioServing:
    """An event loop in a daemon thread, serving `fake` on a socket bound at once."""

    def __init__(self, fake: FakeLLMServer, host: str, port: int) -> None:
        self._fake = fake
        # Bound here, in the caller's thread: a port in use fails start(), as it should.
        self._socket = socket.create_server((host, port), backlog=BACKLOG)
        bound_host, bound_port = self._socket.getsockname()[:2]
        self.address = (str(bound_host), int(bound_port))
        self._sleeping: set[asyncio.Task[Any]] = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._open(), self._loop).result(timeout=10)
        except BaseException:
            self._halt()
            raise

    def stop(self) -> None:
        """Close the listening socket, end the delays, let due answers out, stop the loop."""
        if self._loop.is_closed():
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(timeout=5)
        except TimeoutError:
            pass  # a handler that would not end: the loop stops under it all the same
        finally:
            self._halt()

    async def _open(self) -> None:
        self._web = _CountingServer(
            self._fake,
            self._handle,
            access_log=None,
            logger=_LOG,
            keepalive_timeout=KEEPALIVE_SECONDS,
        )
        loop = asyncio.get_running_loop()
        self._listener = await loop.create_server(self._web, sock=self._socket, backlog=BACKLOG)

    async def _close(self) -> None:
        self._listener.close()
        for task in list(self._sleeping):
            task.cancel()  # _pause() takes this as the end of the delay
        await self._web.shutdown(SHUTDOWN_SECONDS)
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    def _halt(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()
        self._socket.close()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        fake, path = self._fake, request.raw_path
        if request.method == "GET":
            return _response(fake.get(path), fake.server_header)
        if request.method != "POST":
            refused = error_answer(405, f"fake LLM server: no {request.method[:16]!r} requests")
            return _response(refused, fake.server_header)
        fake.post_arrived(path, request.headers.get("X-Polygon-Probe"))
        raw = await _read_body(request)
        if isinstance(raw, Answer):
            response = _response(raw, fake.server_header)
            response.force_close()  # the rest of the body is never read
            return response
        parsed = fake.post_body(path, raw)
        if isinstance(parsed, Answer):
            return _response(parsed, fake.server_header)
        headers = {key.lower(): value for key, value in request.headers.items()}
        answer = fake.post_answer(path, headers, parsed)
        try:
            await self._pause(answer.delay)
        finally:
            # Before the answer goes out: once the client has it, it may send the next request.
            fake.post_done()
        if answer.body is None:
            _hang_up(request, reset=answer.reset)
            return web.Response()  # never sent: the connection is closed
        return _response(answer, fake.server_header)

    async def _pause(self, delay: float) -> None:
        """Sleep `delay` seconds; stop() ends the sleep at once and the answer goes out."""
        task = asyncio.current_task()
        if delay <= 0 or self._fake.stopping or task is None:
            return
        self._sleeping.add(task)
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            if not self._fake.stopping:
                raise
            task.uncancel()
        finally:
            self._sleeping.discard(task)


def serve_asyncio(fake: FakeLLMServer, host: str, port: int) -> AsyncioServing:
    """Bind `host:port` and serve `fake` from an event loop in a thread of its own."""
    return AsyncioServing(fake, host, port)


async def _read_body(request: web.BaseRequest) -> bytes | Answer:
    """The whole body, or 413 as soon as it is known to be over the limit."""
    length = request.content_length
    try:
        if length is not None:
            # The usual case, in one read; a body past the limit is refused unread.
            if length > MAX_REQUEST_BYTES:
                return too_large(length)
            return await request.content.readexactly(length)
        return await _read_chunked(request)
    except (asyncio.IncompleteReadError, ConnectionError, ClientError):
        return error_answer(400, "fake LLM server: the request body ended early")


async def _read_chunked(request: web.BaseRequest) -> bytes | Answer:
    # Chunked transfer: no length to check beforehand, so count while reading.
    body = bytearray()
    while chunk := await request.content.readany():
        body += chunk
        if len(body) > MAX_REQUEST_BYTES:
            return too_large(len(body))
    return bytes(body)


def _response(answer: Answer, server_header: str) -> web.Response:
    headers = {"Content-Type": "application/json", "Server": server_header, **answer.headers}
    return web.Response(status=answer.status, body=answer.body, headers=headers)


def _hang_up(request: web.BaseRequest, *, reset: bool) -> None:
    """Close the connection without an answer: a clean FIN, or a TCP RST with `reset`."""
    transport = request.transport
    if transport is None:
        return  # the client has gone already
    if reset:
        connection = transport.get_extra_info("socket")
        if connection is not None:
            # Linger 0: closing sends a TCP RST instead of a clean FIN.
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
    else:
        transport.close()
