"""The sweep tables on SQLite and PostgreSQL: points, reuse lookup, recorded usage."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from polygon_voice.store import Store, StoreError
from polygon_voice.store.sweeps import SweepPointRecord, SweepRecord
from tests.store.store_factories import make_result, make_run


def sweep_record(sweep_id: str) -> SweepRecord:
    now = datetime.now(UTC)
    return SweepRecord(sweep_id, "s", "/x.yaml", {"trials": 1}, "running", None, now, None)


def point(index: int, run_id: str | None, status: str = "done", key: str = "k") -> SweepPointRecord:
    profile = {"agent": {"kind": "spec", "spec": "reference:robust"}, "conditions": {}}
    return SweepPointRecord("sw-1", index, {}, "h1", profile, key, run_id, status, None, None)


def exercise(store: Store) -> None:
    store.create_sweep(sweep_record("sw-1"))
    store.create_run(
        make_run("r1", config={"llm_usage": {"total": {"tokens_in": 90, "tokens_out": 30}}})
    )
    store.add_conversation("r1", 0, make_result("c1"))
    store.add_conversation("r1", 1, make_result("c2"))
    store.add_sweep_point(point(0, "r1"))
    assert store.reusable_run("h1", "k") is None  # the run is not finished yet
    store.finish_run("r1", "finished", datetime.now(UTC))
    assert store.reusable_run("h1", "k") == "r1"
    assert store.reusable_run("h1", "other") is None
    assert store.reusable_run("h2", "k") is None
    assert store.recorded_usage("h1") == [(2, {"total": {"tokens_in": 90, "tokens_out": 30}})]
    store.add_sweep_point(point(1, None, "refused"))
    with pytest.raises(StoreError):
        store.add_sweep_point(point(1, None, "refused"))  # one row per (sweep, point)
    store.finish_sweep("sw-1", "stopped", "below the floor")
    stored = store.get_sweep("sw-")
    assert (stored.status, stored.reason) == ("stopped", "below the floor")
    assert [p.status for p in store.sweep_points("sw-1")] == ["done", "refused"]
    store.update_run_config("r1", {"sweep": "sw-1"})
    assert store.get_run("r1").config["sweep"] == "sw-1"
    with pytest.raises(StoreError, match="no sweep"):
        store.get_sweep("nope")


def test_sweep_tables_on_sqlite(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        exercise(store)


def test_sweep_tables_on_postgres(postgres_url: str) -> None:
    with Store(postgres_url) as store:
        exercise(store)
