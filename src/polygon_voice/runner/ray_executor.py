"""The Ray executor: a run's calls played by a few async Ray actors (the `ray` extra).

`polygon run --executor ray [--address auto|ray://HOST:PORT] [--workers N]`. Each worker is
an async actor with its own model clients and `max_concurrency` = the run's concurrency;
it is built from a small picklable `WorkerSetup` (the suite, the run seed, the agent's spec
and the judge's, probes' and caller's settings), which rebuilds the call's parts with the
same functions the driver uses (api/setup.call_parts). A worker gets only a call's index in
the plan; it plans the suite itself (`planned_call`), plays, checks, judges and probes the
call, and returns a `FinishedCall`. Seeds and the virtual clock come from the run seed and
the conversation id, so the results are those of the local executor, byte for byte.

The driver keeps `workers x concurrency` calls in flight, waits with `ray.wait` for the
first to finish (in a thread, so its own event loop keeps serving: progress, the lease, the
calls judged again), stores each as it arrives (the one writer) and submits the next. The
plan is a generator and the refs in flight are bounded, so memory is flat in the run's size.

A worker that dies (`RayActorError`, `WorkerCrashedError`) loses only its calls in flight:
each is re-run on a live worker, and a fresh actor takes the dead one's place. A call that
has lost its worker `MAX_LOSSES` times is stored as an error call rather than retried for
ever (it may be what kills them). Re-runs are counted and told through `on_note`.

Ray is imported when the executor starts, never when this module is imported.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from polygon_voice.api.errors import InputError, SetupError
from polygon_voice.runner.build import CallBuilder
from polygon_voice.runner.executors import Driver, FinishedCall
from polygon_voice.runner.pipeline import CallPipeline, serve_tools_if_needed
from polygon_voice.runner.plan import PlannedCall, planned_call

if TYPE_CHECKING:
    from polygon_voice.agents import AgentFactory
    from polygon_voice.judge import Judging
    from polygon_voice.llm import LLMClient, Usage
    from polygon_voice.model import Suite
    from polygon_voice.probes import Probing

RAY_MISSING = "the Ray executor needs the ray extra: pip install 'polygon-voice[ray]'"
# A call whose worker died this many times is stored as an error call, not tried again.
MAX_LOSSES = 3
# How long one ray.wait blocks its thread: a cancelled run is noticed within this time.
_WAIT_SECONDS = 0.5


@dataclass
class WorkerParts:
    """What a worker plays calls with, built in the worker's own process."""

    suite: Suite  # as played (a prompt agent's turn limit filled in)
    agent_factory: AgentFactory
    seed: int
    noise: float | None
    caller_client: LLMClient | None
    judging: Judging | None
    probing: Probing | None
    real_calls: bool = False

    def usages(self) -> list[Usage]:
        """The model usage of every client of these parts, each once."""
        from polygon_voice.llm import Usage

        judge = self.judging.judge if self.judging is not None else None
        clients = [self.caller_client, getattr(judge, "client", None), self.agent_factory]
        clients.append(self.probing.client if self.probing is not None else None)
        # By identity: a client shared by two stages must not count its calls twice.
        found = {id(u): u for c in clients if isinstance(u := getattr(c, "usage", None), Usage)}
        return list(found.values())


# Picklable, called once in each worker (api/setup.WorkerSetup).
WorkerSetup = Callable[[], WorkerParts]


class CallWorker:
    """The body of one Ray actor: plays calls by their index in the plan."""

    def __init__(self, setup: WorkerSetup, budgets: Any | None = None) -> None:
        self._setup = setup
        self._budgets = budgets
        self._parts: WorkerParts | None = None
        self._pipeline: CallPipeline | None = None

    async def ready(self) -> int:
        """Build the worker's parts (once); returns its process id."""
        self._ready()
        return os.getpid()

    async def play(self, index: int) -> FinishedCall:
        """Play, check, judge and probe the `index`-th call of the plan."""
        parts, pipeline = self._ready()
        planned = planned_call(parts.suite, index)
        errors: list[tuple[str, str]] = []
        result = await pipeline.play(planned)
        stages = pipeline.checked(planned, result, errors)
        later = await pipeline.judged_and_probed(planned, result, stages, errors)
        return FinishedCall(index, result, [*stages, *later], errors)

    async def usages(self) -> list[Usage]:
        """The model usage of this worker's clients so far."""
        return self._parts.usages() if self._parts is not None else []

    async def close(self) -> None:
        """Close the worker's model clients and agents."""
        if self._parts is not None and self._pipeline is not None:
            await self._pipeline.aclose(self._parts.agent_factory, self._parts.caller_client)

    def _ready(self) -> tuple[WorkerParts, CallPipeline]:
        # No await inside: calls running at once on the actor's loop build the parts once.
        if self._parts is None or self._pipeline is None:
            if self._budgets is not None:
                from polygon_voice.llm.limits import SHARED_LIMITS
                from polygon_voice.llm.ray_budget import shared_budgets

                SHARED_LIMITS.use_budgets(shared_budgets(self._budgets))
            parts = self._setup()
            builder = CallBuilder(
                parts.suite,
                parts.agent_factory,
                parts.seed,
                noise=parts.noise,
                caller_client=parts.caller_client,
            )
            serve_tools_if_needed(builder)
            self._pipeline = CallPipeline(builder, parts.judging, parts.probing, parts.real_calls)
            self._parts = parts
        return self._parts, self._pipeline


