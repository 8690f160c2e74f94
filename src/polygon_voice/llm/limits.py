"""One concurrency gate per endpoint, shared by every client that talks to it.

A gate lets through at most `limit` requests at once: the configured `max_concurrency`, or
fewer when the server is known to have fewer slots (`EndpointLimits.set_slots`, for whatever
finds that out). After a request to the endpoint was abandoned without its answer (a
timeout), the server may still be computing it, so the gate treats the endpoint as busy for
a while and then lets one request through at a time until an answer comes back; each answer
doubles what it lets through again, up to the limit (docs/llm.md, "Retries, timeouts and
limits").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from polygon_voice.llm.budget import EndpointBudget, Sleeper, TokenBudget

log = logging.getLogger("polygon_voice.llm")
Clock = Callable[[], float]
# Makes an endpoint's budget from its rpm and tpm: another executor may share one across
# processes; by default a TokenBudget of this process.
BudgetFactory = Callable[[int | None, int | None], EndpointBudget]
# The same, told the endpoint's base URL (`EndpointLimits.use_budgets`).
KeyedBudgetFactory = Callable[[str, int | None, int | None], EndpointBudget]


@runtime_checkable
class Tightening(Protocol):
    """A budget that takes a later client's lower limits (a TokenBudget, a shared one)."""

    def tighten(self, rpm: int | None, tpm: int | None) -> None:
        """Lower the limits where the given ones are lower."""


_RECHECK_SECONDS = 1.0


class EndpointGate:
    """The requests one endpoint gets at once: `async with gate:` around each attempt."""

    def __init__(self, limit: int, *, clock: Clock = time.monotonic) -> None:
        self.limit = max(1, limit)
        # What is let through now: the limit, or less since a timeout (see `abandoned`).
        self.allowed = self.limit
        self.in_use = 0
        self._busy_until = 0.0
        self._clock = clock
        self._changed = asyncio.Condition()
        self._waiting = 0

    async def __aenter__(self) -> EndpointGate:
        # The fast path, taken by nearly every request: an open gate with nobody waiting is
        # entered without the condition's lock (one event loop thread: nothing runs between
        # the check and the count), and a release wakes nobody when nobody waits.
        if self._waiting == 0 and self._open():
            self.in_use += 1
            return self
        async with self._changed:
            self._waiting += 1
            try:
                while not self._open():
                    await self._wait_for_change()
            finally:
                self._waiting -= 1
            self.in_use += 1
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.in_use -= 1  # before any await: a release cancelled midway never leaks the slot
        if self._waiting:
            await self._wake()

    @property
    def busy_for(self) -> float:
        """Seconds until the server is expected to be done with an abandoned request."""
        return max(0.0, self._busy_until - self._clock())

    def lower_limit(self, limit: int) -> None:
        """A lower limit (the server's slots became known); what is let through follows it."""
        self.limit = max(1, min(self.limit, limit))
        self.allowed = min(self.allowed, self.limit)

    def abandoned(self, busy_for: float) -> None:
        """A request went without its answer: one at a time from now, none for `busy_for` s."""
        self.allowed = 1
        self._busy_until = max(self._busy_until, self._clock() + busy_for)

    async def answered(self) -> None:
        """The endpoint answered (an answer or an error status): let twice as many through."""
        if self.allowed < self.limit:
            self.allowed = min(self.limit, self.allowed * 2)
            if self._waiting:
                await self._wake()

    def _open(self) -> bool:
        # No clock read until a timeout has made the endpoint busy once.
        return self.in_use < self.allowed and (not self._busy_until or self.busy_for == 0.0)

    async def _wait_for_change(self) -> None:
        # A change is a release or a recovery; the end of a busy spell is waited for by time.
        # Waiters look again now and then all the same: a wake-up lost to a cancellation
        # must not leave a request waiting at an open gate.
        wait = _RECHECK_SECONDS
        if self.in_use < self.allowed:
            wait = min(wait, self.busy_for)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout=wait)

    async def _wake(self) -> None:
        async with self._changed:
            self._changed.notify_all()


class EndpointLimits:
    """An `EndpointGate` and an `EndpointBudget` per (event loop, base URL).

    The first client to use an endpoint in a loop sets its limit; a later client asking for
    another limit shares the existing one (and a debug line says so). A number of slots set
    for an endpoint caps its limit in every loop. Gates belong to one event loop, hence one
    table per loop, dropped with the loop.
    """

    def __init__(
        self,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleeper = asyncio.sleep,
        budgets: BudgetFactory | None = None,
    ) -> None:
        self._by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, EndpointGate]
        ] = weakref.WeakKeyDictionary()
        self._budgets_by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, EndpointBudget]
        ] = weakref.WeakKeyDictionary()
        self._slots: dict[str, int] = {}
        self._clock = clock
        self._sleep = sleep
        self._make_budget: KeyedBudgetFactory = (
            self._token_budget if budgets is None else lambda _, rpm, tpm: budgets(rpm, tpm)
        )

    def gate(self, base_url: str, limit: int) -> EndpointGate:
        """The gate of `base_url` in the running loop."""
        table = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        key = _key(base_url)
        slots = self._slots.get(key)
        gate = table.get(key)
        if gate is None:
            wanted = limit if slots is None else min(limit, slots)
            gate = table[key] = EndpointGate(wanted, clock=self._clock)
        elif gate.limit != limit and slots is None:
            log.debug("endpoint %s keeps its limit %s (asked: %s)", key, gate.limit, limit)
        return gate

    def budget(self, base_url: str, rpm: int | None, tpm: int | None) -> EndpointBudget:
        """The requests/tokens-per-minute budget of `base_url` in the running loop.

        Shared by every client of the endpoint: the lowest limit any of them gives holds
        (None: no limit). Every endpoint has one, limits or not: a 429's Retry-After pauses
        it for all its clients.
        """
        table = self._budgets_by_loop.setdefault(asyncio.get_running_loop(), {})
        key = _key(base_url)
        budget = table.get(key)
        if budget is None:
            budget = table[key] = self._make_budget(key, rpm, tpm)
        elif isinstance(budget, TokenBudget | Tightening):
            budget.tighten(rpm, tpm)
        return budget

    def use_budgets(self, budgets: KeyedBudgetFactory | None) -> None:
        """Make every endpoint's budget from now on with `budgets(base_url, rpm, tpm)` (None:
        a TokenBudget of this process); budgets made before are dropped. For an executor
        whose workers share one budget per endpoint (llm/ray_budget.py)."""
        self._make_budget = budgets or self._token_budget
        self._budgets_by_loop.clear()

    def _token_budget(self, _: str, rpm: int | None, tpm: int | None) -> EndpointBudget:
        return TokenBudget(rpm, tpm, clock=self._clock, sleep=self._sleep)

    def set_slots(self, base_url: str, slots: int) -> None:
        """The server at `base_url` handles `slots` requests at once: never send it more."""
        key = _key(base_url)
        self._slots[key] = max(1, slots)
        for table in self._by_loop.values():
            gate = table.get(key)
            if gate is not None:
                gate.lower_limit(slots)

    def slots(self, base_url: str) -> int | None:
        """The slots set for `base_url`, if any."""
        return self._slots.get(_key(base_url))

    def forget_slots(self) -> None:
        """Forget every number of slots set (for tests: a new server may reuse a port).
        Gates already made keep their limit; gates made from now on take the configured one."""
        self._slots.clear()


def _key(base_url: str) -> str:
    return base_url.rstrip("/")


# The process-wide table that clients use unless given their own. Empty until first used.
SHARED_LIMITS = EndpointLimits()
