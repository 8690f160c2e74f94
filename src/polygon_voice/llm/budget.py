"""Requests-per-minute and tokens-per-minute budgets per endpoint, shared by its clients.

Every attempt to an endpoint first takes one request and an estimate of its tokens from the
endpoint's budget (`acquire`), waiting while either bucket is short; once the answer is in,
the estimate is corrected with the tokens the server reports (`settle`). A 429's
`Retry-After` pauses the whole endpoint (`pause`), not only the request that got it.

Each bucket holds `BURST_SECONDS` worth of its per-minute rate and refills continuously, so
a run starts with a small burst and then keeps to the rate (docs/llm.md, "Endpoint
budgets"). A request larger than a whole bucket is let through once the bucket is full and
leaves it in debt, which later requests wait out: the rate holds for any request size.

`EndpointBudget` is the interface the client uses; `TokenBudget` is the in-process one (one
event loop). An executor that spreads a run over processes can give the clients another
implementation that shares one budget between them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

Clock = Callable[[], float]
Sleeper = Callable[[float], Awaitable[None]]
# Seconds of the per-minute rate a full bucket holds: a burst of a tenth of the limit.
BURST_SECONDS = 6.0
# The token estimate of a request before its answer: characters of the body per token.
CHARS_PER_TOKEN = 4
# The longest a waiting taker sleeps before it looks at the buckets again.
_LOOK_AGAIN_SECONDS = 1.0
# Waits shorter than this are none: a float rounding must not make a taker wait for ever.
_NO_WAIT = 1e-6


class EndpointBudget(Protocol):
    """What the client needs of an endpoint's budget."""

    @property
    def counts_tokens(self) -> bool:
        """Whether it limits tokens (else the client does not read an answer's usage)."""

    async def acquire(self, tokens: int, *, waited_out: float = 0.0) -> None:
        """Wait until one more request with about `tokens` tokens fits, then take it.

        `waited_out`: what `pause` returned to this caller, whose own retry wait has honoured
        that pause already; a pause that was extended since is still waited for.
        """

    def settle(self, estimated: int, actual: int) -> None:
        """A request estimated at `estimated` tokens used `actual`: debit the difference."""

    def pause(self, seconds: float) -> float:
        """The endpoint asked for no request for `seconds` (a 429's Retry-After); returns
        the pause's end, for the caller's `acquire(waited_out=...)`."""


def estimate_tokens(payload: bytes, max_tokens: int | None) -> int:
    """Tokens a request is counted at before its answer: its body's characters / 4 (the
    common rule of thumb for English text; JSON punctuation makes it an overestimate), plus
    the answer tokens it allows (`max_tokens`, when sent)."""
    return len(payload) // CHARS_PER_TOKEN + (max_tokens or 0)


