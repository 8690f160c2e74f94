"""Tool latency on the virtual clock (TOOL-2, TOOL-4): seconds as floats, never a real sleep.

A fixed latency is used as is. `UniformLatency` and `LognormalLatency` draw from
``rng_for(*seed_parts, "latency", tool, number)``: one private stream per call, so the same
conversation seed gives the same latencies in any process, whatever else was drawn before.
The log-normal draw is ``median * exp(sigma * N(0, 1))``, so `median` is its median.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from polygon_voice.model.tools import LatencySpec, UniformLatency
from polygon_voice.seeding import rng_for


def sample_latency(
    spec: LatencySpec, seed_parts: Sequence[object], tool: str, number: int
) -> float:
    """The latency in seconds of call `number` (1-based) of `tool`."""
    if isinstance(spec, int | float):
        return float(spec)
    rng = rng_for(*seed_parts, "latency", tool, number)
    if isinstance(spec, UniformLatency):
        return rng.uniform(spec.low, spec.high)
    return spec.median * math.exp(spec.sigma * rng.gauss(0.0, 1.0))
