"""Sending one chat-completion request: a POST with aiohttp, imported only when first needed.

The request is the one the official `openai` SDK would send (URL, bearer key, JSON body,
timeouts), and its failures read as the SDK's did (the server's error message, the status,
Retry-After), but nothing else: no typed request or response objects, no per-call header
merging, no second HTTP layer. That was most of the harness's CPU per request (measured in
bench/llm.py and bench/cost_per_request.py). One session per event loop keeps its
connections alive across calls. There are no retries here: the client's loop decides.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from polygon_voice import __version__
from polygon_voice.llm.config import RoleConfig
from polygon_voice.llm.errors import LLMConfigError
from polygon_voice.llm.retry import is_retryable_status, parse_retry_after

if TYPE_CHECKING:
    import ssl

    import aiohttp

ROLE_HEADER = "X-Polygon-Role"
MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The largest model answer read (a chat completion is kilobytes; this leaves room for long
tool-call arguments); a larger answer fails its call, never the run."""
# Sent when no key is configured: local servers (vLLM, Ollama, llama.cpp) ignore it, and an
# SDK would otherwise fall back to $OPENAI_API_KEY behind the user's back.
NO_KEY = "no-key"
# An error's detail is stored with its call in full (a 300-character cut once hid the cause);
# screens shorten it. Only a page-sized body (a proxy's HTML error page) is cut.
_DETAIL_LIMIT = 10_000
# Connections kept open between requests (seconds): longer than any pause of a run between
# two requests to one endpoint, shorter than the idle timeout of common servers and proxies.
_KEEP_ALIVE = 30.0


class TransportFailure(Exception):
    """One attempt failed: its HTTP status (None: timeout, connection) and whether to retry."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None,
        retryable: bool,
        retry_after: float | None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        # No (complete) answer in time: the server may still be computing the request.
        self.timed_out = timed_out


class HTTPTransport:
    """Posts chat-completion bodies to one role's endpoint; one HTTP session per event loop."""

    def __init__(self, config: RoleConfig, api_key: str | None) -> None:
        _require_aiohttp(config)
        self._config = config
        self._url = completions_url(config.base_url)
        # Built once: every request of the role sends the same headers.
        self._headers = {
            "Authorization": f"Bearer {api_key or NO_KEY}",
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"polygon-voice/{__version__}",
            ROLE_HEADER: config.role,
        }
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeout: aiohttp.ClientTimeout | None = None

    async def send(self, payload: bytes) -> bytes:
        """The response body of one POST /chat/completions (JSON `payload`), or TransportFailure."""
        import aiohttp

        session = self._session_here()
        try:
            # Redirects are not followed (as the SDK did not): a POST redirected elsewhere
            # is an error status to see, not a body to read.
            async with session.post(
                self._url,
                data=payload,
                headers=self._headers,
                timeout=self._timeout,
                allow_redirects=False,
            ) as response:
                body = await _read_capped(response)
                if response.status >= 300:
                    raise _status_failure(response.status, body, response.headers)
                return body
        except TransportFailure:
            raise
        except (aiohttp.ClientError, OSError, TimeoutError, ValueError, TypeError) as exc:
            # `from None`: the chained exceptions carry the request, headers included.
            raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> TransportFailure:
        import aiohttp

        if isinstance(exc, ValueError | TypeError) and not isinstance(exc, aiohttp.ClientError):
            # The HTTP layer refusing the request itself (credentials in the URL together
            # with the Authorization header, say): retrying cannot help.
            return TransportFailure(
                f"request failed: {type(exc).__name__}: {exc}",
                status=None,
                retryable=False,
                retry_after=None,
            )
        if isinstance(exc, aiohttp.InvalidURL):
            return TransportFailure(
                f"request failed: invalid URL {exc}", status=None, retryable=False, retry_after=None
            )
        detail, timed_out = self._describe(exc, isinstance(exc, TimeoutError))
        return TransportFailure(
            detail, status=None, retryable=True, retry_after=None, timed_out=timed_out
        )

    def _describe(self, exc: BaseException, timed_out: bool) -> tuple[str, bool]:
        """What happened, and whether it really was a timeout (the server may be computing)."""
        # A refused or reset connection names its OS error (the root of the chain); a server
        # that hung up without answering is not a timeout either.
        refused = _root_os_error(exc)
        if refused is not None:
            return f"connection failed: {refused}", False
        root = _root_cause(exc)
        if _is_disconnect(root):
            return f"connection closed by the server without an answer ({root})", False
        if timed_out:
            return f"no answer within {self._config.request_timeout:g} s", True
        return f"connection failed: {str(root) or type(root).__name__}", False

    async def aclose(self) -> None:
        """Close the session (and its connections) if one was opened in the running loop."""
        session, self._session = self._session, None
        if session is not None and self._loop is asyncio.get_running_loop():
            await session.close()

    def _session_here(self) -> aiohttp.ClientSession:
        # Sessions belong to an event loop: a transport used from another loop gets its own.
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop:
            self._session, self._loop = self._new_session(), loop
        return self._session

    def _new_session(self) -> aiohttp.ClientSession:
        import aiohttp

        seconds = self._config.request_timeout
        # As the SDK set it: connecting, and each read, within `timeout`; the whole answer's
        # deadline is the client's (it also covers a server that drips bytes).
        self._timeout = aiohttp.ClientTimeout(
            total=None, connect=seconds, sock_connect=seconds, sock_read=seconds
        )
        https = urlsplit(self._url).scheme == "https"
        connector = aiohttp.TCPConnector(
            # The endpoint gate bounds the requests in flight; the pool must not bound them
            # again (the SDK's pool of 100 connections held back a concurrency of 128).
            limit=0,
            keepalive_timeout=_KEEP_ALIVE,
            ssl=_tls_context() if https else False,
        )
        # auto_decompress on (the default): a gzip answer is read, and capped, unpacked.
        return aiohttp.ClientSession(connector=connector)


