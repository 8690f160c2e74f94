"""Sending one request through the official `openai` SDK, imported only when first needed.

The SDK's own retries are off (`max_retries=0`): the client's retry loop decides, so its
behaviour is ours and testable. Requests go through the SDK's generic `post` with the body
returned as bytes: the SDK still handles the URL, auth, headers, timeouts and error statuses,
but skips building typed request and response objects, which is most of its CPU per call
(measured in bench/llm.py). With the `aiohttp` extra installed it is the HTTP transport.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from polygon_voice.llm.config import RoleConfig
from polygon_voice.llm.errors import LLMConfigError
from polygon_voice.llm.retry import is_retryable_status, parse_retry_after

if TYPE_CHECKING:
    from openai import AsyncOpenAI, RequestOptions

ROLE_HEADER = "X-Polygon-Role"
# The SDK's switch for "give me the response unread": the body is then read here, chunk by
# chunk, so an answer over MAX_ANSWER_BYTES is cut off rather than held in memory.
_STREAM_BODY_HEADER = "X-Stainless-Raw-Response"
MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""The largest model answer read (a chat completion is kilobytes; this leaves room for long
tool-call arguments); a larger answer fails its call, never the run."""
# Sent when no key is configured: local servers (vLLM, Ollama, llama.cpp) ignore it, and the
# SDK would otherwise fall back to $OPENAI_API_KEY behind the user's back.
NO_KEY = "no-key"
# An error's detail is stored with its call in full (a 300-character cut once hid the cause);
# screens shorten it. Only a page-sized body (a proxy's HTML error page) is cut.
_DETAIL_LIMIT = 10_000
_PLATFORM_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
)


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


class OpenAITransport:
    """Posts chat-completion bodies to one role's endpoint; one SDK client per event loop."""

    def __init__(self, config: RoleConfig, api_key: str | None) -> None:
        _require_sdk(config)
        import openai

        self._config = config
        self._api_key = api_key or NO_KEY
        # Absolute: the SDK then parses one URL per request instead of merging two.
        self._url = completions_url(config.base_url)
        # The SDK's platform headers are telemetry that no endpoint needs, and each one is
        # merged, normalised and parsed on every call: leaving them out saves ~5 % CPU.
        self._options: RequestOptions = {
            "headers": {
                **{name: openai.Omit() for name in _PLATFORM_HEADERS},
                _STREAM_BODY_HEADER: "stream",
            }
        }
        self._sdk: AsyncOpenAI | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def send(self, payload: bytes) -> bytes:
        """The response body of one POST /chat/completions (JSON `payload`), or TransportFailure."""
        import openai

        sdk = self._client()
        try:
            response = await sdk.post(
                self._url, content=payload, cast_to=bytes, options=self._options
            )
            return await _read_capped(response)
        except (openai.OpenAIError, ValueError, TypeError) as exc:
            # `from None`: the chained exceptions carry the request, headers included.
            raise self._failure(exc) from None

    def _failure(self, exc: Exception) -> TransportFailure:
        import openai

        if isinstance(exc, openai.APIStatusError):
            detail = _detail(exc.body, exc.message)
            return TransportFailure(
                f"HTTP {exc.status_code}: {detail}",
                status=exc.status_code,
                retryable=is_retryable_status(exc.status_code, detail),
                retry_after=parse_retry_after(exc.response.headers),
            )
        if isinstance(exc, openai.APIConnectionError):
            detail, timed_out = self._describe(exc, isinstance(exc, openai.APITimeoutError))
            return TransportFailure(
                detail, status=None, retryable=True, retry_after=None, timed_out=timed_out
            )
        # The HTTP layer refusing the request itself (aiohttp: credentials in the URL
        # together with an Authorization header, say): retrying cannot help.
        return TransportFailure(
            f"request failed: {type(exc).__name__}: {exc}",
            status=None,
            retryable=False,
            retry_after=None,
        )

    def _describe(self, exc: BaseException, timed_out: bool) -> tuple[str, bool]:
        """What happened, and whether it really was a timeout (the server may be computing)."""
        # The aiohttp transport reports a refused or reset connection, and a server that
        # hung up without answering, as a connect *timeout*: the root of the chain tells
        # which it really was, so the error names what happened (reset vs timeout).
        refused = _root_os_error(exc)
        if refused is not None:
            return f"connection failed: {refused}", False
        root = _root_cause(exc)
        if _is_disconnect(root):
            return f"connection closed by the server without an answer ({root})", False
        if timed_out:
            return f"no answer within {self._config.request_timeout:g} s", True
        return f"connection failed: {root}", False

    async def aclose(self) -> None:
        """Close the SDK client (and its connections) if one was opened in the running loop."""
        sdk, self._sdk = self._sdk, None
        if sdk is not None and self._loop is asyncio.get_running_loop():
            await sdk.close()

    def _client(self) -> AsyncOpenAI:
        # HTTP sessions belong to an event loop: a client used from another loop gets its own.
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._loop is not loop:
            self._sdk, self._loop = _new_sdk_client(self._config, self._api_key), loop
        return self._sdk


def completions_url(base_url: str) -> str:
    """The chat-completions URL under `base_url`, whose query (`?api-version=`, `?key=`) is kept
    after the path rather than swallowing it."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


def _require_sdk(config: RoleConfig) -> None:
    try:
        import openai  # noqa: F401
    except ImportError:
        raise LLMConfigError(
            f"role {config.role}: the LLM client needs the openai package: "
            "pip install 'polygon-voice[llm]'"
        ) from None


def _new_sdk_client(config: RoleConfig, api_key: str) -> AsyncOpenAI:
    import openai

    try:
        http_client = openai.DefaultAioHttpClient()
    except RuntimeError:
        # aiohttp is not installed: the SDK's default transport works, with more CPU per call.
        http_client = None
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=config.base_url,
        timeout=config.request_timeout,
        max_retries=0,
        default_headers={ROLE_HEADER: config.role},
        http_client=http_client,
    )


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
    # aiohttp's ServerDisconnectedError, httpx's "Server disconnected without sending a
    # response": the peer closed the connection cleanly (no reset, no timeout).
    return "disconnected" in f"{type(exc).__name__} {exc}".lower()


def _detail(body: object, fallback: str) -> str:
    message = body.get("message") if isinstance(body, dict) else None
    text = str(message) if message else fallback
    return text if len(text) <= _DETAIL_LIMIT else text[:_DETAIL_LIMIT] + "..."


async def _read_capped(response: object) -> bytes:
    """The body of an unread SDK response, refused past MAX_ANSWER_BYTES."""
    if isinstance(response, bytes):  # an SDK that read it anyway
        body = response
    else:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.iter_bytes():  # type: ignore[attr-defined]
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                await response.close()  # type: ignore[attr-defined]
                raise TransportFailure(
                    f"answer over {MAX_ANSWER_BYTES:,} bytes; the limit is {MAX_ANSWER_BYTES:,}",
                    status=None,
                    retryable=False,
                    retry_after=None,
                )
            chunks.append(chunk)
        body = b"".join(chunks)
    if len(body) > MAX_ANSWER_BYTES:
        raise TransportFailure(
            f"answer of {len(body):,} bytes; the limit is {MAX_ANSWER_BYTES:,}",
            status=None,
            retryable=False,
            retry_after=None,
        )
    return body
