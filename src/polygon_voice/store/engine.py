"""Opening a SQLAlchemy engine for a URL, with SQLite tuned for many small commits."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

from polygon_voice.store.errors import StoreError
from polygon_voice.store.urls import DB_ENV, mask_url

POSTGRES_EXTRA = "pip install 'polygon-voice[postgres]'"
SQLITE_LOCK_WAIT_SECONDS = 30.0


def open_engine(url: str) -> Engine:
    """An engine for `url`; StoreError (URL masked) when the URL or its driver is unusable."""
    parsed = _parse(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    try:
        # Processes sharing one SQLite file (two runs, pytest-xdist workers, a migration in
        # progress) wait for each other's write lock this long before "database is locked"
        # (Python's default is 5 s, too little on a loaded machine).
        engine = sa.create_engine(
            parsed, connect_args={"timeout": SQLITE_LOCK_WAIT_SECONDS} if sqlite else {}
        )
    except NoSuchModuleError as exc:
        raise StoreError(
            f"unknown database kind '{parsed.drivername}' in {mask_url(url)}; "
            "use a file path, sqlite:///path/to/polygon.db or postgresql://user@host/db"
        ) from exc
    except ImportError as exc:
        raise StoreError(_missing_driver(parsed, url, exc)) from exc
    if sqlite:
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def open_hint(url: str) -> str:
    """What to check when a database at `url` cannot be opened."""
    if make_url(url).get_backend_name() == "sqlite":
        return f"check that its folder exists and is writable, or set {DB_ENV} to another path"
    return "check that the server is running and that host, port, user and database are right"


def _parse(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as exc:
        raise StoreError(
            f"'{mask_url(url)}' is not a database URL; use a file path, "
            "sqlite:///path/to/polygon.db or postgresql://user@host/db"
        ) from exc


def _missing_driver(parsed: URL, url: str, exc: ImportError) -> str:
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() == "psycopg":
        return (
            f"the PostgreSQL driver for {mask_url(url)} is not installed ({exc}); "
            f"install the postgres extra: {POSTGRES_EXTRA}"
        )
    return f"the database driver for {mask_url(url)} is not installed: {exc}"


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL + synchronous=NORMAL: a commit is an append without fsync, so storing each
    # conversation as it ends stays cheap, and readers (the web app) never block the writer.
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()
