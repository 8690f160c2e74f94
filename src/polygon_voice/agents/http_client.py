"""A small HTTP/1.1 client on asyncio streams, for agents behind HTTP (docs/agents.md).

Why our own: the core install has no async HTTP client, and the stdlib's blocking one needs a
thread per request. Threads cannot be cancelled, so a stuck endpoint held one until its socket
timeout — which a connection dripping a byte a second never reaches — and the run could not
exit while any was left. Here every request is a coroutine: its deadline covers connecting,
sending and reading the whole answer (total time, not per read), the body is read with a byte
cap, and the socket is closed whatever happens. One request per connection
(`Connection: close`), so nothing is pooled and nothing outlives the request.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

MAX_HEADER_BYTES = 64 * 1024  # status line and headers together
_CHUNK = 64 * 1024
# Headers the request always sets itself; the same names given by a caller are dropped.
_OWN_HEADERS = frozenset({"host", "content-type", "accept", "content-length", "connection"})


class HttpFailure(Exception):
    """The request failed; `kind` names how, the message says it for a person."""

    kind = "failed"


class HttpTimeout(HttpFailure):
    """No complete answer within the deadline."""

    kind = "timeout"


class HttpRefused(HttpFailure):
    """Could not connect (refused, unknown host, unreachable)."""

    kind = "unreachable"


class HttpReset(HttpFailure):
    """The connection was reset or closed before the answer was complete."""

    kind = "reset"


class HttpTooLarge(HttpFailure):
    """The answer is larger than the byte cap."""

    kind = "too_large"


class HttpGarbage(HttpFailure):
    """The bytes that came back are not HTTP."""

    kind = "garbage"


@dataclass(frozen=True)
class HttpAnswer:
    """A complete answer: the status and the body."""

    status: int
    body: bytes


@dataclass(frozen=True)
class _Target:
    host: str
    port: int
    tls: bool
    path: str
    authorization: str | None  # from user:password@ in the URL (HTTP basic)

    @classmethod
    def parse(cls, url: str) -> _Target:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise HttpFailure("is not an http:// or https:// URL with a host")
        tls = parts.scheme == "https"
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        authorization = None
        if parts.username is not None:
            user = urllib.parse.unquote(parts.username)
            secret = urllib.parse.unquote(parts.password or "")
            token = base64.b64encode(f"{user}:{secret}".encode()).decode("ascii")
            authorization = f"Basic {token}"
        try:
            port = parts.port or (443 if tls else 80)
        except ValueError:
            raise HttpFailure("has an invalid port") from None
        return cls(parts.hostname, port, tls, path, authorization)

    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.tls else 80
        return host if self.port == default else f"{host}:{self.port}"


async def post_json(
    url: str,
    payload: bytes,
    *,
    deadline: float,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
) -> HttpAnswer:
    """POST `payload` as JSON; the whole exchange within `deadline` seconds, the body at most
    `max_bytes`. `headers` are added (an `Authorization` given here wins over user:password@
    in the URL). Raises an `HttpFailure` subclass naming what went wrong."""
    target = _Target.parse(url)
    extra = dict(headers or {})
    if target.authorization is not None and "Authorization" not in extra:
        extra["Authorization"] = target.authorization
    received = _Progress()
    try:
        async with asyncio.timeout(deadline):
            return await _exchange(target, payload, extra, max_bytes, received)
    except TimeoutError:
        raise HttpTimeout(f"gave no answer within {deadline:g}s ({received.describe()})") from None


@dataclass
class _Progress:
    """How far an answer got, for the timeout's message."""

    bytes: int = 0
    connected: bool = False

    def describe(self) -> str:
        if not self.connected:
            return "could not connect"
        if not self.bytes:
            return "connected, nothing received"
        return f"an incomplete answer: {self.bytes:,} bytes received"


async def _exchange(
    target: _Target,
    payload: bytes,
    headers: Mapping[str, str],
    max_bytes: int,
    progress: _Progress,
) -> HttpAnswer:
    reader, writer = await _connect(target)
    progress.connected = True
    try:
        writer.write(_request(target, payload, headers))
        await writer.drain()
        status, headers = await _read_head(reader, progress)
        body = await _read_body(reader, headers, max_bytes, progress)
        return HttpAnswer(status, body)
    except asyncio.IncompleteReadError:
        raise HttpReset("closed the connection before the answer was complete") from None
    except OSError as exc:  # reset, broken pipe, a TLS error mid-stream
        raise HttpReset(f"connection reset: {exc.strerror or exc}") from None
    finally:
        writer.close()  # never awaited: a peer that does not close must not hold us