@dataclass
class _Worker:
    actor: Any
    in_flight: int = 0


@dataclass
class RayExecutor:
    """Plays a run's calls on `workers` Ray actors, `concurrency` calls each at once."""

    setup: WorkerSetup
    workers: int | None = None  # None: one per CPU of the cluster
    address: str | None = None  # None: RAY_ADDRESS or a local cluster started for the run
    concurrency: int = 8
    shared_budgets: bool = True  # one rpm/tpm budget per endpoint for every worker
    on_note: Callable[[str], None] | None = None
    # What the run did, read by the API afterwards.
    reruns: int = 0
    usages: list[Usage] = field(default_factory=list)
    # Tests: called with each worker's actor handle once it is ready.
    on_worker_ready: Callable[[Any], None] | None = None

    @property
    def remote(self) -> bool:
        """Calls are played by the actors, outside this process."""
        return True

    async def run(self, todo: Iterator[PlannedCall], driver: Driver) -> None:
        """Every call of `todo`, played by the actors and stored by `driver` as it finishes."""
        ray = import_ray()
        started_here = connect(ray, self.address)
        budgets = None
        pool: list[_Worker] = []
        try:
            count = self._worker_count(ray)
            budgets = self._budget_actor(ray)
            pool = [self._start_worker(ray, budgets) for _ in range(count)]
            await self._wait_ready(ray, pool)
            with _driver_budgets(budgets):
                await _Drive(self, ray, pool, budgets, driver).run(todo)
            self.usages = await self._collect_usages(ray, pool)
        finally:
            await _stopped(ray, pool, budgets)
            if started_here:
                ray.shutdown()
        if self.reruns and self.on_note is not None:
            self.on_note(
                f"{self.reruns} call(s) re-run after their Ray worker was lost; "
                "each is stored once."
            )

    def _worker_count(self, ray: ModuleType) -> int:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = self.workers if self.workers is not None else max(1, cpus)
        if count > cpus:
            raise SetupError(
                f"--workers {count}: the Ray cluster has {cpus} CPU(s) and each worker takes "
                "one; add nodes or ask for fewer workers"
            )
        return count

    def _budget_actor(self, ray: ModuleType) -> Any:
        if not self.shared_budgets:
            return None
        from polygon_voice.llm.ray_budget import SharedBudgets

        return ray.remote(SharedBudgets).options(num_cpus=0).remote()

    def _start_worker(self, ray: ModuleType, budgets: Any) -> _Worker:
        actor_class = ray.remote(CallWorker).options(
            num_cpus=1, max_concurrency=max(1, self.concurrency), max_restarts=0
        )
        return _Worker(actor_class.remote(self.setup, budgets))

    async def _wait_ready(self, ray: ModuleType, pool: list[_Worker]) -> None:
        try:
            await asyncio.gather(*(w.actor.ready.remote() for w in pool))
        except ray.exceptions.RayError as exc:
            raise SetupError(f"the Ray workers could not set up the run: {_cause(exc)}") from None
        if self.on_worker_ready is not None:
            for worker in pool:
                self.on_worker_ready(worker.actor)

    @staticmethod
    async def _collect_usages(ray: ModuleType, pool: list[_Worker]) -> list[Usage]:
        lists = await asyncio.gather(
            *(w.actor.usages.remote() for w in pool), return_exceptions=True
        )
        return [u for found in lists if isinstance(found, list) for u in found]


