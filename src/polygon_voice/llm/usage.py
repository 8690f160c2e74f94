"""Token, call and cost accounting per run and per role."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from polygon_voice.llm.config import ROLES, Role, RoleConfig


@dataclass
class RoleUsage:
    """What one role spent: live calls cost tokens; cached calls cost nothing."""

    calls: int = 0
    cached_calls: int = 0
    retries: int = 0
    failed_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    def add(self, other: RoleUsage) -> None:
        """Add another tally into this one."""
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


# From this long on, the oldest request in flight shows its wait (`1 in flight (84 s)`): a slow
# server's progress bar then says what it is waiting for; a fast one's stays short.
SHOWN_WAIT_SECONDS = 5.0


@dataclass
class RequestActivity:
    """Live counters of one client's (or several clients') requests, for progress bars.

    `in_flight`: requests sent and not yet answered; `requests`: requests sent (every attempt,
    retries included; cached answers send none); `retries`: attempts that failed and are
    tried again; `failures`: calls that ended in an error (the endpoint failed for good, the
    answer could not be read, no key). Updated by the client as it works; read them any time.
    `oldest_wait()` is how long the oldest request in flight has been waiting; `waiting` the
    requests not yet sent because the endpoint takes no more at once.
    """

    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0
    # Requests held back by the endpoint's budget or its concurrency gate (docs/llm.md).
    waiting: int = 0
    # When each request in flight was sent, by the number `begin` gave it.
    _sent_at: dict[int, float] = field(default_factory=dict, repr=False, compare=False)
    _numbers: Iterator[int] = field(default_factory=itertools.count, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def begin(self) -> int:
        """One request sent: counted in flight; the number to give `end` and `waited`."""
        number = next(self._numbers)
        self._sent_at[number] = self.clock()
        self.in_flight += 1
        return number

    def end(self, number: int) -> None:
        """The request `begin` numbered is answered (or given up on)."""
        if self._sent_at.pop(number, None) is not None:
            self.in_flight -= 1

    def waited(self, number: int) -> float:
        """Seconds since the request `begin` numbered was sent."""
        sent = self._sent_at.get(number)
        return 0.0 if sent is None else max(0.0, self.clock() - sent)

    def oldest_wait(self) -> float | None:
        """Seconds the oldest request in flight has been waiting; None when none is."""
        sent = list(self._sent_at.values())  # a copy: another thread may add or remove one
        return max(0.0, self.clock() - min(sent)) if sent else None

    def summary(self) -> str:
        """`2 in flight, 14 sent, 1 retried, 0 failed`: one short line for a progress bar, with
        the oldest request's wait once it is long and the requests held back, if any
        (`1 in flight (84 s), 7 waiting, ...`)."""
        waiting = in_flight_text(self.in_flight, self.oldest_wait(), self.waiting)
        return f"{waiting}, {self.requests} sent, {self.retries} retried, {self.failures} failed"


def in_flight_text(in_flight: int, oldest_wait: float | None, waiting: int = 0) -> str:
    """`3 in flight`, `3 in flight (84 s)` once the oldest has waited SHOWN_WAIT_SECONDS, and
    `, 7 waiting` when requests are held back by the endpoint's gate."""
    text = f"{in_flight} in flight"
    if in_flight and oldest_wait is not None and oldest_wait >= SHOWN_WAIT_SECONDS:
        text += f" ({oldest_wait:.0f} s)"
    return text + (f", {waiting} waiting" if waiting else "")


@dataclass
class Usage:
    """One run's LLM usage. `calls` counts every answered call, `cached_calls` those from cache."""

    roles: dict[Role, RoleUsage] = field(default_factory=lambda: {r: RoleUsage() for r in ROLES})

    def record(self, config: RoleConfig, *, tokens_in: int, tokens_out: int, cached: bool) -> None:
        """Count one answered call; a cached one adds no tokens and no cost."""
        tally = self.roles[config.role]
        tally.calls += 1
        if cached:
            tally.cached_calls += 1
            return
        tally.tokens_in += tokens_in
        tally.tokens_out += tokens_out
        tally.cost += (
            tokens_in * config.price_in_per_1k + tokens_out * config.price_out_per_1k
        ) / 1000

    def record_retry(self, role: Role) -> None:
        """Count one retried attempt."""
        self.roles[role].retries += 1

    def record_failure(self, role: Role) -> None:
        """Count one call that failed for good."""
        self.roles[role].failed_calls += 1

    @property
    def total(self) -> RoleUsage:
        """All roles together."""
        total = RoleUsage()
        for tally in self.roles.values():
            total.add(tally)
        return total

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary for report.json: per role, then the total."""
        data: dict[str, Any] = {role: asdict(tally) for role, tally in self.roles.items()}
        data["total"] = asdict(self.total)
        return data
