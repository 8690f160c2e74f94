"""bench/ray_scale.py on a tiny workload against the session's local Ray cluster: the figures it
prints are consistent with what was run (a sanity check of the benchmark, nothing timed)."""

from __future__ import annotations

import argparse
import sqlite3
from pathlib import Path
from types import ModuleType

import pytest
from bench.ray_scale import fake_server, ingest_run, scale_run, server_requests


@pytest.fixture
def args(monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace:
    monkeypatch.setenv("POLYGON_MAX_REPEAT", "1000")
    return argparse.Namespace(conversations=6, concurrency=3, latency=0.05, ingest=8)


def test_one_worker_plays_every_call_and_its_bound_is_below_its_wall(
    ray_cluster: ModuleType, tmp_path: Path, args: argparse.Namespace
) -> None:
    with fake_server(tmp_path, args.latency) as url:
        scale = scale_run(tmp_path, url, args, workers=1)
        requests_after = server_requests(url)
    assert scale.conversations == 6
    # Every call asks the agent, the caller and the judge at least once each.
    assert scale.requests >= 3 * 6
    assert scale.requests <= requests_after
    # The bound is what a free harness would take: a real run cannot beat it by much.
    assert scale.bound > 0
    assert 0 < scale.efficiency <= 1.2
    assert scale.wall == pytest.approx(scale.bound / scale.efficiency)
    with sqlite3.connect(tmp_path / "w1.db") as db:
        (stored,) = db.execute("SELECT COUNT(*) FROM conversations").fetchone()
    assert stored == 6


def test_the_ingest_run_stores_every_call_from_instant_workers(
    ray_cluster: ModuleType, tmp_path: Path, args: argparse.Namespace
) -> None:
    with fake_server(tmp_path, args.latency) as url:
        before = server_requests(url)
        ingest = ingest_run(tmp_path, url, args)
        played = server_requests(url) - before
    assert ingest.calls == 8
    assert ingest.per_second > 0
    with sqlite3.connect(tmp_path / "ingest.db") as db:
        ids = [row[0] for row in db.execute("SELECT id FROM conversations")]
    assert len(ids) == len(set(ids)) == 8
    # Instant workers play one call each when they start, not one per stored call.
    assert played < 8 * 3
