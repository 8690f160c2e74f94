"""Latency on the virtual clock: fixed, uniform and log-normal, seeded per call (TOOL-2)."""

from __future__ import annotations

import statistics

from polygon_voice.model import LognormalLatency, ToolResult, UniformLatency
from polygon_voice.tools import sample_latency
from tests.tools.helpers import drain, runtime, send, spec

UNIFORM = UniformLatency(distribution="uniform", low=0.5, high=2.5)
LOGNORMAL = LognormalLatency(distribution="lognormal", median=0.8, sigma=0.6)


def draws(spec_: UniformLatency | LognormalLatency, seed: tuple[object, ...]) -> list[float]:
    return [sample_latency(spec_, seed, "crm", number) for number in range(1, 51)]


def test_fixed_latency_is_used_as_is() -> None:
    assert sample_latency(0.3, (1,), "crm", 1) == 0.3
    rt = runtime({"t": spec({"kind": "fixed"}, latency=2.5)})
    send(rt, "t", at=10.0)
    [(at, _)] = drain(rt)
    assert at == 12.5


def test_uniform_latency_is_in_range_and_seeded() -> None:
    first = draws(UNIFORM, (1, "conv"))
    assert all(0.5 <= value <= 2.5 for value in first)
    assert len(set(first)) == len(first)
    assert draws(UNIFORM, (1, "conv")) == first
    assert draws(UNIFORM, (2, "conv")) != first
    assert draws(UNIFORM, (1, "other")) != first


def test_lognormal_latency_is_seeded_and_centred_on_its_median() -> None:
    first = draws(LOGNORMAL, (1, "conv"))
    assert draws(LOGNORMAL, (1, "conv")) == first
    assert draws(LOGNORMAL, (2, "conv")) != first
    many = [sample_latency(LOGNORMAL, (3,), "crm", n) for n in range(1, 4001)]
    assert min(many) > 0
    assert abs(statistics.median(many) - 0.8) < 0.05


def test_latency_depends_on_the_tool_name() -> None:
    assert sample_latency(UNIFORM, (1,), "crm", 1) != sample_latency(UNIFORM, (1,), "cal", 1)


def test_runtime_schedules_the_seeded_latency_per_call_number() -> None:
    tool = spec({"kind": "fixed"}, latency=UNIFORM.model_dump())
    seed = (9, "conv-x")
    rt = runtime({"crm": tool}, seed=seed)
    send(rt, "crm", call_id="a", at=1.0)
    send(rt, "crm", call_id="b", at=1.0)
    expected = sorted(
        (1.0 + sample_latency(UNIFORM, seed, "crm", number), call_id)
        for number, call_id in ((1, "a"), (2, "b"))
    )
    assert rt.next_due() == expected[0][0]
    events = drain(rt)
    assert len(events) == 2
    assert [(at, e.call_id) for at, e in events if isinstance(e, ToolResult)] == expected
