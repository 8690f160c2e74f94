"""Run leases: one process at a time executes a run (a new run or a resume of it).

A mixin of `Store`. A lease is a row of `run_leases` (owner, expiry). Taking one is a single
INSERT, or an UPDATE of a row whose expiry has passed: both are atomic on SQLite and
PostgreSQL, so of two processes racing for a run exactly one wins. The holder renews it while
it runs (`LeaseKeeper`, in a thread of its own so a busy event loop cannot let it lapse) and
deletes it at the end; a process killed with -9 leaves its row, which the next resume may take
once it has expired.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Self

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from polygon_voice.store.errors import StoreError
from polygon_voice.store.schema import run_leases

if TYPE_CHECKING:
    from polygon_voice.store.store import Store

LEASE_ENV = "POLYGON_RUN_LEASE"
# Long enough that a stalled database (or a suspended laptop) rarely lets a live run's lease
# lapse, short enough that a crashed run can be resumed soon; renewed every third of it.
DEFAULT_LEASE_SECONDS = 60.0
MIN_LEASE_SECONDS = 1.0


class LeaseHeld(StoreError):
    """Another process holds the run's lease: the run is being executed right now."""

    def __init__(self, run_id: str, owner: str, expires_at: datetime) -> None:
        super().__init__(
            f"run {run_id} is being run by another process ({owner}); its lease expires at "
            f"{expires_at:%Y-%m-%d %H:%M:%S} UTC unless renewed. Wait for it to finish, or, if "
            "that process is gone, resume after that time"
        )
        self.run_id = run_id
        self.owner = owner
        self.expires_at = expires_at


@dataclass(frozen=True)
class Lease:
    """A lease this process holds on a run."""

    run_id: str
    owner: str
    seconds: float
    taken_over: bool = False  # it replaced the expired lease of a process that is gone


def lease_seconds(env: dict[str, str] | None = None) -> float:
    """The lease length: $POLYGON_RUN_LEASE seconds, else 60; StoreError when unreadable."""
    raw = (os.environ if env is None else env).get(LEASE_ENV)
    if not raw:
        return DEFAULT_LEASE_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not seconds >= MIN_LEASE_SECONDS or seconds == float("inf"):
        raise StoreError(
            f"{LEASE_ENV}={raw!r} must be a number of seconds, at least {MIN_LEASE_SECONDS:g}"
        )
    return seconds


def new_owner() -> str:
    """This process's name on a lease: host, pid and a random part (pids are reused)."""
    return f"host {socket.gethostname()}, pid {os.getpid()}, lease {uuid.uuid4().hex[:8]}"


class LeaseStore:
    """Lease methods of `Store` (which provides the engine and the error helpers)."""

    _engine: Engine

    if TYPE_CHECKING:

        def _failure(self, action: str, exc: SQLAlchemyError) -> StoreError: ...

    def acquire_lease(self, run_id: str, seconds: float, owner: str | None = None) -> Lease:
        """Take the run's lease for `seconds`; LeaseHeld when another process holds it."""
        owner = owner or new_owner()
        now = datetime.now(UTC)
        expires = now + timedelta(seconds=seconds)
        try:
            with self._engine.begin() as conn:
                # A write first, so SQLite takes its write lock (waiting its busy timeout)
                # before anything is read. Compare-and-swap on an expired row: a racing
                # taker then finds it renewed and takes nothing.
                taken_over = conn.execute(
                    sa.update(run_leases)
                    .where(run_leases.c.run_id == run_id, run_leases.c.expires_at < now)
                    .values(owner=owner, acquired_at=now, expires_at=expires)
                ).rowcount
                if not taken_over:
                    row = {"run_id": run_id, "owner": owner, "acquired_at": now}
                    conn.execute(sa.insert(run_leases), {**row, "expires_at": expires})
        except IntegrityError as exc:
            raise self._held(run_id, exc) from exc
        except SQLAlchemyError as exc:
            raise self._failure(f"take the lease of run {run_id}", exc) from exc
        return Lease(run_id, owner, seconds, bool(taken_over))

    def renew_lease(self, lease: Lease) -> bool:
        """Push the lease's expiry `lease.seconds` from now; False when it is no longer ours."""
        expires = datetime.now(UTC) + timedelta(seconds=lease.seconds)
        stmt = (
            sa.update(run_leases)
            .where(run_leases.c.run_id == lease.run_id, run_leases.c.owner == lease.owner)
            .values(expires_at=expires)
        )
        try:
            with self._engine.begin() as conn:
                return bool(conn.execute(stmt).rowcount)
        except SQLAlchemyError as exc:
            raise self._failure(f"renew the lease of run {lease.run_id}", exc) from exc

    def release_lease(self, lease: Lease) -> None:
        """Give the lease up (a no-op when another process has taken it since)."""
        stmt = sa.delete(run_leases).where(
            run_leases.c.run_id == lease.run_id, run_leases.c.owner == lease.owner
        )
        try:
            with self._engine.begin() as conn:
                conn.execute(stmt)
        except SQLAlchemyError as exc:
            raise self._failure(f"release the lease of run {lease.run_id}", exc) from exc

    def _held(self, run_id: str, exc: IntegrityError) -> StoreError:
        # The INSERT lost: a live lease exists (or the run does not).
        stmt = sa.select(run_leases.c.owner, run_leases.c.expires_at).where(
            run_leases.c.run_id == run_id
        )
        try:
            with self._engine.connect() as conn:
                row = conn.execute(stmt).first()
        except SQLAlchemyError as read_exc:
            return self._failure(f"read the lease of run {run_id}", read_exc)
        if row is None:
            return self._failure(f"take the lease of run {run_id}", exc)
        return LeaseHeld(run_id, row.owner, row.expires_at)


class LeaseKeeper:
    """Holds a run's lease for a `with` block: taken on entry, renewed, released on exit.

    Renewal runs in a daemon thread every third of the lease, independent of the event loop.
    A renewal that finds the lease gone (another process took it after it lapsed) sets `lost`.
    """

    def __init__(self, store: Store, run_id: str, seconds: float | None = None) -> None:
        self._store = store
        self._run_id = run_id
        self._seconds = lease_seconds() if seconds is None else seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.lease: Lease | None = None
        self.lost = False

    def __enter__(self) -> Self:
        self.lease = self._store.acquire_lease(self._run_id, self._seconds)
        self._thread = threading.Thread(
            target=self._renew, name=f"lease {self._run_id}", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.lease is not None and not self.lost:
            # On failure it expires on its own: the run's outcome matters more than this.
            with contextlib.suppress(StoreError):
                self._store.release_lease(self.lease)

    def _renew(self) -> None:
        assert self.lease is not None
        while not self._stop.wait(self._seconds / 3):
            try:
                if not self._store.renew_lease(self.lease):
                    self.lost = True
                    return
            except StoreError:
                continue  # a passing database hiccup: try again at the next beat
