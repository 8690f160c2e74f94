"""The mean composite of a run and its 95 % interval (CMP-1).

Student's t interval, mean ± t(0.975, n-1) · s / sqrt(n): composites per run are few
(tens of calls), where the normal approximation is too narrow. Past 30 degrees of freedom
the normal quantile is used; the difference is under 4 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from polygon_voice.probes.stats import Z95

# t(0.975, df) for df = 1..30, from standard tables.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t975(df: int) -> float:
    """The two-sided 95 % quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")
    return _T975[df - 1] if df <= len(_T975) else Z95


def mean_interval(values: Sequence[float]) -> tuple[float | None, tuple[float, float] | None]:
    """(mean, 95 % interval); the interval is None below two values (no spread to see)."""
    n = len(values)
    if n == 0:
        return None, None
    mean = sum(values) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)
