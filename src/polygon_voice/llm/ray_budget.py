"""Endpoint budgets shared by every process of a Ray run (`polygon run --executor ray`).

One actor (`SharedBudgets`) holds a `TokenBudget` per endpoint; each worker's clients get a
`RayBudget` for the endpoint from `EndpointLimits.use_budgets(shared_budgets(actor))`, which
asks the actor whether a request fits now and, if not, how long to wait. So the rpm and tpm
of an endpoint hold for the run as a whole, whatever the number of workers, and a 429's
Retry-After pauses the endpoint for all of them.

The actor's buckets run on the wall clock (`time.time`), not a process's monotonic clock:
a pause's end travels between processes (and machines, whose clocks NTP keeps within
milliseconds). A taker asks again after at most a second, so a credit or a pause set by
another worker meanwhile is seen soon; takers are not served strictly in the order they came
(each asks on its own), which a single process's budget does.

Ray is imported by the executor, never here: the actor is a plain class until the executor
wraps it with `ray.remote`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from polygon_voice.llm.budget import EndpointBudget, TokenBudget
from polygon_voice.llm.limits import KeyedBudgetFactory

# The longest a waiting taker sleeps before it asks the shared budget again.
LOOK_AGAIN_SECONDS = 1.0


class SharedBudgets:
    """The budgets of every endpoint of a run, in one place (the body of a Ray actor)."""

    def __init__(self) -> None:
        self._budgets: dict[str, TokenBudget] = {}
        self.granted: dict[str, int] = {}  # requests let through per endpoint (for tests)

    def tighten(self, key: str, rpm: int | None, tpm: int | None) -> None:
        """The budget of `key`, made on first use; the lowest limit any client gives holds."""
        budget = self._budgets.get(key)
        if budget is None:
            self._budgets[key] = TokenBudget(rpm, tpm, clock=time.time)
        else:
            budget.tighten(rpm, tpm)

    def try_take(self, key: str, tokens: int, waited_out: float) -> float:
        """Take one request of `tokens` now and return 0, or return the seconds to wait."""
        wait = self._budgets[key].take_now(tokens, waited_out=waited_out)
        if wait == 0.0:
            self.granted[key] = self.granted.get(key, 0) + 1
        return wait

    def settle(self, key: str, estimated: int, actual: int) -> None:
        """Correct a request's token estimate (see TokenBudget.settle)."""
        self._budgets[key].settle(estimated, actual)

    def pause(self, key: str, seconds: float) -> float:
        """Pause the endpoint (a 429's Retry-After); returns the pause's end (wall clock)."""
        return self._budgets[key].pause(seconds)

    def grants(self) -> dict[str, int]:
        """Requests let through so far, per endpoint."""
        return dict(self.granted)


class RayBudget:
    """An `EndpointBudget` whose buckets live in the run's `SharedBudgets` actor."""

    def __init__(self, actor: Any, key: str, rpm: int | None, tpm: int | None) -> None:
        self._actor = actor
        self._key = key
        self._counts_tokens = tpm is not None
        self._limited = rpm is not None or tpm is not None
        self._paused_until = 0.0  # the latest pause this process knows of (wall clock)
        actor.tighten.remote(key, rpm, tpm)  # in order: an actor runs one caller's calls so

    @property
    def counts_tokens(self) -> bool:
        """Whether a tokens-per-minute limit is set."""
        return self._counts_tokens

    def tighten(self, rpm: int | None, tpm: int | None) -> None:
        """Another client of the endpoint gives its limits: the lowest hold."""
        self._counts_tokens = self._counts_tokens or tpm is not None
        self._limited = self._limited or rpm is not None or tpm is not None
        self._actor.tighten.remote(self._key, rpm, tpm)

    async def acquire(self, tokens: int, *, waited_out: float = 0.0) -> None:
        """Ask the shared budget until one more request of about `tokens` tokens fits."""
        if not self._limited and self._paused_until <= max(waited_out, time.time()):
            # No limits and no pause known here: a pause set by another worker is learnt
            # from the 429 this worker then gets, as in one process before its first 429.
            return
        while (wait := await self._actor.try_take.remote(self._key, tokens, waited_out)) > 0:
            await asyncio.sleep(min(wait, LOOK_AGAIN_SECONDS))

    def settle(self, estimated: int, actual: int) -> None:
        """Correct the estimate in the shared budget (not waited for)."""
        if self._counts_tokens and actual != estimated:
            self._actor.settle.remote(self._key, estimated, actual)

    def pause(self, seconds: float) -> float:
        """Pause the endpoint for every worker; returns the pause's end (wall clock)."""
        self._actor.pause.remote(self._key, seconds)
        self._paused_until = max(self._paused_until, time.time() + max(0.0, seconds))
        return self._paused_until


def shared_budgets(actor: Any) -> KeyedBudgetFactory:
    """The budget factory for `EndpointLimits.use_budgets`: each endpoint's budget in `actor`."""

    def make(key: str, rpm: int | None, tpm: int | None) -> EndpointBudget:
        return RayBudget(actor, key, rpm, tpm)

    return make
