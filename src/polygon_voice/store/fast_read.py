"""Listing runs from a SQLite file with the standard library alone (no SQLAlchemy import).

`polygon runs` is read often and does little: importing SQLAlchemy was most of its time. When
the database is a SQLite file that exists and is at the schema revision this version knows,
it is opened read-only with `sqlite3` and queried with the very statement `Store.list_runs`
executes (`LIST_RUNS_SQL`, generated from it and pinned to it by a test); the columns are
converted as SQLAlchemy's column types convert them. In every other case (PostgreSQL, a new
file to create, an older schema to migrate, any database error) the caller opens a `Store`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from polygon_voice.store.revision import HEAD_REVISION, VERSION_TABLE
from polygon_voice.store.run_record import RunRecord

SQLITE_PREFIX = "sqlite:///"
# `Store.list_runs` compiled for SQLite; parameters (limit, offset). Regenerate with
# `python -m polygon_voice.store.fast_read` after the `runs` table or the query changes.
LIST_RUNS_SQL = (
    "SELECT runs.id, runs.suite, runs.suite_path, runs.suite_hash, runs.agent, runs.seed, "
    "runs.status, runs.started_at, runs.finished_at, runs.config, runs.polygon_version, "
    "(SELECT count(*) AS count_1 \n"
    "FROM conversations \n"
    "WHERE conversations.run_id = runs.id) AS conversation_count \n"
    "FROM runs ORDER BY runs.started_at DESC, runs.id DESC\n"
    " LIMIT ? OFFSET ?"
)
# Columns that SQLAlchemy's types convert when read (store/schema.py): UtcDateTime and JSON.
DATETIME_COLUMNS = ("started_at", "finished_at")
JSON_COLUMNS = ("config",)


def list_runs_read_only(url: str, limit: int) -> list[RunRecord] | None:
    """The newest `limit` runs, as `Store(url).list_runs(limit)` gives them, or None when
    this database must be opened by the Store (not a SQLite file at the current schema)."""
    path = sqlite_file(url)
    if path is None or limit < 0:
        return None
    try:
        connection = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        if stored_revision(connection) != HEAD_REVISION:
            return None
        cursor = connection.execute(LIST_RUNS_SQL, (limit, 0))
        names = [column[0] for column in cursor.description]
        return [run_record(dict(zip(names, row, strict=True))) for row in cursor]
    except (sqlite3.Error, ValueError, TypeError, OverflowError):
        # Unreadable or unexpected content: the Store path reports it as it always has.
        return None
    finally:
        connection.close()


def sqlite_file(url: str) -> str | None:
    """The file of a plain `sqlite:///PATH` URL, or None for any other URL.

    URLs with a driver, query options or percent escapes (which SQLAlchemy decodes) and
    in-memory databases are left to the Store, so the file opened here is the one it opens.
    """
    if not url.startswith(SQLITE_PREFIX):
        return None
    path = url[len(SQLITE_PREFIX) :]
    if not path or path == ":memory:" or any(char in path for char in "?%"):
        return None
    return path


def stored_revision(connection: sqlite3.Connection) -> str | None:
    """The revision the database is at, as the Store reads it (several heads joined by ",")."""
    rows = connection.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall()
    revisions = sorted(str(row[0]) for row in rows)
    return ",".join(revisions) if revisions else None


def run_record(row: Mapping[str, Any]) -> RunRecord:
    """A row of LIST_RUNS_SQL as the Store's RunRecord."""
    values = dict(row)
    for name in DATETIME_COLUMNS:
        values[name] = utc_datetime(values[name])
    for name in JSON_COLUMNS:
        values[name] = None if values[name] is None else json.loads(values[name])
    return RunRecord.model_validate(values)


def utc_datetime(value: str | None) -> datetime | None:
    """A stored UtcDateTime as SQLAlchemy reads it from SQLite: ISO text, read as UTC."""
    if value is None:
        return None
    parsed = datetime.fromisoformat(value)
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def store_list_runs_sql() -> str:
    """The statement `Store.list_runs` executes, compiled for SQLite (imports SQLAlchemy)."""
    from sqlalchemy.dialects import sqlite

    from polygon_voice.store.store import list_runs_statement

    return str(list_runs_statement(limit=1).compile(dialect=sqlite.dialect()))


if __name__ == "__main__":
    print(store_list_runs_sql())
