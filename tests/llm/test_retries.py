"""Retries: 429 with Retry-After, 5xx, timeouts, and giving up with a clear error."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from polygon_voice.llm import LLMRequestError, RetryPolicy, parse_retry_after
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import SECRET_KEY, USER_HELLO, Sleeps, client_for

Serve = Callable[..., FakeLLMServer]


async def test_429_waits_as_long_as_retry_after_then_succeeds(serve: Serve, sleeps: Sleeps) -> None:
    server = serve([Rule(call=1, error=429, retry_after=7), Rule(text="after the wait")])
    async with client_for(server, sleeps=sleeps) as client:
        reply = await client.chat(USER_HELLO)
    assert reply.text == "after the wait"
    # Never shorter than Retry-After; jittered on top by at most the random half of the backoff.
    assert len(sleeps.delays) == 1
    assert 7.0 <= sleeps.delays[0] <= 7.25
    assert [r.call for r in server.requests] == [1, 2]
    assert client.usage.roles["caller"].retries == 1
    assert client.usage.roles["caller"].calls == 1


async def test_500_then_success_backs_off_with_jitter(serve: Serve, sleeps: Sleeps) -> None:
    server = serve([Rule(error=500, times=2), Rule(text="recovered")])
    async with client_for(server, sleeps=sleeps) as client:
        reply = await client.chat(USER_HELLO)
    assert reply.text == "recovered"
    assert len(server.requests) == 3
    # Base 0.5 s doubling, each wait between half and all of its step.
    assert 0.25 <= sleeps.delays[0] <= 0.5
    assert 0.5 <= sleeps.delays[1] <= 1.0


async def test_a_timeout_is_retried(serve: Serve, sleeps: Sleeps) -> None:
    server = serve([Rule(call=1, hang=30), Rule(text="answered in time")])
    async with client_for(server, sleeps=sleeps, settings={"timeout": 0.3}) as client:
        reply = await client.chat(USER_HELLO)
    assert reply.text == "answered in time"
    assert len(sleeps.delays) == 1
    assert len(server.requests) == 2


async def test_giving_up_names_the_endpoint_status_and_attempts(
    serve: Serve, sleeps: Sleeps
) -> None:
    server = serve([Rule(error=503, message="overloaded")])
    async with client_for(server, "judge", sleeps=sleeps, settings={"max_retries": 2}) as client:
        with pytest.raises(LLMRequestError) as caught:
            await client.chat(USER_HELLO)
    error = caught.value
    assert str(error) == (
        f"judge call to {server.base_url} (model fake-judge) failed after 3 attempts: "
        "HTTP 503: overloaded"
    )
    assert (error.endpoint, error.status, error.attempts) == (server.base_url, 503, 3)
    assert SECRET_KEY not in str(error)
    assert len(server.requests) == 3
    assert len(sleeps.delays) == 2
    assert client.usage.roles["judge"].failed_calls == 1
    assert client.usage.roles["judge"].calls == 0


async def test_an_endpoint_that_is_not_there_fails_after_retries(sleeps: Sleeps) -> None:
    server = FakeLLMServer().start()
    server.stop()  # the port is now closed
    async with client_for(server, sleeps=sleeps, settings={"max_retries": 1}) as client:
        with pytest.raises(LLMRequestError, match="connection failed") as caught:
            await client.chat(USER_HELLO)
    assert caught.value.status is None
    assert caught.value.attempts == 2


def test_backoff_grows_is_capped_and_honours_retry_after() -> None:
    policy = RetryPolicy(base_delay=1, max_delay=8, rng=random.Random(3))
    delays = [policy.delay(attempt) for attempt in range(6)]
    for attempt, delay in enumerate(delays):
        step = min(8, 2**attempt)
        assert step / 2 <= delay <= step
    assert 20 <= policy.delay(0, retry_after=20) <= 20.5
    assert policy.delay(0, retry_after=10_000) == policy.max_retry_after


def test_the_same_seed_gives_the_same_waits() -> None:
    first = RetryPolicy(rng=random.Random(5))
    second = RetryPolicy(rng=random.Random(5))
    assert [first.delay(a) for a in range(4)] == [second.delay(a) for a in range(4)]


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "Wed, 01 Jan 2025 00:00:30 GMT"}, 30.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], seconds: float | None) -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert parse_retry_after(headers, now=now) == seconds