class Bucket:
    """One token bucket: `per_minute` units, refilled continuously, BURST_SECONDS deep."""

    def __init__(self, per_minute: int, now: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate * BURST_SECONDS)
        self.level = self.capacity
        self._updated = now

    def refill(self, now: float) -> None:
        """Add what flowed in since the last look, up to the capacity."""
        self.level = min(self.capacity, self.level + (now - self._updated) * self.rate)
        self._updated = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` may be taken (no more than a full bucket is waited for)."""
        needed = min(amount, self.capacity) - self.level
        return max(0.0, needed / self.rate)

    def take(self, amount: float) -> None:
        """Take `amount` (the level may go below zero: a debt later takers wait out)."""
        self.level -= amount


class TokenBudget:
    """An endpoint's requests and tokens per minute, in one process (`None`: no limit).

    Takers are served one at a time in the order they came (a lock), so a large request is
    not starved by small ones. `clock` and `sleep` are injectable so tests need no real
    minutes.
    """

    def __init__(
        self,
        rpm: int | None = None,
        tpm: int | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleeper = asyncio.sleep,
    ) -> None:
        now = clock()
        self.rpm, self.tpm = rpm, tpm
        self.requests = Bucket(rpm, now) if rpm is not None else None
        self.tokens = Bucket(tpm, now) if tpm is not None else None
        self.paused_until = 0.0
        self._clock = clock
        self._sleep = sleep
        self._turn = asyncio.Lock()

    @property
    def counts_tokens(self) -> bool:
        """Whether a tokens-per-minute limit is set."""
        return self.tokens is not None

    def tighten(self, rpm: int | None, tpm: int | None) -> None:
        """Lower the limits to `rpm` / `tpm` where those are lower (None: no change)."""
        # Called before every request: no clock read unless a limit is lowered.
        if rpm is not None and (self.rpm is None or rpm < self.rpm):
            self.rpm, self.requests = rpm, _lowered(self.requests, rpm, self._clock())
        if tpm is not None and (self.tpm is None or tpm < self.tpm):
            self.tpm, self.tokens = tpm, _lowered(self.tokens, tpm, self._clock())

    async def acquire(self, tokens: int, *, waited_out: float = 0.0) -> None:
        """Wait until one more request of about `tokens` tokens fits, then take it (a pause
        ending at `waited_out` or before is not waited for: the caller has waited it out)."""
        if self.requests is None and self.tokens is None and not self._paused(waited_out):
            return  # no limits and no pause to honour: nothing to wait for
        async with self._turn:
            while (wait := self._wait_for(tokens, waited_out)) > _NO_WAIT:
                # In steps: a credit (`settle`) meanwhile is seen soon.
                await self._sleep(min(wait, _LOOK_AGAIN_SECONDS))
            if self.requests is not None:
                self.requests.take(1)
            if self.tokens is not None:
                self.tokens.take(tokens)

    def take_now(self, tokens: int, *, waited_out: float = 0.0) -> float:
        """Take one request of about `tokens` tokens if it fits now and return 0, else the
        seconds to wait before asking again: `acquire` for a budget that other processes
        ask from afar (llm/ray_budget.py), where no lock can keep the takers in order."""
        wait = self._wait_for(tokens, waited_out)
        if wait > _NO_WAIT:
            return wait
        if self.requests is not None:
            self.requests.take(1)
        if self.tokens is not None:
            self.tokens.take(tokens)
        return 0.0

    def settle(self, estimated: int, actual: int) -> None:
        """Correct a request's token estimate with what it used (a credit when less)."""
        if self.tokens is not None and actual != estimated:
            self.tokens.refill(self._clock())
            self.tokens.take(actual - estimated)
            self.tokens.level = min(self.tokens.capacity, self.tokens.level)

    def pause(self, seconds: float) -> float:
        """No request from now for `seconds` (a later pause may extend it, never shorten);
        returns when the pause ends."""
        self.paused_until = max(self.paused_until, self._clock() + max(0.0, seconds))
        return self.paused_until

    @property
    def paused_for(self) -> float:
        """Seconds left of a pause (0 when not paused)."""
        return max(0.0, self.paused_until - self._clock()) if self.paused_until else 0.0

    def _paused(self, waited_out: float) -> bool:
        # No clock read until a pause this caller has not waited out is set.
        return self.paused_until > waited_out and self.paused_until > self._clock()

    def _wait_for(self, tokens: int, waited_out: float) -> float:
        now = self._clock()
        wait = max(0.0, self.paused_until - now) if self.paused_until > waited_out else 0.0
        for bucket, amount in ((self.requests, 1), (self.tokens, tokens)):
            if bucket is not None:
                bucket.refill(now)
                wait = max(wait, bucket.wait_for(amount))
        return wait


def _lowered(bucket: Bucket | None, per_minute: int, now: float) -> Bucket:
    """A bucket of the lower rate with what the old one had given out already taken."""
    lowered = Bucket(per_minute, now)
    if bucket is not None:
        bucket.refill(now)
        lowered.take(bucket.capacity - bucket.level)
    return lowered
