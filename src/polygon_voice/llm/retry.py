"""When and how long to wait before trying a request again."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

Sleeper = Callable[[float], Awaitable[None]]

# 408 and 409 too: OpenAI-compatible servers use them for "try again" (as the SDK itself does).
RETRYABLE_STATUSES = frozenset({408, 409, 429})


# llama-cpp-python answers a request it cannot validate with HTTP 500 and pydantic's message
# ("7 validation errors:" then one line per error): the same body is refused however often
# it is sent, so such a 500 is no server hiccup.
_VALIDATION_ERROR = re.compile(r"\A\s*\d+ validation errors?\b")


def is_retryable_status(status: int, detail: str = "") -> bool:
    """Rate limits, request timeouts, conflicts and every 5xx are worth another try, but a
    5xx whose message is a request validation error (`detail`, the server's message)."""
    if status >= 500:
        return _VALIDATION_ERROR.match(detail) is None
    return status in RETRYABLE_STATUSES


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter, never shorter than the server's `Retry-After` (and
    jittered on top of it).

    `rng` and `sleep` are injectable so tests neither wait nor depend on chance.
    """

    base_delay: float = 0.5
    max_delay: float = 30.0
    # A server asking for more than this is still obeyed, up to this many seconds per wait.
    max_retry_after: float = 300.0
    rng: random.Random = field(default_factory=random.Random)
    sleep: Sleeper = asyncio.sleep

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (0 for the first)."""
        backoff = min(self.max_delay, self.base_delay * 2.0**attempt)
        # "Equal jitter": half fixed, half random, so many clients do not retry in step.
        spread = 0.5 * backoff * self.rng.random()
        delay = 0.5 * backoff + spread
        if retry_after is not None:
            # The random half on top of the server's wait: many clients told the same
            # Retry-After (a 429 storm) must not all come back at the same instant either.
            asked = min(retry_after, self.max_retry_after)
            delay = max(delay, min(self.max_retry_after, asked + spread))
        return delay

    def after_timeout(self, abandoned_after: float) -> float:
        """How long a server may still be computing a request abandoned after that many
        seconds (a CPU server does not stop when the client goes): as long again, plus up to
        a quarter more at random so that clients do not come back in step, and never less
        than the first backoff step."""
        return max(self.delay(0), abandoned_after * (1.0 + 0.25 * self.rng.random()))


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds asked for by `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return max(0.0, millis / 1000)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if number == number and number != float("inf") else None
