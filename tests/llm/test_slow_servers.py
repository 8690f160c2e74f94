"""Slow servers: local-server defaults, env overrides, no retry onto a server still computing
the abandoned request, one at a time after a timeout, and the oldest request's wait shown."""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from polygon_voice.api.events import activity_of
from polygon_voice.llm import LLMClient, LLMConfigError, RetryPolicy, load_llm_config
from polygon_voice.llm.config import LOCAL_MAX_TOKENS, RoleConfig, is_local_url
from polygon_voice.llm.limits import EndpointGate, EndpointLimits
from polygon_voice.llm.usage import RequestActivity
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import KEY_VAR, SECRET_KEY, USER_HELLO, config_for

Serve = Callable[..., FakeLLMServer]


# -- defaults by where the server is -------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://192.168.1.20:8000/v1", True),
        ("http://10.0.0.5/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("http://host.docker.internal:8000/v1", True),
        ("http://vllm:8000/v1", True),  # a container's name in a compose network
        ("http://100.101.102.103:11434/v1", True),  # a VPN overlay's shared address space
        ("https://api.openai.com/v1", False),
        ("https://8.8.8.8/v1", False),
        ("https://my-proxy.example.com/v1", False),
    ],
)
def test_which_servers_are_local(url: str, local: bool) -> None:
    assert is_local_url(url) is local


def test_a_loopback_server_gets_the_local_defaults() -> None:
    env = {"POLYGON_BASE_URL": "http://127.0.0.1:8080/v1", "POLYGON_AGENT_MODEL": "m"}
    agent = load_llm_config(None, env).role("agent")
    assert (agent.local, agent.request_timeout, agent.turn_limit) == (True, 600.0, 1200.0)


def test_a_hosted_api_gets_the_remote_defaults() -> None:
    agent = load_llm_config(None, {"POLYGON_AGENT_MODEL": "m"}).role("agent")
    assert (agent.local, agent.request_timeout, agent.turn_limit) == (False, 60.0, 120.0)


def test_explicit_settings_and_the_profile_win(tmp_path: Path) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text(
        "llm:\n  base_url: http://127.0.0.1:8080/v1\n"
        "  caller: {timeout: 45}\n"
        "  judge: {profile: remote}\n"
        "  agent: {turn_timeout: 90, base_url: 'https://tunnel.example.com/v1', profile: local}\n"
    )
    settings = load_llm_config(path, {})
    caller, judge, agent = (settings.role(r) for r in ("caller", "judge", "agent"))
    assert (caller.request_timeout, caller.turn_limit) == (45.0, 90.0)
    assert judge.request_timeout == 60.0
    assert (agent.request_timeout, agent.turn_limit) == (600.0, 90.0)


def test_environment_timeouts_override_the_file(tmp_path: Path) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text("llm:\n  timeout: 30\n")
    env = {"POLYGON_JUDGE_TIMEOUT": "900", "POLYGON_AGENT_TURN_TIMEOUT": "1500.5"}
    settings = load_llm_config(path, env)
    assert settings.role("caller").request_timeout == 30
    assert settings.role("judge").request_timeout == 900
    assert settings.role("agent").turn_limit == 1500.5


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("POLYGON_JUDGE_TIMEOUT", "ten", "Input should be a valid number"),
        ("POLYGON_CALLER_TIMEOUT", "0", "Input should be greater than 0"),
        ("POLYGON_AGENT_TURN_TIMEOUT", "inf", "Input should be a finite number"),
        ("POLYGON_AGENT_TURN_TIMEOUT", "-5", "Input should be greater than 0"),
        ("POLYGON_JUDGE_PROFILE", "cpu", "Input should be 'auto', 'remote' or 'local'"),
        ("POLYGON_CALLER_MAX_CONCURRENCY", "0", "Input should be greater than or equal to 1"),
    ],
)
def test_a_bad_environment_value_names_the_variable(
    variable: str, value: str, message: str
) -> None:
    with pytest.raises(LLMConfigError) as caught:
        load_llm_config(None, {variable: value})
    role = variable.split("_")[1].lower()
    assert str(caught.value).startswith(f"environment variable {variable} (role {role}): ")
    assert message in str(caught.value)


# -- no second request while the server still computes the first ---------------------------


def slow_client(server: FakeLLMServer, **settings: object) -> LLMClient:
    """A client that really waits between attempts, with a backoff so short that only the
    timeout rule can keep a retry off a busy server."""
    retry = RetryPolicy(base_delay=0.01, rng=random.Random(0))
    return LLMClient(
        config_for(server, **settings),
        retry=retry,
        limits=EndpointLimits(),
        env={KEY_VAR: SECRET_KEY},
    )