@dataclass
class _Drive:
    """One run's submit / wait / store loop on the driver."""

    executor: RayExecutor
    ray: ModuleType
    pool: list[_Worker]
    budgets: Any
    driver: Driver
    pending: dict[Any, tuple[PlannedCall, _Worker]] = field(default_factory=dict)
    again: deque[PlannedCall] = field(default_factory=deque)
    losses: dict[int, int] = field(default_factory=dict)  # index -> times its worker died

    async def run(self, todo: Iterator[PlannedCall]) -> None:
        capacity = len(self.pool) * max(1, self.executor.concurrency)
        while True:
            while len(self.pending) < capacity and (planned := self._next(todo)) is not None:
                self._submit(planned)
            if not self.pending:
                return
            for ref in await self._finished():
                await self._arrived(ref)

    def _next(self, todo: Iterator[PlannedCall]) -> PlannedCall | None:
        if self.again:  # calls whose worker died go first
            return self.again.popleft()
        return next(todo, None)

    def _submit(self, planned: PlannedCall) -> None:
        worker = min(self.pool, key=lambda w: w.in_flight)
        ref = worker.actor.play.remote(planned.index)
        worker.in_flight += 1
        self.pending[ref] = (planned, worker)

    async def _finished(self) -> list[Any]:
        """The refs finished so far, at least one (ray.wait, in a thread)."""
        refs = list(self.pending)
        while True:
            ready, _ = await asyncio.to_thread(
                self.ray.wait, refs, num_returns=1, timeout=_WAIT_SECONDS
            )
            if ready:
                break
        # Whatever else is done by now comes in the same round: fewer waits per call stored.
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        return list(ready)

    async def _arrived(self, ref: Any) -> None:
        planned, worker = self.pending.pop(ref)
        worker.in_flight -= 1
        lost = (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError)
        try:
            finished = self.ray.get(ref)
        except lost as exc:
            await self._lost(planned, worker, exc)
            return
        except self.ray.exceptions.RayTaskError as exc:  # a harness bug in the worker
            raise RuntimeError(
                f"call {planned.conversation_id} failed in its Ray worker: {_cause(exc)}"
            ) from exc
        self.driver.store_finished(finished)

    async def _lost(self, planned: PlannedCall, worker: _Worker, exc: Exception) -> None:
        if worker in self.pool:  # the first of its calls to tell: replace the worker
            self.pool.remove(worker)
            self.ray.kill(worker.actor, no_restart=True)
            self.pool.append(self.executor._start_worker(self.ray, self.budgets))
        losses = self.losses[planned.index] = self.losses.get(planned.index, 0) + 1
        if losses >= MAX_LOSSES:
            self.losses.pop(planned.index)
            await self.driver.store_lost(
                planned, f"its Ray worker was lost {losses} times while playing it: {_cause(exc)}"
            )
            return
        self.executor.reruns += 1
        self.again.append(planned)


def import_ray() -> ModuleType:
    """The ray module; InputError naming the extra when it is not installed."""
    try:
        import ray
    except ImportError:
        raise InputError(RAY_MISSING) from None
    return ray


def connect(ray: ModuleType, address: str | None) -> bool:
    """Join the cluster at `address` (None: RAY_ADDRESS or a new local one) unless this process
    is connected already; True when this call did the connecting (and should disconnect)."""
    if ray.is_initialized():
        return False
    target = None if address in (None, "local") else address
    began = time.monotonic()
    try:
        ray.init(
            address=target,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="WARNING",
            configure_logging=True,
        )
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        waited = time.monotonic() - began
        raise InputError(
            f"cannot reach the Ray cluster at {address or 'RAY_ADDRESS'} "
            f"(gave up after {waited:.0f} s): {exc}"
        ) from None
    return True


def _cause(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None) or exc
    text = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {text[-1] if text else ''}"


async def _stopped(ray: ModuleType, pool: list[_Worker], budgets: Any) -> None:
    """Close every worker's clients (briefly) and end the actors, whatever happened."""
    if pool:
        closing = [w.actor.close.remote() for w in pool]
        await asyncio.to_thread(ray.wait, closing, num_returns=len(closing), timeout=5.0)
    for actor in [*(w.actor for w in pool), *([budgets] if budgets is not None else [])]:
        with suppress(Exception):  # gone already
            ray.kill(actor, no_restart=True)


@contextmanager
def _driver_budgets(budgets: Any) -> Iterator[None]:
    """The driver's own clients (calls judged again) share the workers' budgets meanwhile."""
    if budgets is None:
        yield
        return
    from polygon_voice.llm.limits import SHARED_LIMITS
    from polygon_voice.llm.ray_budget import shared_budgets

    SHARED_LIMITS.use_budgets(shared_budgets(budgets))
    try:
        yield
    finally:
        SHARED_LIMITS.use_budgets(None)
