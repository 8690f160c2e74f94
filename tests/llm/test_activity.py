"""`client.activity`: live request counters for progress bars, against the real fake server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from polygon_voice.llm import LLMConfigError, LLMFormatError, LLMRequestError, ResponseCache
from polygon_voice.llm.usage import RequestActivity
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import USER_HELLO, Sleeps, client_for

Serve = Callable[..., FakeLLMServer]


async def test_a_slow_answer_is_in_flight_until_it_arrives(serve: Serve) -> None:
    server = serve([Rule(text="slowly", latency=0.6)])
    async with client_for(server) as client:
        asking = [asyncio.create_task(client.chat(USER_HELLO)) for _ in range(3)]
        seen = 0
        while not all(task.done() for task in asking):
            seen = max(seen, client.activity.in_flight)
            await asyncio.sleep(0.02)
        await asyncio.gather(*asking)
    assert seen == 3
    assert client.activity == RequestActivity(in_flight=0, requests=3, retries=0, failures=0)


async def test_a_500_then_200_counts_one_retry_and_two_requests(
    serve: Serve, sleeps: Sleeps
) -> None:
    server = serve([Rule(call=1, error=500), Rule(text="recovered")])
    async with client_for(server, sleeps=sleeps) as client:
        assert (await client.chat(USER_HELLO)).text == "recovered"
    assert client.activity == RequestActivity(in_flight=0, requests=2, retries=1, failures=0)
    assert client.activity.summary() == "0 in flight, 2 sent, 1 retried, 0 failed"


async def test_failures_count_calls_that_ended_in_an_error(serve: Serve, sleeps: Sleeps) -> None:
    server = serve([Rule(contains="unreadable", raw="not json"), Rule(error=503)])
    async with client_for(server, sleeps=sleeps, settings={"max_retries": 1}) as client:
        with pytest.raises(LLMRequestError):
            await client.chat(USER_HELLO)
        with pytest.raises(LLMFormatError):
            await client.chat([{"role": "user", "content": "unreadable"}])
    # Two attempts of the first call, one of the second; both calls failed.
    assert client.activity == RequestActivity(in_flight=0, requests=3, retries=1, failures=2)


async def test_a_missing_key_fails_without_a_request(serve: Serve) -> None:
    server = serve([Rule(text="never asked")])
    async with client_for(server, env={}) as client:
        with pytest.raises(LLMConfigError, match="is not set"):
            await client.chat(USER_HELLO)
    assert client.activity == RequestActivity(failures=1)
    assert server.request_count == 0


async def test_a_cached_answer_sends_no_request(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="once")])
    cache = ResponseCache(tmp_path)
    async with client_for(server, cache=cache) as first:
        await first.chat(USER_HELLO)
    async with client_for(server, cache=cache) as again:
        assert (await again.chat(USER_HELLO)).cached
    assert again.activity == RequestActivity()
    assert first.activity.requests == 1


async def test_clients_can_share_one_tally(serve: Serve) -> None:
    server = serve([Rule(text="hi")])
    shared = RequestActivity()
    async with (
        client_for(server, "caller", activity=shared) as caller,
        client_for(server, "judge", activity=shared) as judge,
    ):
        await asyncio.gather(caller.chat(USER_HELLO), judge.chat(USER_HELLO))
    assert caller.activity is judge.activity is shared
    assert shared.requests == 2
