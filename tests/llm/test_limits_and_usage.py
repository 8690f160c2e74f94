"""The per-endpoint concurrency limit and the usage and cost accounting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from polygon_voice.llm import EndpointLimits, Usage
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import USER_HELLO, client_for

Serve = Callable[..., FakeLLMServer]


async def test_the_limit_holds_across_clients_of_one_endpoint(serve: Serve) -> None:
    server = serve([Rule(text="ok")], latency=0.05)
    limits = EndpointLimits()
    settings = {"max_concurrency": 3}
    caller = client_for(server, "caller", limits=limits, settings=settings)
    judge = client_for(server, "judge", limits=limits, settings=settings)
    async with caller, judge:
        calls = [c.chat(USER_HELLO) for c in (caller, judge) for _ in range(10)]
        await asyncio.gather(*calls)
    assert server.request_count == 20
    assert server.max_in_flight == 3


async def test_another_endpoint_has_its_own_limit(serve: Serve) -> None:
    first, second = serve([Rule(text="a")], latency=0.05), serve([Rule(text="b")], latency=0.05)
    limits = EndpointLimits()
    one = client_for(first, limits=limits, settings={"max_concurrency": 2})
    two = client_for(second, limits=limits, settings={"max_concurrency": 5})
    async with one, two:
        await asyncio.gather(*[c.chat(USER_HELLO) for c in (one, two) for _ in range(10)])
    assert (first.max_in_flight, second.max_in_flight) == (2, 5)


async def test_tokens_calls_and_cost_per_role(serve: Serve) -> None:
    server = serve(
        [
            Rule(role="caller", text="hi", tokens_in=1000, tokens_out=200),
            Rule(role="judge", json={}, tokens_in=3000, tokens_out=500),
        ]
    )
    usage = Usage()
    prices = {"price_in_per_1k": 0.5, "price_out_per_1k": 2.0}
    async with (
        client_for(server, "caller", usage=usage, settings=prices) as caller,
        client_for(server, "judge", usage=usage, settings={"price_in_per_1k": 1.0}) as judge,
    ):
        await caller.chat(USER_HELLO)
        await caller.chat(USER_HELLO)
        await judge.chat(USER_HELLO, response_schema={"type": "object"})
    report = usage.to_dict()
    assert report["caller"] == {
        "calls": 2,
        "cached_calls": 0,
        "retries": 0,
        "failed_calls": 0,
        "tokens_in": 2000,
        "tokens_out": 400,
        "cost": pytest.approx(2 * (0.5 + 0.4)),
    }
    assert report["judge"]["cost"] == pytest.approx(3.0)
    assert report["agent"]["calls"] == 0
    assert report["total"]["tokens_in"] == 5000
    assert report["total"]["cost"] == pytest.approx(4.8)
