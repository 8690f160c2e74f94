"""The store's sweep methods: sweeps, their points (profile versions) and what they reuse.

A mixin of `Store`, kept apart so store.py stays about runs and conversations.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, RowMapping
from sqlalchemy.exc import SQLAlchemyError

from polygon_voice.store.errors import StoreError
from polygon_voice.store.schema import conversations, runs, stage_results, sweep_points, sweeps

SWEEP_STATUSES = frozenset({"running", "finished", "stopped", "interrupted"})
POINT_STATUSES = frozenset({"done", "reused", "refused", "skipped", "failed"})
# The run config keys that say how a run's calls were judged: a stored call is reused only
# by a run that would judge it the same way.
JUDGING_KEYS = ("judge", "rubric", "judge_repeats")


@dataclass(frozen=True)
class SweepRecord:
    """One sweep as stored."""

    id: str
    name: str
    path: str
    config: dict[str, Any]
    status: str
    reason: str | None
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class SweepPointRecord:
    """One point of a sweep: its profile version and what became of it."""

    sweep_id: str
    index: int
    point: dict[str, Any]
    profile_hash: str
    profile: dict[str, Any]
    run_key: str
    run_id: str | None
    status: str
    reason: str | None
    estimate: dict[str, Any] | None


class SweepStore:
    """Sweep methods of `Store` (which provides the engine and the error helpers)."""

    url: str
    _engine: Engine

    if TYPE_CHECKING:

        def _reading(self, action: str) -> AbstractContextManager[Connection]: ...

        def _failure(self, action: str, exc: SQLAlchemyError) -> StoreError: ...

    def create_sweep(self, record: SweepRecord) -> None:
        """Store a new sweep."""
        self._write(f"store sweep {record.id}", sa.insert(sweeps).values(**_sweep_row(record)))

    def finish_sweep(self, sweep_id: str, status: str, reason: str | None = None) -> None:
        """Set a sweep's final status, why (an early stop) and its end time."""
        if status not in SWEEP_STATUSES:
            raise ValueError(f"status {status!r} is not one of {sorted(SWEEP_STATUSES)}")
        values = {"status": status, "reason": reason, "finished_at": datetime.now(UTC)}
        stmt = sa.update(sweeps).where(sweeps.c.id == sweep_id).values(**values)
        self._write(f"finish sweep {sweep_id}", stmt)

    def add_sweep_point(self, record: SweepPointRecord) -> None:
        """Store one point as it ends (run, reused, refused or skipped)."""
        if record.status not in POINT_STATUSES:
            raise ValueError(f"status {record.status!r} is not one of {sorted(POINT_STATUSES)}")
        row = {
            "sweep_id": record.sweep_id,
            "idx": record.index,
            "point": record.point,
            "profile_hash": record.profile_hash,
            "profile": record.profile,
            "run_key": record.run_key,
            "run_id": record.run_id,
            "status": record.status,
            "reason": record.reason,
            "estimate": record.estimate,
            "created_at": datetime.now(UTC),
        }
        self._write(
            f"store point {record.index} of sweep {record.sweep_id}",
            sa.insert(sweep_points).values(**row),
        )

    def list_sweeps(self, limit: int | None = None) -> list[SweepRecord]:
        """Stored sweeps, newest first."""
        stmt = sa.select(*sweeps.c).order_by(sweeps.c.started_at.desc()).limit(limit)
        with self._reading("list sweeps") as conn:
            return [_sweep(row._mapping) for row in conn.execute(stmt)]

    def get_sweep(self, sweep_id_or_prefix: str) -> SweepRecord:
        """The sweep with this id, or the only one whose id starts with it."""
        key = sweep_id_or_prefix.strip()
        if not key:
            raise StoreError("give a sweep id, or the first characters of one")
        stmt = (
            sa.select(*sweeps.c)
            .where(sweeps.c.id.startswith(key, autoescape=True))
            .order_by(sweeps.c.started_at)
            .limit(11)
        )
        with self._reading(f"find sweep {key}") as conn:
            found = [_sweep(row._mapping) for row in conn.execute(stmt)]
        exact = [s for s in found if s.id == key]
        if exact:
            return exact[0]
        if not found:
            raise StoreError(f"no sweep {key} in {self.url} (polygon sweep FILE starts one)")
        if len(found) > 1:
            ids = ", ".join(s.id for s in found[:10])
            raise StoreError(f"sweep id {key} is ambiguous: {ids}; give more characters")
        return found[0]

    def sweep_points(self, sweep_id: str) -> list[SweepPointRecord]:
        """The points of a sweep in order."""
        stmt = (
            sa.select(*sweep_points.c)
            .where(sweep_points.c.sweep_id == sweep_id)
            .order_by(sweep_points.c.idx)
        )
        with self._reading(f"read the points of sweep {sweep_id}") as conn:
            return [_point(row._mapping) for row in conn.execute(stmt)]

    def reusable_run(self, profile_hash: str, run_key: str) -> str | None:
        """The newest finished run of a stored point with this profile and run key."""
        stmt = (
            sa.select(sweep_points.c.run_id)
            .join(runs, runs.c.id == sweep_points.c.run_id)
            .where(
                sweep_points.c.profile_hash == profile_hash,
                sweep_points.c.run_key == run_key,
                sweep_points.c.status.in_(("done", "reused")),
                runs.c.status == "finished",
            )
            .order_by(sweep_points.c.pk.desc())
            .limit(1)
        )
        with self._reading("look for a reusable run") as conn:
            return conn.execute(stmt).scalar_one_or_none()

    def reusable_calls(
        self, profile_hash: str, suite_hash: str, seed: int, judging: Mapping[str, Any]
    ) -> dict[str, str]:
        """Conversation id -> the run holding it, over the finished runs of stored points with
        this profile, suite version and seed whose judge, rubric and repeats equal `judging`
        (newest run first: an id stored in several runs comes from the newest)."""
        stmt = (
            sa.select(conversations.c.id, runs.c.id, runs.c.config)
            .join(runs, runs.c.id == conversations.c.run_id)
            .join(sweep_points, sweep_points.c.run_id == runs.c.id)
            .where(
                sweep_points.c.profile_hash == profile_hash,
                sweep_points.c.status.in_(("done", "reused")),
                runs.c.status == "finished",
                runs.c.suite_hash == suite_hash,
                runs.c.seed == seed,
            )
            .order_by(sweep_points.c.pk.desc(), conversations.c.idx)
        )
        wanted = {key: judging.get(key) for key in JUDGING_KEYS}
        found: dict[str, str] = {}
        with self._reading("look for reusable calls") as conn:
            for conversation_id, run_id, config in conn.execute(stmt):
                if {key: (config or {}).get(key) for key in JUDGING_KEYS} != wanted:
                    continue
                found.setdefault(conversation_id, run_id)
        return found

    def copy_conversation(
        self, source_run_id: str, conversation_id: str, target_run_id: str, index: int
    ) -> None:
        """Copy a stored conversation with all its stage results into another run, at
        position `index` there, in one transaction (all of it or none)."""
        action = f"copy conversation {conversation_id} of run {source_run_id} to {target_run_id}"
        try:
            with self._engine.begin() as conn:
                source = conn.execute(
                    sa.select(*conversations.c).where(
                        conversations.c.run_id == source_run_id,
                        conversations.c.id == conversation_id,
                    )
                ).first()
                if source is None:
                    raise StoreError(f"no conversation {conversation_id} in run {source_run_id}")
                row = {k: v for k, v in source._mapping.items() if k != "pk"}
                row.update(run_id=target_run_id, idx=index)
                new_pk = conn.execute(
                    sa.insert(conversations).values(**row).returning(conversations.c.pk)
                ).scalar_one()
                stages = conn.execute(
                    sa.select(*stage_results.c).where(
                        stage_results.c.conversation_pk == source._mapping["pk"]
                    )
                ).all()
                copies = [
                    {
                        **{k: v for k, v in stage._mapping.items() if k != "pk"},
                        "run_id": target_run_id,
                        "conversation_pk": new_pk,
                        "idx": index,
                    }
                    for stage in stages
                ]
                if copies:
                    conn.execute(sa.insert(stage_results), copies)
        except SQLAlchemyError as exc:
            raise self._failure(action, exc) from exc

    def recorded_usage(self, profile_hash: str) -> list[tuple[int, dict[str, Any]]]:
        """(calls, llm_usage) of the finished runs of stored points with this profile,
        newest first: what the profile's calls cost before."""
        count = (
            sa.select(sa.func.count()).where(conversations.c.run_id == runs.c.id).scalar_subquery()
        )
        stmt = (
            sa.select(count, runs.c.config)
            .join(sweep_points, sweep_points.c.run_id == runs.c.id)
            .where(sweep_points.c.profile_hash == profile_hash, runs.c.status == "finished")
            .order_by(sweep_points.c.pk.desc())
            .limit(5)
        )
        with self._reading("read recorded usage") as conn:
            rows = conn.execute(stmt).all()
        found = []
        for calls, config in rows:
            usage = (config or {}).get("llm_usage")
            if calls and isinstance(usage, Mapping):
                found.append((int(calls), dict(usage)))
        return found

    def update_run_config(self, run_id: str, updates: Mapping[str, Any]) -> None:
        """Merge `updates` into a stored run's config (a sweep's or an ablation's links)."""
        try:
            with self._engine.begin() as conn:
                current = conn.execute(
                    sa.select(runs.c.config).where(runs.c.id == run_id)
                ).scalar_one_or_none()
                if current is None:
                    raise StoreError(f"no run {run_id} in {self.url}")
                merged = {**current, **json.loads(json.dumps(dict(updates)))}
                conn.execute(sa.update(runs).where(runs.c.id == run_id).values(config=merged))
        except SQLAlchemyError as exc:
            raise self._failure(f"update run {run_id}", exc) from exc

    def _write(self, action: str, stmt: Any) -> None:
        try:
            with self._engine.begin() as conn:
                conn.execute(stmt)
        except SQLAlchemyError as exc:
            raise self._failure(action, exc) from exc


def _sweep_row(record: SweepRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "name": record.name,
        "path": record.path,
        "config": record.config,
        "status": record.status,
        "reason": record.reason,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
    }


def _sweep(row: RowMapping) -> SweepRecord:
    return SweepRecord(**{key: row[key] for key in SweepRecord.__dataclass_fields__})


def _point(row: RowMapping) -> SweepPointRecord:
    return SweepPointRecord(
        sweep_id=row["sweep_id"],
        index=row["idx"],
        point=row["point"],
        profile_hash=row["profile_hash"],
        profile=row["profile"],
        run_key=row["run_key"],
        run_id=row["run_id"],
        status=row["status"],
        reason=row["reason"],
        estimate=row["estimate"],
    )
