"""A process that finds the SQLite file write-locked waits for the lock, longer than
Python's default 5 s, instead of failing with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from polygon_voice.store import Store, StoreError
from polygon_voice.store import store as store_module
from polygon_voice.store.engine import SQLITE_LOCK_WAIT_SECONDS
from tests.store.store_factories import make_run

HELD_SECONDS = 6.0  # past sqlite3's default wait of 5 s


def test_a_write_waits_out_a_lock_held_longer_than_five_seconds(tmp_path: Path) -> None:
    path = tmp_path / "polygon.db"
    Store(f"sqlite:///{path}").close()  # the schema made, so only the write waits
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    release = threading.Timer(HELD_SECONDS, holder.execute, args=("COMMIT",))
    release.start()
    try:
        started = time.monotonic()
        store = Store(f"sqlite:///{path}")
        store.create_run(make_run("r1"))
        waited = time.monotonic() - started
    finally:
        release.join()
        holder.close()
    assert HELD_SECONDS - 0.5 <= waited < SQLITE_LOCK_WAIT_SECONDS
    assert [run.id for run in store.list_runs()] == ["r1"]


def test_opening_tries_again_when_sqlite_answers_locked_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite answers "database is locked" without its busy wait where waiting could
    # deadlock (seen when several processes open one new file together): the open tries
    # the idempotent schema check again instead of failing.
    calls = []
    real = store_module.ensure_schema

    def locked_twice(engine: Any) -> bool:
        calls.append(1)
        if len(calls) <= 2:
            raise OperationalError(
                "PRAGMA journal_mode=WAL", {}, sqlite3.OperationalError("database is locked")
            )
        return real(engine)

    monkeypatch.setattr(store_module, "ensure_schema", locked_twice)
    store = Store(f"sqlite:///{tmp_path / 'new.db'}")
    assert len(calls) == 3
    assert store.list_runs() == []
    store.close()


def test_a_lock_that_never_goes_is_a_clear_error_after_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def always_locked(_engine: Any) -> bool:
        raise OperationalError(
            "BEGIN IMMEDIATE", {}, sqlite3.OperationalError("database is locked")
        )

    monkeypatch.setattr(store_module, "ensure_schema", always_locked)
    monkeypatch.setattr(store_module, "SQLITE_LOCK_WAIT_SECONDS", 0.2)
    started = time.monotonic()
    with pytest.raises(StoreError, match="database is locked; check that its folder exists"):
        Store(f"sqlite:///{tmp_path / 'new.db'}")
    assert time.monotonic() - started < 5.0


def test_other_errors_are_not_tried_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []

    def broken(_engine: Any) -> bool:
        calls.append(1)
        raise OperationalError("SELECT", {}, sqlite3.OperationalError("disk I/O error"))

    monkeypatch.setattr(store_module, "ensure_schema", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        Store(f"sqlite:///{tmp_path / 'new.db'}")
    assert calls == [1]
