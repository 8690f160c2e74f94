"""Resume is exclusive: a run being executed holds a lease; a crashed run can be taken over.

The store's lease methods on SQLite, then real `polygon run` processes racing for one run on
SQLite and on PostgreSQL (when the server is available): one runs it, the other is refused
with one line naming the run, a process killed with -9 is taken over once its lease expires,
and no call is ever stored twice.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from polygon_voice.store import RunRecord, Store, StoreError
from polygon_voice.store.leases import (
    LEASE_ENV,
    LeaseHeld,
    LeaseKeeper,
    lease_seconds,
)
from polygon_voice.store.schema import run_leases
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

CALLS = 9  # the example suite's calls
# Each response first waits until the file $AGENT_GATE exists (no wait when unset): a run
# that must still be going while another process tries the same run is held there.
GATED_AGENT = """
import asyncio
import os
from pathlib import Path
from polygon_voice.model import EndCall, Say

class GatedAgent:
    def __init__(self, context):
        gate = os.environ.get("AGENT_GATE")
        self.gate = Path(gate) if gate else None

    async def respond(self, event):
        while self.gate is not None and not self.gate.exists():
            await asyncio.sleep(0.02)
        yield Say(text="Hello, goodbye.")
        yield EndCall()
"""


def _record(run_id: str = "run-1") -> RunRecord:
    return RunRecord(
        id=run_id,
        suite="s",
        suite_path="s.yaml",
        suite_hash="h",
        agent="a",
        seed=0,
        started_at=datetime.now(UTC),
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    opened = Store(f"sqlite:///{tmp_path / 'leases.db'}")
    opened.create_run(_record())
    return opened


def test_a_held_lease_refuses_a_second_owner_with_the_run_and_expiry(store: Store) -> None:
    first = store.acquire_lease("run-1", 60, owner="first")
    assert not first.taken_over
    with pytest.raises(LeaseHeld) as refused:
        store.acquire_lease("run-1", 60, owner="second")
    message = str(refused.value)
    assert "run run-1 is being run by another process (first)" in message
    assert " UTC" in message
    assert "\n" not in message
    assert refused.value.expires_at > datetime.now(UTC) + timedelta(seconds=50)


def test_an_expired_lease_is_taken_over_and_the_old_owner_loses_it(store: Store) -> None:
    old = store.acquire_lease("run-1", 60, owner="crashed")
    _expire(store, "run-1")
    new = store.acquire_lease("run-1", 60, owner="next")
    assert new.taken_over
    assert not store.renew_lease(old)  # the crashed process, were it back, learns it lost
    assert store.renew_lease(new)
    store.release_lease(old)  # a no-op: not its lease any more
    with pytest.raises(LeaseHeld, match=r"\(next\)"):
        store.acquire_lease("run-1", 60, owner="third")


def test_a_released_lease_can_be_taken_again_at_once(store: Store) -> None:
    lease = store.acquire_lease("run-1", 60, owner="first")
    store.release_lease(lease)
    assert not store.acquire_lease("run-1", 60, owner="second").taken_over


def test_a_lease_on_a_missing_run_is_a_store_error_not_held(store: Store) -> None:
    with pytest.raises(StoreError) as failed:
        store.acquire_lease("no-such-run", 60)
    assert not isinstance(failed.value, LeaseHeld)


def test_the_keeper_renews_while_held_and_releases_on_exit(store: Store) -> None:
    with LeaseKeeper(store, "run-1", seconds=1.0) as keeper:
        first = _expiry(store, "run-1")
        time.sleep(0.5)  # past a third of the lease: renewed at least once
        assert _expiry(store, "run-1") > first
        assert not keeper.lost
    assert _expiry(store, "run-1") is None


def test_the_keeper_notices_a_takeover_and_leaves_the_new_lease_alone(store: Store) -> None:
    with LeaseKeeper(store, "run-1", seconds=1.0) as keeper:
        _expire(store, "run-1")  # as if this process had stalled past its lease
        store.acquire_lease("run-1", 60, owner="next")
        time.sleep(0.5)  # the next renewal finds the lease gone
        assert keeper.lost
    with pytest.raises(LeaseHeld, match=r"\(next\)"):  # not deleted on the way out
        store.acquire_lease("run-1", 60, owner="third")


def test_deleting_a_run_deletes_its_lease(store: Store, tmp_path: Path) -> None:
    store.acquire_lease("run-1", 60)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'leases.db'}")
    with engine.begin() as conn:
        conn.exec_driver_sql("PRAGMA foreign_keys=ON")
        conn.exec_driver_sql("DELETE FROM runs WHERE id = 'run-1'")
        assert conn.execute(sa.select(sa.func.count()).select_from(run_leases)).scalar() == 0
    engine.dispose()


@pytest.mark.parametrize(("value", "seconds"), [(None, 60.0), ("", 60.0), ("2.5", 2.5), ("1", 1.0)])
def test_the_lease_length_comes_from_the_environment(value: str | None, seconds: float) -> None:
    env = {} if value is None else {LEASE_ENV: value}
    assert lease_seconds(env) == seconds


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "soon", "0.5"])
def test_an_unreadable_lease_length_is_one_clear_error(value: str) -> None:
    with pytest.raises(StoreError, match=f"{LEASE_ENV}="):
        lease_seconds({LEASE_ENV: value})


# -- real processes ----------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'polygon.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


def _gated_agent(tmp_path: Path) -> str:
    # An absolute path: a file agent is otherwise looked for beside the suite.
    (tmp_path / "gated.py").write_text(GATED_AGENT)
    return f"{tmp_path / 'gated.py'}:GatedAgent"


def _polygon(
    tmp_path: Path, db: str, *args: str, lease: str = "1", gate: Path | None = None
) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "polygon_voice", "run", str(EXAMPLE_SUITE), *args]
    command += ["--concurrency", "1", "--no-probes", "--db", db]
    env = {**os.environ, "COLUMNS": "300", LEASE_ENV: lease, "AGENT_GATE": str(gate or "")}
    return subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def _wait_for_lease(db: str, timeout: float = 30.0) -> tuple[str, datetime]:
    """The run id and lease expiry of the first lease to appear in the database."""
    deadline = time.monotonic() + timeout
    engine = sa.create_engine(db)
    try:
        while time.monotonic() < deadline:
            try:
                with engine.connect() as conn:
                    row = conn.execute(sa.select(run_leases)).first()
            except sa.exc.DBAPIError:
                row = None  # the tables are not created yet
            if row is not None:
                return row.run_id, row.expires_at
            time.sleep(0.05)
    finally:
        engine.dispose()
    raise AssertionError("no run took a lease")


def _first_to_exit(processes: list[subprocess.Popen[str]]) -> subprocess.Popen[str]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                return process
        time.sleep(0.02)
    raise AssertionError("neither process ended")


def _stored_ids(db: str, run_id: str) -> list[str]:
    with Store(db) as store:
        return [c.id for c in store.iter_summaries(run_id)]


def test_a_resume_while_the_run_goes_on_is_refused_and_a_killed_run_is_taken_over(
    tmp_path: Path, db: str
) -> None:
    first = _polygon(tmp_path, db, "--agent", _gated_agent(tmp_path), gate=tmp_path / "never")
    try:
        run_id, _ = _wait_for_lease(db)
        code, _, err = _finish(_polygon(tmp_path, db, "--resume", run_id))
        assert code == 2
        assert f"run {run_id} is being run by another process" in err
        assert "Traceback" not in err
        assert len([line for line in err.splitlines() if line.strip()]) == 1
    finally:
        first.send_signal(signal.SIGKILL)  # a crash: the lease stays behind until it expires
        first.wait(timeout=10)
    time.sleep(1.1)  # the 1 s lease of the killed process runs out
    code, out, err = _finish(_polygon(tmp_path, db, "--resume", run_id))
    assert code == 0, err
    assert "taking it over" in out
    ids = _stored_ids(db, run_id)
    assert len(ids) == CALLS == len(set(ids))


def test_two_resumes_at_once_one_runs_the_other_is_refused(
    tmp_path: Path, db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _crashed_run(tmp_path, db, monkeypatch)
    gate = tmp_path / "gate"
    racers = [_polygon(tmp_path, db, "--resume", run_id, lease="30", gate=gate) for _ in range(2)]
    # The winner waits at its first call until the loser has been refused and has exited.
    loser = _first_to_exit(racers)
    gate.touch()
    winner = racers[1 - racers.index(loser)]
    (code, _, refused), (won, _, err) = _finish(loser), _finish(winner)
    assert (code, won) == (2, 0), (refused, err)
    assert f"run {run_id} is being run by another process" in refused
    assert "Traceback" not in refused
    ids = _stored_ids(db, run_id)
    assert len(ids) == CALLS == len(set(ids))
    with Store(db) as store, store._engine.connect() as conn:  # the winner let go at its end
        assert conn.execute(sa.select(sa.func.count()).select_from(run_leases)).scalar() == 0


def _crashed_run(tmp_path: Path, db: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A run that stored one call and then died (its lease long gone): run in-process, with
    all but the first call deleted afterwards."""
    monkeypatch.delenv("AGENT_GATE", raising=False)
    code, _, err = Polygon(tmp_path, db)(
        "run", str(EXAMPLE_SUITE), "--agent", _gated_agent(tmp_path)
    )
    assert code == 0, err
    with Store(db) as store:
        run_id = store.list_runs()[0].id
        with store._engine.begin() as conn:
            conn.execute(
                sa.text("DELETE FROM conversations WHERE run_id = :r AND idx >= 1"), {"r": run_id}
            )
    return run_id


def _expire(store: Store, run_id: str) -> None:
    past = datetime.now(UTC) - timedelta(seconds=1)
    with store._engine.begin() as conn:
        conn.execute(
            sa.update(run_leases).where(run_leases.c.run_id == run_id).values(expires_at=past)
        )


def _expiry(store: Store, run_id: str) -> datetime | None:
    with store._engine.connect() as conn:
        value: datetime | None = conn.execute(
            sa.select(run_leases.c.expires_at).where(run_leases.c.run_id == run_id)
        ).scalar_one_or_none()
    return value