async def test_a_retry_after_a_timeout_waits_for_the_abandoned_request(serve: Serve) -> None:
    # The first request is computed for 0.45 s after the client gave up at 0.3 s.
    server = serve([Rule(call=1, hang=0.45), Rule(text="answered")])
    async with slow_client(server, timeout=0.3) as client:
        started = time.monotonic()
        reply = await client.chat(USER_HELLO)
        took = time.monotonic() - started
    assert reply.text == "answered"
    assert server.request_count == 2
    assert server.max_in_flight == 1  # the retry did not pile onto the abandoned request
    assert took >= 0.6  # the timeout, then as long again for the server to finish
    assert client.activity.retries == 1


async def test_a_hosted_api_is_not_waited_for_but_gets_one_at_a_time(serve: Serve) -> None:
    # profile: remote makes the loopback fake count as a hosted API, which computes many
    # requests at once: the retry goes after the usual backoff, not after a busy spell.
    server = serve([Rule(call=1, hang=0.45), Rule(text="answered")])
    limits = EndpointLimits()
    config = config_for(server, timeout=0.3, profile="remote")
    retry = RetryPolicy(base_delay=0.01, rng=random.Random(0))
    async with LLMClient(config, retry=retry, limits=limits, env={KEY_VAR: SECRET_KEY}) as client:
        gate = limits.gate(config.base_url, config.max_concurrency)
        started = time.monotonic()
        await client.chat(USER_HELLO)
        took = time.monotonic() - started
    assert took < 0.45  # sent while the abandoned request was still being computed
    assert server.max_in_flight == 2
    assert (gate.allowed, gate.busy_for) == (2, 0.0)  # one at a time, then one answer: two


async def test_a_hanging_single_slot_server_gets_one_request_at_a_time(serve: Serve) -> None:
    server = serve([Rule(call=1, hang=0.45), Rule(text="ok", latency=0.05)])
    async with slow_client(server, timeout=0.3, max_concurrency=1) as client:
        replies = await asyncio.gather(*[client.chat(USER_HELLO) for _ in range(3)])
    assert [r.text for r in replies] == ["ok"] * 3
    assert server.request_count == 4  # three calls and one retry
    assert server.max_in_flight == 1


async def test_requests_held_back_by_the_gate_are_counted_as_waiting(serve: Serve) -> None:
    server = serve([Rule(text="ok", latency=0.2)])
    async with slow_client(server, max_concurrency=1) as client:
        asking = [asyncio.create_task(client.chat(USER_HELLO)) for _ in range(3)]
        seen: set[tuple[int, int]] = set()
        while not all(task.done() for task in asking):
            seen.add((client.activity.in_flight, client.activity.waiting))
            await asyncio.sleep(0.02)
        await asyncio.gather(*asking)
    assert (1, 2) in seen
    assert (1, 1) in seen
    assert all(in_flight <= 1 for in_flight, _ in seen)
    assert (client.activity.in_flight, client.activity.waiting) == (0, 0)
    assert "waiting" not in client.activity.summary()


async def test_a_cancelled_request_keeps_the_endpoint_busy(serve: Serve) -> None:
    # The call is cancelled (the agent's turn limit, say) while the server computes it.
    server = serve([Rule(call=1, hang=0.3), Rule(text="next")])
    async with slow_client(server, timeout=5) as client:
        asking = asyncio.create_task(client.chat(USER_HELLO))
        await asyncio.sleep(0.25)
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        assert (await client.chat(USER_HELLO)).text == "next"
    assert server.max_in_flight == 1
    assert client.activity.in_flight == 0


async def test_after_a_timeout_the_gate_lets_one_through_then_recovers() -> None:
    gate = EndpointGate(8)
    gate.abandoned(0.0)
    assert gate.allowed == 1
    entered: list[int] = []

    async def one(number: int) -> None:
        async with gate:
            entered.append(gate.in_use)
            await asyncio.sleep(0.01)

    await asyncio.gather(*[one(n) for n in range(3)])
    assert entered == [1, 1, 1]  # one at a time: no answer came back
    for expected in (2, 4, 8, 8):
        await gate.answered()
        assert gate.allowed == expected


async def test_a_busy_gate_holds_everyone_for_the_busy_spell() -> None:
    gate = EndpointGate(4)
    gate.abandoned(0.2)
    started = time.monotonic()
    async with gate:
        waited = time.monotonic() - started
    assert waited >= 0.19
    assert gate.busy_for == 0.0


async def test_cancelled_waiters_and_holders_leave_no_slot_taken() -> None:
    gate = EndpointGate(2)
    most = 0

    async def hold() -> None:
        nonlocal most
        async with gate:
            most = max(most, gate.in_use)
            await asyncio.sleep(0.02)

    tasks = [asyncio.create_task(hold()) for _ in range(12)]
    await asyncio.sleep(0.01)
    for task in tasks[::3]:  # some hold a slot, some still wait for one
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    assert (most, gate.in_use) == (2, 0)
    await asyncio.wait_for(hold(), timeout=0.5)  # the gate is open again at once


