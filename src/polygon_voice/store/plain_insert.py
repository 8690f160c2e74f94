"""Rows inserted through SQLite's own cursor, for the import's groups of calls.

An import stores 64 calls at a time in two statements. On SQLite, SQLAlchemy's side of those
two statements (its parameter handling and the sorted RETURNING of the keys) cost more than
SQLite's: this inserts the same rows, bound the same way (each column type's own bind
processor, so a time is stored as the same text), on the DBAPI connection of the caller's
transaction, so its commit or rollback covers them. The keys come from `lastrowid`, in the
order the rows were given, as SQLAlchemy's RETURNING gave them. SQLAlchemy's statement
events do not see these inserts; PostgreSQL keeps the SQLAlchemy path.
"""

from __future__ import annotations

import operator
import sqlite3
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.exc import DBAPIError, StatementError
from sqlalchemy.types import TypeEngine

_Plan = tuple[str, list[tuple[int, Callable[[Any], Any]]]]
# Per dialect (an engine's), table and column order: the INSERT's text and each processed
# column's processor (a time's, to text), made once rather than for every group.
_PLANS: weakref.WeakKeyDictionary[Dialect, dict[tuple[str, tuple[str, ...]], _Plan]] = (
    weakref.WeakKeyDictionary()
)


def is_sqlite(conn: Connection) -> bool:
    """Whether `conn` talks to SQLite through the standard library's driver."""
    return conn.dialect.name == "sqlite" and conn.dialect.driver == "pysqlite"


def insert_rows_with_keys(
    conn: Connection, table: sa.Table, rows: Sequence[Mapping[str, Any]]
) -> list[int]:
    """Insert `rows` (the same keys in each) one by one; their primary keys, in order."""
    sql, values = _bound(conn.dialect, table, rows)
    cursor = _cursor(conn)
    keys: list[int] = []
    try:
        for row in values:
            cursor.execute(sql, row)
            assert cursor.lastrowid is not None  # an INSERT of one row sets it
            keys.append(cursor.lastrowid)
    except sqlite3.Error as exc:
        raise _wrapped(sql, exc) from exc
    finally:
        cursor.close()
    return keys


def insert_rows(conn: Connection, table: sa.Table, rows: Sequence[Mapping[str, Any]]) -> None:
    """Insert `rows` (the same keys in each) in one executemany."""
    sql, values = _bound(conn.dialect, table, rows)
    cursor = _cursor(conn)
    try:
        cursor.executemany(sql, values)
    except sqlite3.Error as exc:
        raise _wrapped(sql, exc) from exc
    finally:
        cursor.close()


def _cursor(conn: Connection) -> sqlite3.Cursor:
    raw = conn.connection.driver_connection
    if not isinstance(raw, sqlite3.Connection):
        raise TypeError(f"not a SQLite connection: {type(raw).__name__}")
    return raw.cursor()


def _bound(
    dialect: Dialect, table: sa.Table, rows: Sequence[Mapping[str, Any]]
) -> tuple[str, list[list[Any]]]:
    """The INSERT's text and each row's values in its column order, as SQLAlchemy binds them."""
    columns = tuple(rows[0])
    sql, processors = _plan(dialect, table, columns)
    if len(columns) > 1:  # one C call a row; itemgetter of one name gives no tuple
        in_order = operator.itemgetter(*columns)
        values = [list(in_order(row)) for row in rows]
    else:
        values = [[row[name] for name in columns] for row in rows]
    for position, process in processors:
        _process_column(values, position, process)
    return sql, values


_UNSEEN = object()


def _process_column(values: list[list[Any]], position: int, process: Callable[[Any], Any]) -> None:
    """Each row's value at `position` bound by `process`. The rows of a group share one
    value there (the creation time, one object for all), which is bound once: binding a
    time is a Python call that writes text, for every row."""
    last: object = _UNSEEN
    bound: Any = None
    for row in values:
        value = row[position]
        if value is not last:
            last, bound = value, process(value)
        row[position] = bound


def _plan(dialect: Dialect, table: sa.Table, columns: tuple[str, ...]) -> _Plan:
    plans = _PLANS.setdefault(dialect, {})
    plan = plans.get((table.name, columns))
    if plan is None:
        names = ", ".join(dialect.identifier_preparer.quote(name) for name in columns)
        marks = ", ".join("?" for _ in columns)
        sql = f"INSERT INTO {dialect.identifier_preparer.format_table(table)} ({names}) "
        sql += f"VALUES ({marks})"
        processors: list[tuple[int, Callable[[Any], Any]]] = [
            (position, process)
            for position, name in enumerate(columns)
            if (process := _processor(table.c[name].type, dialect)) is not None
        ]
        plan = plans[table.name, columns] = (sql, processors)
    return plan


def _wrapped(sql: str, exc: sqlite3.Error) -> StatementError:
    # The same exception SQLAlchemy raises for the driver's (IntegrityError for a clash).
    return DBAPIError.instance(sql, None, exc, sqlite3.Error)


def _processor(kind: TypeEngine[Any], dialect: Dialect) -> Callable[[Any], Any] | None:
    # The type as this dialect stores it (SQLite's DATETIME writes text), as SQLAlchemy binds.
    return kind.dialect_impl(dialect).bind_processor(dialect)
