"""Endpoint budgets: requests and tokens per minute, shared by the roles, and 429 storms.

The rate tests run on a fake clock (the budget's sleep moves it on), against the fake server
on loopback: no real minute is waited.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from polygon_voice.llm import (
    ROLES,
    EndpointLimits,
    LLMClient,
    LLMConfigError,
    RetryPolicy,
    load_llm_config,
)
from polygon_voice.llm.budget import BURST_SECONDS, TokenBudget, estimate_tokens
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import KEY_VAR, SECRET_KEY, USER_HELLO, Sleeps, client_for, config_for

Serve = Callable[..., FakeLLMServer]
START = 1_000.0


class FakeTime:
    """A clock that stands still until the budget sleeps, which moves it on at once."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


class RecordingBudget(TokenBudget):
    """A token budget that notes when each request was let through, and with what estimate."""

    def __init__(self, rpm: int | None, tpm: int | None, time: FakeTime) -> None:
        super().__init__(rpm, tpm, clock=time, sleep=time.sleep)
        self.time = time
        self.grants: list[tuple[float, int]] = []

    async def acquire(self, tokens: int, *, waited_out: float = 0.0) -> None:
        await super().acquire(tokens, waited_out=waited_out)
        self.grants.append((self.time(), tokens))


def recording_limits(time: FakeTime) -> tuple[EndpointLimits, list[RecordingBudget]]:
    made: list[RecordingBudget] = []

    def make(rpm: int | None, tpm: int | None) -> RecordingBudget:
        made.append(RecordingBudget(rpm, tpm, time))
        return made[-1]

    return EndpointLimits(clock=time, sleep=time.sleep, budgets=make), made


def assert_rate_held(times: list[float], per_minute: int) -> None:
    """In every stretch of time, no more requests than a full bucket plus what flowed in."""
    rate, burst = per_minute / 60, per_minute / 60 * BURST_SECONDS
    for i, j in itertools.combinations(range(len(times)), 2):
        assert j - i + 1 <= burst + rate * (times[j] - times[i]) + 1e-6, (i, j, times)


