"""The results database: runs, their conversations and what later stages made of them."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeAlias

import sqlalchemy as sa
from pydantic import BaseModel, ValidationError
from sqlalchemy.engine import Connection, Row
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError

from polygon_voice.model.trace import ConversationResult, TraceEntry
from polygon_voice.store.engine import SQLITE_LOCK_WAIT_SECONDS, open_engine, open_hint
from polygon_voice.store.errors import ConversationExists, StoreError
from polygon_voice.store.leases import LeaseStore
from polygon_voice.store.migrate import ensure_schema
from polygon_voice.store.personas import PersonaStore
from polygon_voice.store.plain_insert import insert_rows, insert_rows_with_keys, is_sqlite
from polygon_voice.store.records import (
    RUN_STATUSES,
    ConversationSummary,
    RunRecord,
    utc,
)
from polygon_voice.store.schema import conversations, runs, stage_results
from polygon_voice.store.sweeps import SweepStore
from polygon_voice.store.urls import mask_url, redact
from polygon_voice.textsafe import storable, storable_text

# Rows fetched per round trip when streaming a run; a conversation is a few kB of JSON.
STREAM_BATCH = 100
# How many candidates an ambiguous prefix or a missing conversation lists.
LIST_LIMIT = 10

# What a later stage stores for one conversation: a JSON object, given as a mapping or a model.
StageData: TypeAlias = Mapping[str, Any] | BaseModel
# One stage result to store with its conversation: (stage, name, data).
StageResult: TypeAlias = tuple[str, str, StageData]

# Rows and statements of any shape (SQLAlchemy 2.1 types them by column tuple).
_AnyRow = Row[*tuple[Any, ...]]
_AnySelect = sa.Select[*tuple[Any, ...]]

_COUNT = (
    sa.select(sa.func.count())
    .where(conversations.c.run_id == runs.c.id)
    .scalar_subquery()
    .label("conversation_count")
)
_SELECT_RUN = sa.select(*runs.c, _COUNT)
_INSERT_CONVERSATION = sa.insert(conversations)
_INSERT_STAGE_RESULT = sa.insert(stage_results)
_SUMMARY_COLUMNS = (
    conversations.c.id,
    conversations.c.scenario_id,
    conversations.c.idx,
    conversations.c.end_reason,
    conversations.c.end_message,
    conversations.c.turn_count,
    conversations.c.tool_call_count,
)


class Store(PersonaStore, LeaseStore, SweepStore):
    """A results database opened (and migrated to this version's schema) by URL.

    Persona methods (`add_personas`, `list_personas`, ...) come from `PersonaStore`, run
    leases (`acquire_lease`, `renew_lease`, `release_lease`) from `LeaseStore`, sweeps
    (`create_sweep`, `sweep_points`, `reusable_run`, ...) from `SweepStore`.
    """

    def __init__(self, url: str) -> None:
        """Open the database at `url` and bring its schema up to date."""
        self.url = mask_url(url)  # password masked: safe to print
        self._engine = open_engine(url)
        try:
            # True when this open applied migrations (a new or older database).
            self.migrated = _ensure_schema_waiting(self._engine)
        except SQLAlchemyError as exc:
            self._engine.dispose()
            raise StoreError(
                f"cannot open the results database {self.url}: {_reason(exc)}; {open_hint(url)}"
            ) from exc
        except StoreError:
            self._engine.dispose()
            raise

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Release every connection; the Store is unusable afterwards."""
        self._engine.dispose()

    # -- runs ---------------------------------------------------------------------------------

    def create_run(self, run: RunRecord) -> None:
        """Store a new run; its config is kept with credentials masked."""
        values = run.model_dump(exclude={"conversation_count", "config"})
        values["config"] = redact(run.model_dump(mode="json")["config"])
        values["agent"] = mask_url(run.agent)
        values["suite_path"] = mask_url(run.suite_path)
        # A path or agent name given with undecodable bytes carries lone surrogates (textsafe).
        values = storable(values)[0]
        try:
            with self._engine.begin() as conn:
                conn.execute(sa.insert(runs), values)
        except IntegrityError as exc:
            raise StoreError(f"a run with id {run.id} is already stored in {self.url}") from exc
        except SQLAlchemyError as exc:
            raise self._failure(f"store run {run.id}", exc) from exc

    def finish_run(
        self,
        run_id: str,
        status: str,
        finished_at: datetime,
        config_updates: Mapping[str, Any] | None = None,
    ) -> None:
        """Set a run's final status and end time; `config_updates` are merged into its config
        (e.g. what the run's model calls cost)."""
        if status not in RUN_STATUSES:
            raise ValueError(f"status {status!r} is not one of {sorted(RUN_STATUSES)}")
        values: dict[str, Any] = {"status": status, "finished_at": utc(finished_at)}
        try:
            with self._engine.begin() as conn:
                if config_updates:
                    current = conn.execute(
                        sa.select(runs.c.config).where(runs.c.id == run_id)
                    ).scalar_one_or_none()
                    values["config"] = {
                        **(current or {}),
                        **redact(json.loads(json.dumps(dict(config_updates)))),
                    }
                stmt = sa.update(runs).where(runs.c.id == run_id).values(**values)
                updated = conn.execute(stmt).rowcount
        except SQLAlchemyError as exc:
            raise self._failure(f"finish run {run_id}", exc) from exc
        if updated == 0:
            raise self._no_run(run_id)

    def list_runs(self, limit: int | None = None) -> list[RunRecord]:
        """Runs newest first, each with its number of stored conversations."""
        stmt = list_runs_statement(limit)
        with self._reading("list runs") as conn:
            return [_run_record(row) for row in conn.execute(stmt)]

    def get_run(self, run_id_or_prefix: str) -> RunRecord:
        """The run with this id, or the only run whose id starts with it."""
        key = run_id_or_prefix.strip()
        if not key:
            raise StoreError("give a run id, or the first characters of one")
        with self._reading(f"find run {key}") as conn:
            exact = conn.execute(_SELECT_RUN.where(runs.c.id == key)).first()
            if exact is not None:
                return _run_record(exact)
            stmt = (
                _SELECT_RUN.where(runs.c.id.startswith(key, autoescape=True))
                .order_by(runs.c.started_at.desc(), runs.c.id.desc())
                .limit(LIST_LIMIT + 1)
            )
            matches = [_run_record(row) for row in conn.execute(stmt)]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise StoreError(f"no run id starts with '{key}' in {self.url}")
        raise StoreError(_ambiguous(key, matches))

    # -- conversations ------------------------------------------------------------------------

    def add_conversation(self, run_id: str, index: int, result: ConversationResult) -> None:
        """Store one finished conversation of a run, committed before this returns."""
        self.add_conversation_with_results(run_id, index, result, ())

    def add_conversation_with_results(
        self,
        run_id: str,
        index: int,
        result: ConversationResult,
        stage_results: Sequence[StageResult],
    ) -> None:
        """Store a conversation and its stage results, as (stage, name, data), in one commit.

        Either all of it is stored or none of it: a run killed mid-way never leaves a
        conversation without, say, its checks. A (stage, name) given twice, an empty stage
        or data that is not a JSON object raise ValueError before anything is written.
        """
        self.add_conversations_with_results(run_id, [(index, result, stage_results)])

    def add_conversations_with_results(
        self,
        run_id: str,
        calls: Sequence[tuple[int, ConversationResult, Sequence[StageResult]]],
    ) -> None:
        """Store several conversations, each (index, result, stage results), in one commit.

        All of them or none: a conversation stored already (ConversationExists names the
        first of the group) or any other refusal rolls the whole group back. An import uses
        it to pay one commit for many small calls; it stores a refused group again call by
        call, so that only the bad call fails.
        """
        now = datetime.now(UTC)
        prepared = [
            _call_rows(run_id, index, result, stages, now) for index, result, stages in calls
        ]
        try:
            with self._engine.begin() as conn:
                if len(prepared) == 1:
                    _insert_call(conn, *prepared[0])
                else:
                    _insert_calls(conn, prepared)
        except IntegrityError as exc:
            # The stage rows cannot clash (checked above, new conversations): the run is
            # missing or a conversation is stored already.
            ids = [row["id"] for row, _ in prepared]
            raise self._conflict(
                run_id, ids[0] if len(ids) == 1 else self._clash(run_id, ids)
            ) from exc
        except SQLAlchemyError as exc:
            what = ", ".join(row["id"] for row, _ in prepared[:3])
            more = ", ..." if len(prepared) > 3 else ""
            raise self._failure(f"store conversation {what}{more} of run {run_id}", exc) from exc

    def conversation_ids(self, run_id: str) -> set[str]:
        """The ids of the conversations stored for a run (to resume it without redoing work)."""
        stmt = sa.select(conversations.c.id).where(conversations.c.run_id == run_id)
        with self._reading(f"read run {run_id}") as conn:
            self._require_run(conn, run_id)
            return set(conn.execute(stmt).scalars())

    def iter_conversations(self, run_id: str) -> Iterator[ConversationResult]:
        """A run's conversations in index order, fetched in batches rather than all at once."""
        stmt = (
            sa.select(conversations.c.id, conversations.c.data)
            .where(conversations.c.run_id == run_id)
            .order_by(conversations.c.idx, conversations.c.pk)
        )
        for conversation_id, data in self._stream(run_id, stmt):
            yield _parse_conversation(run_id, conversation_id, data)

    def iter_summaries(self, run_id: str) -> Iterator[ConversationSummary]:
        """A run's conversation summaries in index order, without reading the JSON."""
        stmt = (
            sa.select(*_SUMMARY_COLUMNS)
            .where(conversations.c.run_id == run_id)
            .order_by(conversations.c.idx, conversations.c.pk)
        )
        for row in self._stream(run_id, stmt):
            yield ConversationSummary(
                id=row.id,
                scenario_id=row.scenario_id,
                index=row.idx,
                end_reason=row.end_reason,
                end_message=row.end_message,
                turn_count=row.turn_count,
                tool_call_count=row.tool_call_count,
            )

    def get_conversation(self, run_id: str, conversation_id: str) -> ConversationResult:
        """One stored conversation of a run."""
        stmt = sa.select(conversations.c.data).where(
            conversations.c.run_id == run_id, conversations.c.id == conversation_id
        )
        with self._reading(f"read conversation {conversation_id} of run {run_id}") as conn:
            data = conn.execute(stmt).scalar_one_or_none()
            if data is None:
                self._require_run(conn, run_id)
                raise StoreError(self._missing_conversation(conn, run_id, conversation_id))
        return _parse_conversation(run_id, conversation_id, data)

    # -- stage results ------------------------------------------------------------------------

    def add_stage_result(
        self,
        run_id: str,
        conversation_id: str,
        stage: str,
        data: StageData,
        name: str = "",
    ) -> None:
        """Store what `stage` made of a stored conversation, committed before this returns.

        `name` tells sets of one stage apart (a rejudge stores a new named set); each
        (conversation, stage, name) is stored once. `data` must serialise to a JSON object
        (ValueError otherwise, before anything is written).
        """
        self.add_stage_results(run_id, conversation_id, [(stage, name, data)])

    def add_stage_results(
        self,
        run_id: str,
        conversation_id: str,
        results: Sequence[StageResult],
        *,
        replace: bool = False,
    ) -> None:
        """Store several stage results, as (stage, name, data), of a stored conversation in
        one commit: the judge's results are added after the conversation (stored first, so a
        kill while judging loses no finished call), all of them or none. `replace` drops the
        conversation's earlier rows of the same (stage, name) in the same commit (a resumed
        run judging again a call its judge model failed on)."""
        if not results:
            return
        find = sa.select(conversations.c.pk, conversations.c.idx).where(
            conversations.c.run_id == run_id, conversations.c.id == conversation_id
        )
        try:
            with self._engine.begin() as conn:
                found = conn.execute(find).first()
                if found is None:
                    self._require_run(conn, run_id)
                    raise StoreError(self._missing_conversation(conn, run_id, conversation_id))
                now = datetime.now(UTC)
                rows = _stage_rows(run_id, conversation_id, found[1], results, now)
                for row in rows:
                    row["conversation_pk"] = found[0]
                    if replace:
                        conn.execute(
                            sa.delete(stage_results).where(
                                stage_results.c.conversation_pk == found[0],
                                stage_results.c.stage == row["stage"],
                                stage_results.c.name == row["name"],
                            )
                        )
                conn.execute(_INSERT_STAGE_RESULT, rows)
        except IntegrityError as exc:
            stage, name, _ = results[0]
            raise self._stage_conflict(run_id, conversation_id, stage, name, exc) from exc
        except SQLAlchemyError as exc:
            what = _stage_label(*results[0][:2]) if len(results) == 1 else "the stage results"
            action = f"store {what} of conversation {conversation_id} of run {run_id}"
            raise self._failure(action, exc) from exc

    def iter_stage_results(
        self, run_id: str, stage: str, name: str = ""
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """(conversation id, data) for one stage's named set, in index order, in batches.

        Conversations without a result in that set are skipped.
        """
        stmt = (
            sa.select(stage_results.c.conversation_id, stage_results.c.data)
            .where(
                stage_results.c.run_id == run_id,
                stage_results.c.stage == stage,
                stage_results.c.name == name,
            )
            .order_by(stage_results.c.idx, stage_results.c.conversation_pk)
        )
        for conversation_id, data in self._stream(run_id, stmt):
            yield conversation_id, _parse_stage(run_id, conversation_id, stage, name, data)

    def stage_result_names(self, run_id: str, stage: str) -> list[str]:
        """The names of a stage's result sets in a run, sorted ("" is the default set)."""
        stmt = (
            sa.select(stage_results.c.name)
            .where(stage_results.c.run_id == run_id, stage_results.c.stage == stage)
            .distinct()
            .order_by(stage_results.c.name)
        )
        with self._reading(f"read run {run_id}") as conn:
            self._require_run(conn, run_id)
            return list(conn.execute(stmt).scalars())

    def get_stage_result(
        self, run_id: str, conversation_id: str, stage: str, name: str = ""
    ) -> dict[str, Any] | None:
        """What `stage` (set `name`) stored for one conversation; None when it stored nothing.

        A missing run or conversation is a StoreError, not None.
        """
        conversation_pk = (
            sa.select(conversations.c.pk)
            .where(conversations.c.run_id == run_id, conversations.c.id == conversation_id)
            .scalar_subquery()
        )
        stmt = sa.select(stage_results.c.data).where(
            stage_results.c.conversation_pk == conversation_pk,
            stage_results.c.stage == stage,
            stage_results.c.name == name,
        )
        label = _stage_label(stage, name)
        action = f"read {label} of conversation {conversation_id} of run {run_id}"
        with self._reading(action) as conn:
            data = conn.execute(stmt).scalar_one_or_none()
            if data is None:
                self._require_run(conn, run_id)
                if conn.execute(sa.select(conversation_pk)).scalar_one_or_none() is None:
                    raise StoreError(self._missing_conversation(conn, run_id, conversation_id))
                return None
        return _parse_stage(run_id, conversation_id, stage, name, data)

    # -- helpers ------------------------------------------------------------------------------

    def _reading(self, action: str) -> _Reading:
        return _Reading(self, action)

    def _stream(self, run_id: str, stmt: _AnySelect) -> Iterator[_AnyRow]:
        # A generator so the connection lives exactly as long as the caller keeps iterating.
        with self._reading(f"read run {run_id}") as conn:
            self._require_run(conn, run_id)
            result = conn.execution_options(yield_per=STREAM_BATCH).execute(stmt)
            yield from result

    def _require_run(self, conn: Connection, run_id: str) -> None:
        found = conn.execute(sa.select(runs.c.id).where(runs.c.id == run_id)).first()
        if found is None:
            raise self._no_run(run_id)

    def _no_run(self, run_id: str) -> StoreError:
        return StoreError(f"no run with id {run_id} in {self.url}")

    def _conflict(self, run_id: str, conversation_id: str) -> StoreError:
        with self._reading(f"read run {run_id}") as conn:
            self._require_run(conn, run_id)
        return ConversationExists(
            f"conversation {conversation_id} is already stored in run {run_id}; "
            "a conversation is stored once"
        )

    def _clash(self, run_id: str, ids: list[str]) -> str:
        """The conversation of a refused group that is stored already, or given twice."""
        stmt = sa.select(conversations.c.id).where(
            conversations.c.run_id == run_id, conversations.c.id.in_(ids)
        )
        with self._reading(f"read run {run_id}") as conn:
            stored = set(conn.execute(stmt).scalars())
        seen: set[str] = set()
        for conversation_id in ids:
            if conversation_id in stored or conversation_id in seen:
                return conversation_id
            seen.add(conversation_id)
        return ids[0]

    def _stage_conflict(
        self, run_id: str, conversation_id: str, stage: str, name: str, exc: IntegrityError
    ) -> StoreError:
        # The conversation was found in the same transaction, so this is the unique key,
        # unless the conversation vanished meanwhile; only a stored row proves a duplicate.
        if self.get_stage_result(run_id, conversation_id, stage, name) is None:
            action = f"store {_stage_label(stage, name)} of conversation {conversation_id}"
            return self._failure(f"{action} of run {run_id}", exc)
        return StoreError(
            f"{_stage_label(stage, name)} of conversation {conversation_id} is already stored "
            f"in run {run_id}; a stage result is stored once, store another set under a new name"
        )

    def _missing_conversation(self, conn: Connection, run_id: str, conversation_id: str) -> str:
        stmt = (
            sa.select(conversations.c.id)
            .where(conversations.c.run_id == run_id)
            .order_by(conversations.c.idx, conversations.c.pk)
            .limit(LIST_LIMIT)
        )
        existing = list(conn.execute(stmt).scalars())
        if not existing:
            return f"run {run_id} has no conversation {conversation_id}; it has none stored"
        total = conn.execute(
            sa.select(sa.func.count()).where(conversations.c.run_id == run_id)
        ).scalar_one()
        more = f" and {total - len(existing)} more" if total > len(existing) else ""
        return (
            f"run {run_id} has no conversation {conversation_id}; "
            f"it has {', '.join(existing)}{more}"
        )

    def _failure(self, action: str, exc: SQLAlchemyError) -> StoreError:
        return StoreError(f"could not {action} in the results database {self.url}: {_reason(exc)}")


class _Reading:
    """A read-only connection whose database errors come out as StoreError."""

    def __init__(self, store: Store, action: str) -> None:
        self._store = store
        self._action = action
        self._conn: Connection | None = None

    def __enter__(self) -> Connection:
        try:
            self._conn = self._store._engine.connect()
        except SQLAlchemyError as exc:
            raise self._store._failure(self._action, exc) from exc
        return self._conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._conn is not None
        self._conn.close()
        if isinstance(exc, SQLAlchemyError):
            raise self._store._failure(self._action, exc) from exc


def list_runs_statement(limit: int | None) -> _AnySelect:
    """Runs newest first; store/fast_read.py ships this statement compiled for SQLite."""
    return _SELECT_RUN.order_by(runs.c.started_at.desc(), runs.c.id.desc()).limit(limit)


def _run_record(row: _AnyRow) -> RunRecord:
    return RunRecord.model_validate(dict(row._mapping))


def _parse_conversation(run_id: str, conversation_id: str, data: str) -> ConversationResult:
    try:
        return ConversationResult.model_validate_json(data)
    except ValidationError as exc:
        raise StoreError(
            f"conversation {conversation_id} of run {run_id} does not match this version's "
            f"format ({exc.error_count()} errors, first: {exc.errors()[0]['msg']})"
        ) from exc


def _stage_label(stage: str, name: str) -> str:
    return f"the {stage} result '{name}'" if name else f"the {stage} result"


def _check_stage(stage: str, conversation_id: str) -> None:
    if not stage:
        raise ValueError(f"a stage result of conversation {conversation_id} names no stage")


def _json_default(value: object) -> Any:
    # Nested mappings and models inside a mapping; anything else is not JSON.
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON-serialisable")


# Compact, UTF-8 and strict (no NaN or Infinity, which are not JSON).
_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_json_default
)


def _call_rows(
    run_id: str,
    index: int,
    result: ConversationResult,
    stage_results: Sequence[StageResult],
    now: datetime,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The conversations row and the stage_results rows of one call about to be stored."""
    result, data = _conversation_json(result)
    row = {
        "run_id": run_id,
        "id": result.id,
        "scenario_id": result.scenario_id,
        "idx": index,
        "stage": result.stage,
        "end_reason": result.end.reason.value,
        "end_message": result.end.message,
        "turn_count": len(result.turns),
        "tool_call_count": len(result.tool_calls),
        "data": data,
        "created_at": now,
    }
    return row, _stage_rows(run_id, result.id, index, stage_results, now)


_INSERT_CONVERSATIONS_RETURNING = sa.insert(conversations).returning(
    conversations.c.pk, sort_by_parameter_order=True
)


def _insert_calls(
    conn: Connection, prepared: list[tuple[dict[str, Any], list[dict[str, Any]]]]
) -> None:
    """Many calls in two statements: the conversations (their keys back, in order), then
    every stage row; per-statement overhead is most of what a small call costs to store.
    On SQLite the same rows go through its own cursor (store/plain_insert.py)."""
    sqlite = is_sqlite(conn)
    calls = [row for row, _ in prepared]
    keys: Sequence[Any]
    if sqlite:
        keys = insert_rows_with_keys(conn, conversations, calls)
    else:
        keys = conn.execute(_INSERT_CONVERSATIONS_RETURNING, calls).scalars().all()
    stage_rows: list[dict[str, Any]] = []
    for key, (_, rows) in zip(keys, prepared, strict=True):
        for stage_row in rows:
            stage_row["conversation_pk"] = key
        stage_rows += rows
    if stage_rows and sqlite:
        insert_rows(conn, stage_results, stage_rows)
    elif stage_rows:
        conn.execute(_INSERT_STAGE_RESULT, stage_rows)


def _insert_call(conn: Connection, row: dict[str, Any], stage_rows: list[dict[str, Any]]) -> None:
    inserted = conn.execute(_INSERT_CONVERSATION, row).inserted_primary_key
    assert inserted is not None  # a single-row insert always has a key
    for stage_row in stage_rows:
        stage_row["conversation_pk"] = inserted[0]
    if len(stage_rows) == 1:
        conn.execute(_INSERT_STAGE_RESULT, stage_rows[0])
    elif stage_rows:
        conn.execute(_INSERT_STAGE_RESULT, stage_rows)


def _conversation_json(result: ConversationResult) -> tuple[ConversationResult, str]:
    """The conversation and its JSON; a string that no boundary cleaned (textsafe) is
    replaced here and noted in the trace, so one bad character never loses the call."""
    try:
        return result, result.model_dump_json()
    except ValueError:  # pydantic cannot encode a lone surrogate as UTF-8
        cleaned, count = storable(result)
        note = TraceEntry(
            seq=len(cleaned.trace),
            time=cleaned.end.time,
            source="engine",
            kind="text_sanitised",
            data={"where": "store", "replaced": count},
        )
        cleaned = cleaned.model_copy(update={"trace": [*cleaned.trace, note]})
        return cleaned, cleaned.model_dump_json()


def _model_json(data: BaseModel) -> str:
    try:
        return data.model_dump_json()
    except ValueError:  # an unstorable string (textsafe): replaced rather than fatal
        return storable(data)[0].model_dump_json()


def _stage_json(data: StageData, what: str) -> str:
    """`data` as JSON object text; ValueError naming `what` when it is not one."""
    try:
        if isinstance(data, BaseModel):
            text = _model_json(data)
        elif isinstance(data, Mapping):
            # json keeps a lone surrogate as is, and the database refuses it (textsafe).
            text = storable_text(_ENCODER.encode(data if type(data) is dict else dict(data)))[0]
        else:
            raise TypeError(f"a {type(data).__name__} is neither a mapping nor a pydantic model")
    except (TypeError, ValueError) as exc:  # pydantic's serialisation errors are ValueErrors
        raise ValueError(f"{what} is not JSON-serialisable: {exc}") from exc
    if not text.startswith("{"):
        raise ValueError(f"{what} must be a JSON object, not {text[:40]}")
    return text


def _stage_rows(
    run_id: str,
    conversation_id: str,
    index: int,
    stage_results: Sequence[StageResult],
    now: datetime,
) -> list[dict[str, Any]]:
    """The stage_results rows for a conversation about to be stored (conversation_pk unset)."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for stage, name, data in stage_results:
        _check_stage(stage, conversation_id)
        label = _stage_label(stage, name)
        if (stage, name) in seen:
            raise ValueError(f"{label} of conversation {conversation_id} is given twice")
        seen.add((stage, name))
        rows.append(
            {
                "run_id": run_id,
                "conversation_id": conversation_id,
                "idx": index,
                "stage": stage,
                "name": name,
                "data": _stage_json(data, f"{label} of conversation {conversation_id}"),
                "created_at": now,
            }
        )
    return rows


def _parse_stage(
    run_id: str, conversation_id: str, stage: str, name: str, data: str
) -> dict[str, Any]:
    try:
        parsed = json.loads(data)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise StoreError(
            f"{_stage_label(stage, name)} of conversation {conversation_id} of run {run_id} "
            "is not a JSON object in the database"
        )
    return parsed


def _ambiguous(key: str, matches: list[RunRecord]) -> str:
    shown = matches[:LIST_LIMIT]
    lines = [
        f"  {run.id}  {run.suite}  {run.started_at:%Y-%m-%d %H:%M} UTC  {run.status}"
        for run in shown
    ]
    more = "\n  ..." if len(matches) > LIST_LIMIT else ""
    return (
        f"'{key}' is the start of more than one run id; give more of it:\n"
        + "\n".join(lines)
        + more
    )


LOCKED_RETRY_SECONDS = 0.05


def _ensure_schema_waiting(engine: sa.Engine) -> bool:
    """`ensure_schema`, tried again while SQLite answers "database is locked" at once.

    The busy timeout makes a write wait for another's lock, but SQLite skips it where
    waiting could deadlock, and a new file whose journal mode another process is switching
    to WAL can answer "locked" at once too: seen when pytest-xdist workers open one new
    database together. The schema check is idempotent, so it is safe to try again, up to
    the same wait as a write's."""
    deadline = time.monotonic() + SQLITE_LOCK_WAIT_SECONDS
    while True:
        try:
            return ensure_schema(engine)
        except OperationalError as exc:
            locked = engine.dialect.name == "sqlite" and "locked" in str(exc.orig)
            if not locked or time.monotonic() >= deadline:
                raise
            time.sleep(LOCKED_RETRY_SECONDS)


def _reason(exc: SQLAlchemyError) -> str:
    # The driver's own message, first line only, without SQLAlchemy's SQL and URL dump.
    detail = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
    text = str(detail).strip().splitlines()
    return mask_url(text[0]) if text else type(detail).__name__