async def test_known_slots_cap_the_limit(serve: Serve) -> None:
    server = serve([Rule(text="ok", latency=0.05)])
    limits = EndpointLimits()
    limits.set_slots(server.base_url + "/", 1)  # as a capability probe would
    client = LLMClient(
        config_for(server, max_concurrency=16), limits=limits, env={KEY_VAR: SECRET_KEY}
    )
    async with client:
        await asyncio.gather(*[client.chat(USER_HELLO) for _ in range(4)])
    assert server.max_in_flight == 1
    assert limits.slots(server.base_url) == 1
    limits.forget_slots()
    assert limits.slots(server.base_url) is None


def test_the_wait_after_a_timeout_is_as_long_again_with_jitter() -> None:
    policy = RetryPolicy(rng=random.Random(1))
    waits = [policy.after_timeout(100.0) for _ in range(20)]
    assert all(100.0 <= w <= 125.0 for w in waits)
    assert len(set(waits)) == 20  # no two clients come back in step
    assert policy.after_timeout(0.01) >= 0.25  # never under the backoff


# -- the oldest request's wait -------------------------------------------------------------


async def test_the_oldest_request_in_flight_shows_its_wait(serve: Serve) -> None:
    server = serve([Rule(text="slow", latency=0.4)])
    async with slow_client(server) as client:
        asking = asyncio.create_task(client.chat(USER_HELLO))
        await asyncio.sleep(0.25)
        waited = client.activity.oldest_wait()
        counts = activity_of([client])
        await asking
    assert waited is not None
    assert 0.2 <= waited < 0.4
    assert counts.in_flight == 1
    assert counts.oldest_wait is not None
    assert client.activity.oldest_wait() is None


def test_a_long_wait_is_in_the_summary() -> None:
    now = [1000.0]
    activity = RequestActivity(clock=lambda: now[0])
    first = activity.begin()
    activity.requests = 3
    now[0] += 2
    assert activity.summary() == "1 in flight, 3 sent, 0 retried, 0 failed"  # short: not shown
    activity.begin()
    now[0] += 82
    assert activity.summary() == "2 in flight (84 s), 3 sent, 0 retried, 0 failed"
    activity.end(first)
    assert activity.summary() == "1 in flight (82 s), 3 sent, 0 retried, 0 failed"
    activity.waiting = 7
    assert activity.summary() == "1 in flight (82 s), 7 waiting, 3 sent, 0 retried, 0 failed"


def test_activity_of_takes_the_oldest_and_counts_a_shared_tally_once() -> None:
    now = [50.0]
    shared = RequestActivity(clock=lambda: now[0])
    other = RequestActivity(clock=lambda: now[0])
    shared.begin()
    now[0] += 30
    other.begin()
    now[0] += 10

    class Holder:  # a client, or an agent factory: anything with an `activity`
        def __init__(self, activity: RequestActivity) -> None:
            self.activity = activity

    # An agent factory and its model client share one tally: counted once.
    counts = activity_of([Holder(shared), Holder(shared), Holder(other), None])
    assert (counts.in_flight, counts.oldest_wait) == (2, 40.0)


def test_the_cpu_server_example_in_the_docs_gives_what_it_says(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text()
    [example] = re.findall(r"```yaml\n(# polygon.yaml: a llama.cpp server on this machine.*?)```",
                           doc, flags=re.DOTALL)  # fmt: skip
    path = tmp_path / "polygon.yaml"
    path.write_text(example)
    settings = load_llm_config(path, {})
    for role in ("caller", "judge", "agent"):
        config = settings.role(role)
        assert (config.local, config.request_timeout, config.max_concurrency) == (True, 600, 1)
        assert config.max_retries == 1
    assert settings.role("caller").turn_limit == 1200
    assert settings.role("agent").turn_limit == 900


async def test_a_local_server_gets_an_answer_cap_unless_one_is_set(
    serve: Callable[..., FakeLLMServer],
) -> None:
    # Without max_tokens llama-cpp-python generates until the context is full; a hosted API
    # keeps its own default, and a role's own setting always wins.
    server = serve([Rule(text="OK")])
    local = RoleConfig(role="judge", model="fake", base_url=server.base_url, cache=False)
    own = local.model_copy(update={"max_tokens": 40})
    remote = RoleConfig(role="judge", model="m", base_url="https://api.example.com/v1")
    for config in (local, own):
        async with LLMClient(config) as client:
            await client.chat([{"role": "user", "content": "hi"}])
    assert [r.body["max_tokens"] for r in server.requests] == [LOCAL_MAX_TOKENS, 40]
    assert (remote.answer_tokens, local.answer_tokens) == (None, LOCAL_MAX_TOKENS)
