"""Compliance and its Wilson 95 % interval (PROBE-1, -2, -4).

Compliance = right-thing answers / applicable answers; not-applicable answers leave the
denominator. The Wilson score interval is used instead of p ± z·sqrt(p(1-p)/n) because the
latter collapses to a zero-width interval at 0 of n and n of n and spills outside 0..1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from polygon_voice.model.probes import ProbeAnswer

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of successes/n; None when n is 0 (nothing to estimate)."""
    if n <= 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, got {successes}")
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Compliance:
    """The tally of one probe (one wording) over some conversations."""

    yes: int = 0
    no: int = 0
    na: int = 0
    right: int = 0

    @property
    def applicable(self) -> int:
        """Answers that count: yes and no, never not-applicable (PROBE-1)."""
        return self.yes + self.no

    @property
    def rate(self) -> float | None:
        """Right-thing answers over applicable ones; None when none applied."""
        return self.right / self.applicable if self.applicable else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson 95 % interval of the rate; None when none applied."""
        return wilson_interval(self.right, self.applicable)

    def text(self) -> str:
        """E.g. `75 % (30-95 %, n=4)`; `n/a (n=0)` when no conversation was applicable."""
        rate, interval = self.rate, self.interval
        if rate is None or interval is None:
            return "n/a (n=0)"
        low, high = interval
        return f"{rate * 100:.0f} % ({low * 100:.0f}-{high * 100:.0f} %, n={self.applicable})"


def tally(answers: Iterable[ProbeAnswer]) -> Compliance:
    """The compliance of a set of answers to one probe wording."""
    yes = no = na = right = 0
    for answer in answers:
        if answer.answer == "not_applicable":
            na += 1
            continue
        yes += answer.answer == "yes"
        no += answer.answer == "no"
        right += bool(answer.complied)
    return Compliance(yes, no, na, right)
