"""The one LLM client used by caller, judge and agent: cache, concurrency limit, retries, usage."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from polygon_voice.llm.budget import EndpointBudget, estimate_tokens
from polygon_voice.llm.cache import ResponseCache, encode_body, request_key
from polygon_voice.llm.config import LLMSettings, Role, RoleConfig
from polygon_voice.llm.dialects import FormChoice, form_choice, is_shape_refusal
from polygon_voice.llm.errors import (
    LLMConfigError,
    LLMCutOffError,
    LLMError,
    LLMFormatError,
    LLMRequestError,
    on_one_line,
    redact,
)
from polygon_voice.llm.limits import SHARED_LIMITS, EndpointGate, EndpointLimits
from polygon_voice.llm.reply import (
    ChatReply,
    parse_completion,
    reported_tokens,
    storable_body,
)
from polygon_voice.llm.retry import RetryPolicy
from polygon_voice.llm.structured import (
    ResponseSchema,
    StructuredForm,
    parse_structured,
    response_format,
    schema_instruction,
    with_instruction,
)
from polygon_voice.llm.transport import HTTPTransport, TransportFailure
from polygon_voice.llm.usage import RequestActivity, Usage
from polygon_voice.masking import mask_secrets, mask_url, url_secrets

log = logging.getLogger("polygon_voice.llm")
WHOLE_ANSWER_FACTOR = 1.25
Message = Mapping[str, Any]


class _ShapeRefused(Exception):
    """The server refused the request's structured-output form: try the next, never again."""

    def __init__(self, failure: TransportFailure) -> None:
        super().__init__(failure.detail)
        self.failure = failure


