"""What a run tells whoever watches it: the library prints nothing, it calls an observer.

`polygon run` passes an observer that draws the progress bar and prints the first failure
of each role; code that runs suites passes its own, or none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polygon_voice.model import ConversationResult
    from polygon_voice.runner import RunTally


@dataclass(frozen=True)
class RequestCounts:
    """Model requests of every client a run uses, added up: for a live view of its work.

    `oldest_wait`: seconds the oldest request in flight has been waiting (None: none is);
    `waiting`: requests held back because their endpoint takes no more at once.
    """

    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    failures: int = 0
    oldest_wait: float | None = None
    waiting: int = 0


def activity_of(clients: Iterable[Any]) -> RequestCounts:
    """The summed request counters of `clients` (each's `activity`, when it has one)."""
    in_flight = requests = retries = failures = waiting = 0
    oldest: float | None = None
    seen: set[int] = set()
    for client in clients:
        activity = getattr(client, "activity", None)
        # By the counters, not the client: a client shared by two roles, or an agent and its
        # model client counting into one tally, count once.
        if client is None or activity is None or id(activity) in seen:
            continue
        seen.add(id(activity))
        in_flight += _count(activity, "in_flight")
        requests += _count(activity, "requests")
        retries += _count(activity, "retries")
        failures += _count(activity, "failures")
        waiting += _count(activity, "waiting")
        waited = _oldest_wait(activity)
        if waited is not None and (oldest is None or waited > oldest):
            oldest = waited
    return RequestCounts(in_flight, requests, retries, failures, oldest, waiting)


def _count(activity: object, name: str) -> int:
    value = getattr(activity, name, 0)
    return value if isinstance(value, int) else 0


def _oldest_wait(activity: object) -> float | None:
    wait = getattr(activity, "oldest_wait", None)
    value = wait() if callable(wait) else None
    return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class RunStarted:
    """A run about to play its calls."""

    run_id: str
    suite: str
    agent: str  # credentials masked
    total: int  # calls this invocation plays or judges again
    kept: int  # calls already stored (a resumed run) and kept
    rejudged: int  # stored calls judged again (a resumed run whose judge model had failed)
    activity: Callable[[], RequestCounts]  # the model requests so far, read when called


class RunObserver:
    """Receives a run's events; every method does nothing unless overridden."""

    def run_started(self, started: RunStarted) -> None:
        """The run is set up and its first call is about to start."""

    def call_finished(self, result: ConversationResult, tally: RunTally) -> None:
        """One call was played, checked, judged and stored; `tally` holds the totals so far."""

    def role_failed(self, role: str, error: str) -> None:
        """A role (agent, caller, judge, probes) failed for the first time in this run."""

    def note(self, message: str) -> None:
        """Something worth telling a person (a resumed run, a taken-over lease)."""

    def warning(self, message: str) -> None:
        """Something went wrong that does not stop the run (a lease lost, a call skipped)."""
