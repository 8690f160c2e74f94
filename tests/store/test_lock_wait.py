"""A process that finds the SQLite file write-locked waits for the lock, longer than
Python's default 5 s, instead of failing with "database is locked"."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from polygon_voice.store import Store
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
