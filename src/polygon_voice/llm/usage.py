"""Token, call and cost accounting per run and per role."""

from __future__ import annotations

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


@dataclass
class RequestActivity:
    """Live counters of one client's (or several clients') requests, for progress bars.

    `in_flight`: requests sent and not yet answered; `requests`: requests sent (every attempt,
    retries included; cached answers send none); `retries`: attempts that failed and are
    tried again; `failures`: calls that ended in an error (the endpoint failed for good, the
    answer could not be read, no key). Updated by the client as it works; read them any time.
    """

    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0

    def summary(self) -> str:
        """`2 in flight, 14 sent, 1 retried, 0 failed`: one short line for a progress bar."""
        return (
            f"{self.in_flight} in flight, {self.requests} sent, {self.retries} retried, "
            f"{self.failures} failed"
        )


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