async def _connect(target: _Target) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    context = ssl.create_default_context() if target.tls else None
    try:
        return await asyncio.open_connection(
            target.host, target.port, ssl=context, limit=MAX_HEADER_BYTES
        )
    except ssl.SSLError as exc:
        raise HttpRefused(f"TLS failed: {exc.reason or exc}") from None
    except OSError as exc:
        raise HttpRefused(f"unreachable: {exc.strerror or exc}") from None


def _request(target: _Target, payload: bytes, headers: Mapping[str, str]) -> bytes:
    lines = [
        f"POST {target.path} HTTP/1.1",
        f"Host: {target.host_header()}",
        "Content-Type: application/json",
        "Accept: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
    ]
    lines.extend(
        f"{name}: {value}" for name, value in headers.items() if name.lower() not in _OWN_HEADERS
    )
    head = "\r\n".join(lines) + "\r\n\r\n"
    return head.encode("latin-1") + payload


async def _read_head(
    reader: asyncio.StreamReader, progress: _Progress
) -> tuple[int, dict[str, str]]:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise HttpGarbage(f"sent no end of headers within {MAX_HEADER_BYTES:,} bytes") from None
    except asyncio.IncompleteReadError as exc:  # the peer closed before the headers ended
        if not exc.partial:
            raise HttpReset("closed the connection without answering") from None
        _status(exc.partial.split(b"\r\n", 1)[0].decode("latin-1"))  # garbage: says so
        raise HttpReset("closed the connection in the middle of the headers") from None
    progress.bytes += len(raw)
    lines = raw.decode("latin-1").split("\r\n")
    status = _status(lines[0])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon:
            raise HttpGarbage(f"sent a header line without ':': {line[:60]!r}")
        headers[name.strip().lower()] = value.strip()
    return status, headers


def _status(line: str) -> int:
    parts = line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpGarbage(f"answered with no HTTP status line: {line[:60]!r}")
    return int(parts[1])


async def _read_body(
    reader: asyncio.StreamReader, headers: dict[str, str], max_bytes: int, progress: _Progress
) -> bytes:
    if "chunked" in headers.get("transfer-encoding", "").lower():
        return await _read_chunked(reader, max_bytes, progress)
    length = headers.get("content-length")
    if length is None:
        return await _read_to_end(reader, max_bytes, progress)
    if not length.isdigit():
        raise HttpGarbage(f"sent an invalid Content-Length: {length[:40]!r}")
    if int(length) > max_bytes:
        raise _too_large(max_bytes, f"Content-Length {int(length):,}")
    return await _read_exactly(reader, int(length), progress)


async def _read_exactly(reader: asyncio.StreamReader, size: int, progress: _Progress) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        part = await reader.read(min(left, _CHUNK))
        if not part:
            got = size - left
            raise HttpReset(f"closed the connection after {got:,} of {size:,} bytes")
        parts.append(part)
        left -= len(part)
        progress.bytes += len(part)
    return b"".join(parts)


async def _read_to_end(reader: asyncio.StreamReader, max_bytes: int, progress: _Progress) -> bytes:
    parts: list[bytes] = []
    total = 0
    while part := await reader.read(_CHUNK):
        total += len(part)
        progress.bytes += len(part)
        if total > max_bytes:
            raise _too_large(max_bytes, "cut off while reading")
        parts.append(part)
    return b"".join(parts)


async def _read_chunked(reader: asyncio.StreamReader, max_bytes: int, progress: _Progress) -> bytes:
    parts: list[bytes] = []
    total = 0
    while True:
        size = _chunk_size(await _read_line(reader))
        if size == 0:
            break
        total += size
        if total > max_bytes:
            raise _too_large(max_bytes, "cut off while reading")
        parts.append(await _read_exactly(reader, size, progress))
        await _read_line(reader)  # the CRLF after each chunk
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        await _read_line(reader)  # the last CRLF (trailers are not used)
    return b"".join(parts)


async def _read_line(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n")
    except asyncio.LimitOverrunError:
        raise HttpGarbage("sent a chunk-size line that never ends") from None


def _chunk_size(line: bytes) -> int:
    text = line.split(b";", 1)[0].strip()
    try:
        return int(text, 16)
    except ValueError:
        raise HttpGarbage(f"sent an invalid chunk size: {text[:20]!r}") from None


def _too_large(max_bytes: int, detail: str) -> HttpTooLarge:
    return HttpTooLarge(
        f"answered more than {max_bytes:,} bytes ({detail}), the limit"
        " settings.max_reply_bytes sets"
    )