class LLMClient:
    """Chat completions for one role against any OpenAI-compatible endpoint."""

    def __init__(
        self,
        config: RoleConfig,
        *,
        cache: ResponseCache | None = None,
        usage: Usage | None = None,
        retry: RetryPolicy | None = None,
        limits: EndpointLimits | None = None,
        env: Mapping[str, str] | None = None,
        activity: RequestActivity | None = None,
    ) -> None:
        if not config.configured:
            raise LLMConfigError(
                f"role {config.role}: no model configured; set llm.{config.role}.model in the "
                f"config file or POLYGON_{config.role.upper()}_MODEL"
            )
        self.config = config
        # The agent under test is not cached unless its config asks for it.
        self.cache = cache if config.cache_enabled else None
        self.usage = usage if usage is not None else Usage()
        # Live request counters for progress bars; clients may share one to show a total.
        self.activity = activity if activity is not None else RequestActivity()
        self._retry = retry or RetryPolicy()
        self._limits = limits or SHARED_LIMITS
        self._env = env
        self._transport: HTTPTransport | None = None
        self.endpoint = display_url(config.base_url)

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        response_schema: ResponseSchema | None = None,
        schema_name: str | None = None,
        temperature: float | None = None,
        seed: int | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> ChatReply:
        """One completion; `.parsed` holds the validated JSON when a schema is given.

        Raises LLMRequestError when the endpoint keeps failing, LLMFormatError (with `.raw`)
        when the answer cannot be read or does not match the schema.
        """
        try:
            return await self._chat(
                messages, tools, response_schema, schema_name, temperature, seed, params
            )
        except LLMError:
            self.activity.failures += 1
            raise

    async def _chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None,
        response_schema: ResponseSchema | None,
        schema_name: str | None,
        temperature: float | None,
        seed: int | None,
        params: Mapping[str, Any] | None,
    ) -> ChatReply:
        if response_schema is None:
            body = self._body(messages, tools, None, schema_name, temperature, seed, params)
            return await self._complete(body, None)

        def build(form: StructuredForm) -> dict[str, Any]:
            return self._body(
                messages, tools, response_schema, schema_name, temperature, seed, params, form
            )

        reply, form = await self._structured(build)
        try:
            parsed = parse_structured(reply.text, response_schema, form)
        except LLMFormatError as error:
            if reply.finish_reason != "length":
                raise
            # Cut off, not malformed: the fix is the limit, which the message must name.
            limit = self.config.answer_tokens
            raise LLMCutOffError(
                f"{error} — the answer was cut off at the token limit"
                + (f" (max_tokens {limit})" if limit is not None else "")
                + f": raise llm.{self.config.role}.max_tokens",
                raw=error.raw,
            ) from None
        return reply.with_parsed(parsed)

    async def _structured(
        self, build: Callable[[StructuredForm], dict[str, Any]]
    ) -> tuple[ChatReply, StructuredForm]:
        """The reply in the first form the endpoint takes (found out once per endpoint+model)."""
        choice = self._form_choice()
        while True:
            async with choice.deciding():
                form = choice.form  # read inside: the call that held the lock may have moved on
                try:
                    reply = await self._complete(build(form), form)
                except _ShapeRefused as refused:
                    self._next_form(choice, form, refused.failure)
                    continue
                except LLMFormatError:
                    choice.settle(form)  # answered in this form: the answer is what was wrong
                    raise
                choice.settle(form)
                return reply, form

    async def _complete(self, body: dict[str, Any], form: StructuredForm | None) -> ChatReply:
        """One request body answered: from the cache, or sent (with its retries) and read."""
        # Serialised once: the same bytes are hashed for the cache and sent.
        payload = encode_body(body)
        # Keyed by the shown endpoint: a key in the URL's query is no part of the request.
        key = request_key(self.endpoint, payload) if self.cache is not None else None
        reply = self._from_cache(key)
        if reply is None:
            raw = await self._send(payload, form)
            try:
                reply = parse_completion(raw)
            except LLMFormatError:
                # Answered (and billed) all the same: an unreadable answer is still a call.
                tokens_in, tokens_out = reported_tokens(raw)
                self.usage.record(
                    self.config, tokens_in=tokens_in, tokens_out=tokens_out, cached=False
                )
                raise
            if reply.sanitised:
                log.warning(
                    "%s: %d invalid code point(s) in the answer from %s replaced with U+FFFD",
                    self.config.role,
                    reply.sanitised,
                    self.endpoint,
                )
            if key is not None and self.cache is not None:
                # Never a body that could not be stored: the cleaned one replays the same.
                self.cache.put(key, storable_body(raw) if reply.sanitised else raw)
        self.usage.record(
            self.config, tokens_in=reply.tokens_in, tokens_out=reply.tokens_out, cached=reply.cached
        )
        return reply

    def _form_choice(self) -> FormChoice:
        return form_choice(
            self.config.base_url, self.config.model or "", self.config.structured_output
        )

    def _next_form(
        self, choice: FormChoice, form: StructuredForm, failure: TransportFailure
    ) -> None:
        """Move on from a refused form, or fail the call when there is nothing to move to."""
        detail = self._redacted(failure.detail)
        following = choice.refused(form)
        if following is not None:
            detail = on_one_line(detail)  # a log line; the error raised below keeps it whole
            log.warning(
                "%s: %s (model %s) refused structured output as %s (%s); using %s from now on",
                self.config.role,
                self.endpoint,
                self.config.model,
                form,
                detail,
                following,
            )
            return
        self.usage.record_failure(self.config.role)
        # Only a fixed form gets here: with auto the last form, prompt, sends no response_format.
        raise LLMRequestError(
            f"{self.config.role} call to {self.endpoint} (model {self.config.model}) failed: "
            f"the server refused structured output as {form}: {detail}; set "
            'structured_output: auto to let Polygon try the other forms (docs/llm.md, "Server '
            'kinds")',
            endpoint=self.endpoint,
            status=failure.status,
        )

    async def aclose(self) -> None:
        """Close the HTTP connections (the client stays usable: it reopens them when needed)."""
        transport, self._transport = self._transport, None
        if transport is not None:
            await transport.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def _body(
        self,
        messages: Sequence[Message],
        tools: Sequence[Mapping[str, Any]] | None,
        schema: ResponseSchema | None,
        schema_name: str | None,
        temperature: float | None,
        seed: int | None,
        params: Mapping[str, Any] | None,
        form: StructuredForm = "json_schema",
    ) -> dict[str, Any]:
        sent = [m if isinstance(m, dict) else dict(m) for m in messages]
        if schema is not None and form == "prompt":
            sent = with_instruction(sent, schema_instruction(schema))
        body: dict[str, Any] = {"model": self.config.model, "messages": sent}
        if tools:
            body["tools"] = [t if isinstance(t, dict) else dict(t) for t in tools]
        if schema is not None and form != "prompt":
            body["response_format"] = response_format(schema, schema_name, form)
        temperature = temperature if temperature is not None else self.config.temperature
        if temperature is not None:
            body["temperature"] = temperature
        if seed is not None:
            body["seed"] = seed
        if self.config.answer_tokens is not None:
            body["max_tokens"] = self.config.answer_tokens
        if params:
            body.update(params)
        return body

    def _from_cache(self, key: str | None) -> ChatReply | None:
        if key is None or self.cache is None:
            return None
        raw = self.cache.get(key)
        if raw is None:
            return None
        try:
            return parse_completion(raw, cached=True)
        except LLMFormatError:
            # A damaged entry is a miss, never an error: the request is sent again.
            self.cache.discard(key)
            return None

    async def _send(self, payload: bytes, form: StructuredForm | None = None) -> bytes:
        transport = self._transport or self._open()
        gate = self._limits.gate(self.config.base_url, self.config.max_concurrency)
        budget = self._limits.budget(self.config.base_url, self.config.rpm, self.config.tpm)
        estimate = estimate_tokens(payload, self.config.answer_tokens)
        attempts = self.config.max_retries + 1
        waited_out = 0.0  # the end of the endpoint pause this call's own retry wait honours
        for attempt in range(attempts):
            try:
                async with self._through(gate, budget, estimate, waited_out):
                    raw = await self._attempt(gate, transport, payload)
                if budget.counts_tokens:
                    # A server that reports no usage leaves the estimate standing.
                    budget.settle(estimate, sum(reported_tokens(raw)) or estimate)
                return raw
            except TransportFailure as failure:
                if failure.status == 429 and failure.retry_after is not None:
                    # The endpoint's limit, not this request's: every client holds off.
                    # (This call's retry waits at least as long: see `_retry_delay`.)
                    waited_out = budget.pause(min(failure.retry_after, self._retry.max_retry_after))
                if form not in (None, "prompt") and is_shape_refusal(
                    failure.status, failure.detail
                ):
                    # Permanent: the same shape is refused again however often it is sent.
                    raise _ShapeRefused(failure) from None
                if not failure.retryable or attempt + 1 == attempts:
                    self.usage.record_failure(self.config.role)
                    raise self._failed(failure, attempt + 1) from None
                delay = self._retry_delay(gate, failure, attempt)
                log.info(
                    "%s: %s from %s; retry %d of %d in %.2f s",
                    self.config.role,
                    on_one_line(self._redacted(failure.detail)),
                    self.endpoint,
                    attempt + 1,
                    attempts - 1,
                    delay,
                )
                self.usage.record_retry(self.config.role)
                self.activity.retries += 1
                # Outside the gate: a waiting retry does not hold back other calls (after a
                # timeout the gate itself keeps everyone off the endpoint for a while).
                await self._retry.sleep(delay)
        raise AssertionError("the retry loop always returns or raises")

    @asynccontextmanager
    async def _through(
        self, gate: EndpointGate, budget: EndpointBudget, tokens: int, waited_out: float
    ) -> AsyncIterator[None]:
        """Inside the gate, the request and its `tokens` taken from the endpoint's budget
        first (so a request waiting for its budget holds no slot); counted as waiting for as
        long as either holds the request back."""
        activity = self.activity
        activity.waiting += 1
        entered = False
        try:
            await budget.acquire(tokens, waited_out=waited_out)
            async with gate:
                activity.waiting -= 1
                entered = True
                yield
        finally:
            if not entered:  # cancelled while held back
                activity.waiting -= 1

    def _retry_delay(self, gate: EndpointGate, failure: TransportFailure, attempt: int) -> float:
        """The wait before the next attempt; after a timeout, at least until the endpoint is
        expected to be done with the abandoned request (the gate's busy spell)."""
        if not failure.timed_out:
            return self._retry.delay(attempt, failure.retry_after)
        return max(self._retry.delay(attempt), gate.busy_for)

    async def _attempt(self, gate: EndpointGate, transport: HTTPTransport, payload: bytes) -> bytes:
        """One request, counted in flight from when it is sent until its answer is in.

        The gate learns how it went: an answer (or an error status) lets it open up again; a
        request abandoned without one (timed out, or its call cancelled) keeps the endpoint
        busy for a while, since the server may still be computing it.
        """
        activity = self.activity
        activity.requests += 1
        started = activity.begin()
        try:
            raw = await self._bounded(transport.send(payload))
        except TransportFailure as failure:
            if failure.timed_out:
                gate.abandoned(self._still_busy_for(activity.waited(started)))
            elif failure.status is not None:
                await gate.answered()
            raise
        except asyncio.CancelledError:
            gate.abandoned(self._still_busy_for(activity.waited(started)))
            raise
        finally:
            activity.end(started)
        await gate.answered()
        return raw

    def _still_busy_for(self, abandoned_after: float) -> float:
        """How long a server may go on computing a request abandoned after that many seconds.

        A server of one's own (the local profile) has a few slots and finishes what it was
        given; a hosted API spreads requests over many machines, so none is waited for there
        (its gate still lets one request through at a time until an answer comes back).
        """
        if not self.config.local:
            return 0.0
        return self._retry.after_timeout(abandoned_after)

    async def _bounded(self, sending: Awaitable[bytes]) -> bytes:
        """One attempt under a wall-clock deadline for the whole answer.

        The HTTP stack's own timeout is per read: a server that drips a byte now and then
        would keep the call (and the run) waiting for ever. (The size cap is the transport's:
        it reads the body chunk by chunk.)
        """
        # A quarter more than `timeout`: a server that says nothing at all is the HTTP stack's
        # own timeout ("no answer within"), which must fire first to be named as such.
        limit = self.config.request_timeout * WHOLE_ANSWER_FACTOR
        try:
            async with asyncio.timeout(limit):
                raw = await sending
        except TimeoutError:
            detail = f"no complete answer within {limit:g} s (the whole answer, not one read)"
            raise TransportFailure(
                detail, status=None, retryable=True, retry_after=None, timed_out=True
            ) from None
        return raw

    def _open(self) -> HTTPTransport:
        self._transport = HTTPTransport(self.config, self._api_key())
        return self._transport

    def _api_key(self) -> str | None:
        name = self.config.api_key_env
        if name is None:
            return None
        key = (os.environ if self._env is None else self._env).get(name)
        if not key:
            raise LLMConfigError(
                f"role {self.config.role}: the API key variable {name} is not set "
                f"(endpoint {self.endpoint})"
            )
        return key

    def _redacted(self, text: str) -> str:
        name = self.config.api_key_env
        env = os.environ if self._env is None else self._env
        # The key, and whatever credentials the base URL carries, in any form the HTTP stack
        # may have repeated them (its error messages often embed the URL).
        text = redact(text, env.get(name) if name else None)
        return mask_secrets(text, url_secrets(self.config.base_url))

    def _failed(self, failure: TransportFailure, attempts: int) -> LLMRequestError:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return LLMRequestError(
            f"{self.config.role} call to {self.endpoint} (model {self.config.model}) "
            f"failed{tries}: {self._redacted(failure.detail)}",
            endpoint=self.endpoint,
            status=failure.status,
            attempts=attempts,
        )


def make_client(
    settings: LLMSettings, role: Role, *, usage: Usage | None = None, **options: Any
) -> LLMClient:
    """A client for `role` with the settings' response cache (used when the role caches)."""
    config = settings.role(role)
    cache = ResponseCache(settings.cache_dir) if config.cache_enabled else None
    return LLMClient(config, cache=cache, usage=usage, **options)


def display_url(url: str) -> str:
    """The endpoint as messages show it: no user:password@, key-like query values masked."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return mask_url(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return mask_url(urlunsplit(parts._replace(netloc=netloc)))