# The name the client used when requests went through the SDK.
OpenAITransport = HTTPTransport


def completions_url(base_url: str) -> str:
    """The chat-completions URL under `base_url`, whose query (`?api-version=`, `?key=`) is kept
    after the path rather than swallowing it."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def _require_aiohttp(config: RoleConfig) -> None:
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        raise LLMConfigError(
            f"role {config.role}: the LLM client needs the aiohttp package: "
            "pip install 'polygon-voice[llm]'"
        ) from None


def _tls_context() -> ssl.SSLContext:
    """The certificates the SDK would trust: $SSL_CERT_FILE / $SSL_CERT_DIR, else the
    system's (through httpcore2, the SDK's own, when it is installed)."""
    try:
        from httpcore2 import default_ssl_context
    except ImportError:
        import ssl

        cafile = os.environ.get("SSL_CERT_FILE") or None
        capath = os.environ.get("SSL_CERT_DIR") or None
        return ssl.create_default_context(cafile=cafile, capath=capath)
    return default_ssl_context()


def _status_failure(status: int, body: bytes, headers: Mapping[str, str]) -> TransportFailure:
    """An error status as the SDK worded it: the server's `error.message` (or top-level
    `message`), else `Error code: N`."""
    detail = _detail(_error_body(body), f"Error code: {status}")
    return TransportFailure(
        f"HTTP {status}: {detail}",
        status=status,
        retryable=is_retryable_status(status, detail),
        retry_after=parse_retry_after(headers),
    )


def _error_body(body: bytes) -> object:
    """The error object of an error answer: `{"error": {...}}`'s inner part, or the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data.get("error", data) if isinstance(data, dict) else data


def _detail(body: object, fallback: str) -> str:
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message) if message else fallback
    return text if len(text) <= _DETAIL_LIMIT else text[:_DETAIL_LIMIT] + "..."


def _root_os_error(exc: BaseException) -> OSError | None:
    found: OSError | None = None
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and not isinstance(seen, TimeoutError):
            found = seen
        seen = seen.__cause__ or seen.__context__
    return found


def _root_cause(exc: BaseException) -> BaseException:
    seen: set[int] = set()
    while id(exc) not in seen:
        seen.add(id(exc))
        nxt = exc.__cause__ or exc.__context__
        if nxt is None:
            break
        exc = nxt
    return exc


def _is_disconnect(exc: BaseException) -> bool:
    # aiohttp's ServerDisconnectedError: the peer closed the connection cleanly (no reset,
    # no timeout).
    return "disconnected" in f"{type(exc).__name__} {exc}".lower()


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    """The body, refused past MAX_ANSWER_BYTES (read chunk by chunk, never held whole)."""
    declared = response.content_length
    if declared is not None and declared > MAX_ANSWER_BYTES:
        response.close()  # announced too large: not a byte of it is read
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            response.close()
            raise _too_large()
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large() -> TransportFailure:
    return TransportFailure(
        f"answer over {MAX_ANSWER_BYTES:,} bytes; the limit is {MAX_ANSWER_BYTES:,}",
        status=None,
        retryable=False,
        retry_after=None,
    )
