"""The statistics of comparisons and repeated trials (CMP-1, SWEEP-1; docs/experiments.md).

* The mean composite of a run and its 95 % interval: Student's t interval,
  mean ± t(0.975, n-1) · s / sqrt(n): composites per run are few (tens of calls), where the
  normal approximation is too narrow. Past 30 degrees of freedom the normal quantile is used;
  the difference is under 4 %.
* A pass rate's 95 % interval: Wilson's score interval (one implementation, probes.stats).
* pass^k: the chance that k trials drawn from a scenario's n all pass, C(c, k) / C(n, k)
  over n >= k trials with c passes (the unbiased estimator tau-bench reports).
* A change between two runs: a sign-flip (paired randomisation) test of the mean
  difference, a seeded paired bootstrap interval of it, and an exact two-sided sign test of
  pass/fail flips (stdlib only: numpy is no core dependency).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from polygon_voice.probes.stats import Z95, wilson_interval

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "Z95",
    "bootstrap_mean_interval",
    "mean_interval",
    "pass_hat_k",
    "sample_stdev",
    "sign_flip_p",
    "sign_test_p",
    "t975",
    "wilson_interval",
]

# Resamples of the paired bootstrap: the 2.5th and 97.5th percentiles of 4,000 means move by
# well under a tenth of the interval's width between seeds, and 4,000 means of a few hundred
# pairs take a fraction of a second in pure Python.
BOOTSTRAP_RESAMPLES = 4000

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


def sample_stdev(values: Sequence[float]) -> float | None:
    """The sample standard deviation (n - 1 in the denominator); None below two values."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))


def pass_hat_k(n: int, c: int, k: int) -> float | None:
    """pass^k: the chance that k of n trials, drawn without replacement, all passed, given
    c of the n passed: C(c, k) / C(n, k). Unbiased for the chance that k fresh trials all
    pass. None when n < k (too few trials to say); k = 1 is the pass rate c / n."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if not 0 <= c <= n:
        raise ValueError(f"passes must be within 0..{n}, got {c}")
    if n < k:
        return None
    return math.comb(c, k) / math.comb(n, k)


def bootstrap_mean_interval(
    differences: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    confidence: float = 0.95,
) -> tuple[float, float] | None:
    """The percentile bootstrap interval of the mean of paired `differences`: resample the
    pairs with replacement `resamples` times, take each resample's mean, and read the
    (1 - confidence) / 2 and (1 + confidence) / 2 percentiles. Seeded, so the same data give
    the same interval. None below two pairs (there is no spread to resample)."""
    import random

    n = len(differences)
    if n < 2:
        return None
    rng = random.Random(seed)
    values = list(differences)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    tail = (1 - confidence) / 2
    low = means[max(0, math.floor(tail * resamples))]
    high = means[min(resamples - 1, math.ceil((1 - tail) * resamples) - 1)]
    return low, high


def sign_test_p(better: int, worse: int) -> float:
    """The exact two-sided sign test: the chance, if a flip were as likely either way, of a
    split at least as uneven as `better` against `worse` (ties left out). 1.0 with no flips."""
    n = better + worse
    if n == 0:
        return 1.0
    extreme = min(better, worse)
    tail: float = sum(math.comb(n, i) for i in range(extreme + 1)) / 2**n
    return min(1.0, 2 * tail)


# From this many differing pairs the sign-flip sum's normal approximation (mean 0, variance
# the sum of d^2) is used: no one pair can then move the sum much, and its error is far below
# the levels tested. Below it the distribution is counted exactly while that costs at most
# _EXACT_WORK partial sums built, else sampled.
_NORMAL_FROM = 50
_EXACT_WORK = 1_000_000


def sign_flip_p(
    differences: Sequence[float], *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES
) -> float:
    """The two-sided p-value of the paired sign-flip (randomisation) test of a mean
    difference of zero: if the two versions were the same, each pair's difference would be
    as likely negative as positive, so every pattern of signs is equally likely. The
    p-value is the share of the 2^n patterns whose sum is at least as far from zero as the
    one seen. Below 50 differing pairs it is exact (a convolution over the distinct partial
    sums) while that stays cheap, as for composites and 1-5 scores, else `resamples` seeded
    random patterns, (1 + hits) / (1 + resamples); from 50 on, the normal approximation of
    the same distribution. 1.0 when every difference is zero."""
    values = [d for d in differences if d != 0]
    if not values:
        return 1.0
    seen = abs(sum(values))
    observed = seen - 1e-9 * (1 + seen)
    if len(values) >= _NORMAL_FROM:
        from statistics import NormalDist

        z = seen / math.sqrt(sum(v * v for v in values))
        return min(1.0, 2 * (1 - NormalDist().cdf(z)))
    exact = _exact_sign_flip(values, observed)
    if exact is not None:
        return exact
    import random

    rng = random.Random(seed)
    hits = 0
    for _ in range(resamples):
        bits = rng.getrandbits(len(values))
        total = sum(v if bits >> i & 1 else -v for i, v in enumerate(values))
        hits += abs(total) >= observed
    return (1 + hits) / (1 + resamples)


def _exact_sign_flip(values: Sequence[float], observed: float) -> float | None:
    """The exact p-value, or None when counting it would cost too much."""
    sums: dict[float, int] = {0.0: 1}
    work = 0
    for value in values:
        work += 2 * len(sums)
        if work > _EXACT_WORK:
            return None
        grown: dict[float, int] = {}
        for total, ways in sums.items():
            for signed in (total + value, total - value):
                key = round(signed, 6)
                grown[key] = grown.get(key, 0) + ways
        sums = grown
    hits = sum(ways for total, ways in sums.items() if abs(total) >= observed)
    patterns: int = 2 ** len(values)
    return min(1.0, hits / patterns)
