"""Where a run's calls are played: behind one interface, in this process or on a cluster.

The `SuiteRunner` is the driver: it owns the store, the tally and the observer, and it is
the only writer. An `Executor` takes the planned calls still to do and gets each one done:

* `LocalExecutor` (the default) runs `concurrency` workers on the driver's event loop; each
  worker hands its call to `Driver.finish_here`, which plays, checks, judges, probes and
  stores it (a finished call is committed before a model judges it, see runner/run.py).
* `RayExecutor` (runner/ray_executor.py, the `ray` extra) has remote workers play, check,
  judge and probe each call and return a `FinishedCall`, which `Driver.store_finished`
  stores (one commit) and counts as it arrives.

Either way a call's seeds and virtual clock come from the run seed and the conversation
id alone, so the same suite and seed give the same stored results wherever they ran.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from polygon_voice.model import ConversationResult
from polygon_voice.runner.plan import PlannedCall
from polygon_voice.store.store import StageResult


@dataclass(frozen=True)
class FinishedCall:
    """What a remote worker made of one planned call, for the driver to store."""

    index: int  # the call's place in the plan
    result: ConversationResult
    stages: list[StageResult]  # every stage: checks, expect, conversation_checks, judge, probes
    errors: list[tuple[str, str]]  # (conversation id, message) of stages that failed


class Driver(Protocol):
    """What an executor may ask of the run's driver."""

    async def finish_here(self, planned: PlannedCall) -> None:
        """Play (or judge again) one call in this process and store it."""

    def store_finished(self, finished: FinishedCall) -> None:
        """Store and count a call finished elsewhere."""

    async def store_lost(self, planned: PlannedCall, message: str) -> None:
        """Store a call that could not be played elsewhere as an error call (`message`)."""


class Executor(Protocol):
    """Gets every planned call done; returns when all are stored."""

    @property
    def remote(self) -> bool:
        """Whether calls are played outside this process (stored calls are judged again
        here all the same: `--resume` of calls without a judgement)."""

    async def run(self, todo: Iterator[PlannedCall], driver: Driver) -> None:
        """Get each call of `todo` done and handed to `driver`."""


@dataclass(frozen=True)
class LocalExecutor:
    """`concurrency` workers on this event loop, pulling from one shared plan."""

    concurrency: int = 8

    @property
    def remote(self) -> bool:
        """Calls run in this process."""
        return False

    async def run(self, todo: Iterator[PlannedCall], driver: Driver) -> None:
        """Every call of `todo`, `concurrency` at a time."""
        await asyncio.gather(*(self._worker(todo, driver) for _ in range(self.concurrency)))

    @staticmethod
    async def _worker(todo: Iterator[PlannedCall], driver: Driver) -> None:
        # Workers pull from one shared plan, so memory does not grow with the run's size.
        for planned in todo:
            await driver.finish_here(planned)
            # Deterministic agents never await: yield so the other workers get their turn and
            # the loop can run its clean-ups (closed generators, cancelled timers), which would
            # otherwise pile up until the run ends and make memory grow with its size.
            await asyncio.sleep(0)