async def test_rpm_holds_over_a_burst(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    time = FakeTime()
    limits, budgets = recording_limits(time)
    async with client_for(server, limits=limits, settings={"rpm": 60}) as client:
        await asyncio.gather(*[client.chat(USER_HELLO) for _ in range(30)])
    assert server.request_count == 30
    times = [at for at, _ in budgets[0].grants]
    assert_rate_held(times, 60)
    # A burst of 6 (BURST_SECONDS of 1 a second) at once, then one a second: not slower.
    assert times[5] == START
    assert times[-1] == pytest.approx(START + 24)


async def test_tpm_holds_with_the_estimate_corrected_by_the_usage(serve: Serve) -> None:
    used = 500
    server = serve([Rule(text="ok", tokens_in=400, tokens_out=100)])
    time = FakeTime()
    limits, budgets = recording_limits(time)
    settings = {"tpm": 3000, "max_tokens": 100}
    async with client_for(server, limits=limits, settings=settings) as client:
        for _ in range(6):
            await client.chat(USER_HELLO)
    grants = budgets[0].grants
    estimate = grants[0][1]
    assert estimate < used  # the estimate alone would let far more through
    elapsed = grants[-1][0] - grants[0][0]
    rate, burst = 3000 / 60, 3000 / 60 * BURST_SECONDS
    # Every earlier request counted at its real usage, the last one at its estimate.
    assert 5 * used + estimate <= burst + rate * elapsed + 1e-6
    # And no slower than that: one request's 500 tokens every 10 s once the burst is spent.
    assert grants[-1][0] - grants[-2][0] == pytest.approx(used / rate)


async def test_retry_after_pauses_the_whole_endpoint(serve: Serve) -> None:
    server = serve([Rule(role="caller", call=1, error=429, retry_after=30), Rule(text="ok")])
    time = FakeTime()
    limits, budgets = recording_limits(time)
    sleeps = Sleeps()
    caller = client_for(server, "caller", limits=limits, sleeps=sleeps)
    judge = client_for(server, "judge", limits=limits)
    async with caller, judge:
        assert (await caller.chat(USER_HELLO)).text == "ok"
        # The caller's own retry waited out its Retry-After (and no more than that twice).
        assert len(sleeps.delays) == 1
        assert sleeps.delays[0] >= 30
        assert time() == START
        # The judge, on the same endpoint, is held until the pause ends.
        assert (await judge.chat(USER_HELLO)).text == "ok"
    assert time() == pytest.approx(START + 30)
    assert len(budgets) == 1  # one budget for both roles


class RealSleeps(Sleeps):
    """Records each retry wait and really waits it."""

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        await asyncio.sleep(seconds)


async def test_a_429_storm_loses_no_call_and_retries_are_spread(serve: Serve) -> None:
    storm = 40
    # A Retry-After longer than the first two backoff steps: the wait is the server's.
    server = serve([Rule(error=429, retry_after=1, times=storm), Rule(text="ok")])
    limits, sleeps = EndpointLimits(), RealSleeps()
    # Each client draws its own jitter, as separate processes' clients do.
    clients = [
        LLMClient(
            config_for(server, role, max_retries=8),
            retry=RetryPolicy(rng=random.Random(seed), sleep=sleeps),
            limits=limits,
            env={KEY_VAR: SECRET_KEY},
        )
        for seed, role in enumerate(ROLES)
    ]
    calls = [clients[n % 3].chat(USER_HELLO) for n in range(30)]
    replies = await asyncio.wait_for(asyncio.gather(*calls), timeout=60)
    for client in clients:
        await client.aclose()
    assert [reply.text for reply in replies] == ["ok"] * 30
    assert server.request_count == 30 + storm
    assert len(sleeps.delays) == storm
    assert min(sleeps.delays) >= 1  # never before the server's Retry-After
    # Jittered: the waits differ, so the calls do not come back at one instant.
    assert len({round(delay, 3) for delay in sleeps.delays}) > storm // 2
    assert max(sleeps.delays) - min(sleeps.delays) > 0.05


async def test_roles_on_one_endpoint_share_one_budget_the_lowest_limit_holding(
    serve: Serve,
) -> None:
    server, other = serve([Rule(text="ok")]), serve([Rule(text="ok")])
    time = FakeTime()
    limits, budgets = recording_limits(time)
    caller = client_for(server, "caller", limits=limits, settings={"rpm": 120})
    judge = client_for(server, "judge", limits=limits)
    agent = client_for(server, "agent", limits=limits, settings={"rpm": 60})
    elsewhere = client_for(other, "judge", limits=limits, settings={"rpm": 600})
    async with caller, judge, agent, elsewhere:
        await asyncio.gather(*[c.chat(USER_HELLO) for c in (caller, judge, agent) * 8])
        await elsewhere.chat(USER_HELLO)
    shared, own = budgets
    assert (shared.rpm, own.rpm) == (60, 600)
    assert len(shared.grants) == 24
    assert len(own.grants) == 1
    assert_rate_held([at for at, _ in shared.grants], 60)


async def test_a_pause_is_extended_never_shortened_and_ends() -> None:
    time = FakeTime()
    budget = TokenBudget(clock=time, sleep=time.sleep)
    await budget.acquire(10)  # no limits, no pause: at once
    assert time() == START
    end = budget.pause(5)
    assert budget.pause(2) == end == START + 5
    await budget.acquire(10)
    assert time() == pytest.approx(START + 5)
    # A caller that waited out this very pause itself is not held again.
    budget.pause(5)
    before = time()
    await budget.acquire(10, waited_out=budget.paused_until)
    assert time() == before


def test_the_estimate_is_a_quarter_of_the_body_plus_the_answer_tokens() -> None:
    assert estimate_tokens(b"x" * 400, 100) == 200
    assert estimate_tokens(b"x" * 401, None) == 100


def test_the_documented_example_loads(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text()
    [example] = re.findall(r"```yaml\n(# polygon.yaml: one hosted API.*?)```", doc, re.DOTALL)
    path = tmp_path / "polygon.yaml"
    path.write_text(example)
    settings = load_llm_config(path, {})
    assert {(settings.role(r).rpm, settings.role(r).tpm) for r in ROLES} == {(500, 200_000)}


def test_rpm_and_tpm_from_the_file_and_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text("llm:\n  rpm: 500\n  tpm: 90000\n  judge:\n    rpm: 50\n")
    settings = load_llm_config(path, {"POLYGON_AGENT_TPM": "1000"})
    assert (settings.role("caller").rpm, settings.role("caller").tpm) == (500, 90000)
    assert settings.role("judge").rpm == 50
    assert settings.role("agent").tpm == 1000
    assert load_llm_config(None, {}).role("caller").rpm is None


@pytest.mark.parametrize(
    ("text", "env", "named"),
    [
        ("llm:\n  rpm: lots\n", {}, r"polygon.yaml: llm.rpm \(role caller\): Input should be"),
        ("llm:\n  judge: {tpm: 0}\n", {}, r"llm.judge.tpm \(role judge\): .*greater than or"),
        ("llm: {}\n", {"POLYGON_JUDGE_RPM": "-5"}, r"variable POLYGON_JUDGE_RPM \(role judge\)"),
    ],
    ids=["not-a-number", "zero", "negative-variable"],
)
def test_bad_limits_are_named(tmp_path: Path, text: str, env: dict[str, str], named: str) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text(text)
    with pytest.raises(LLMConfigError, match=named):
        load_llm_config(path, env)
