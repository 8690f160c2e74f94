"""The on-disk response cache: one SQLite table, keyed by the hash of the whole request.

Any change to the request (model, endpoint, messages, tools, schema, temperature, seed, ...)
gives another key, so a cached answer is only ever replayed for exactly the same request.
The API key is never part of the key nor of the stored value.

SQLite rather than a file per response: creating a small file costs ~0.5 ms of CPU here
against ~0.03 ms for a row, a big run would leave a folder of 100,000 files, and SQLite's
WAL mode lets several processes read and write one cache safely.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from polygon_voice.textsafe import storable_text

log = logging.getLogger("polygon_voice.llm")
# Bumped when the key's recipe or the stored value changes, so old entries are never misread.
CACHE_FORMAT = 1
DB_NAME = "responses.sqlite3"
_OPEN_ATTEMPTS = 20
_SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, body BLOB NOT NULL)"


def encode_body(body: Mapping[str, Any]) -> bytes:
    """The canonical JSON of a request body: sent as is, and hashed for the cache key.

    A lone surrogate in a message (textsafe) cannot be encoded: it is sent as U+FFFD.
    """
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return storable_text(text)[0].encode()


def request_key(base_url: str, body: Mapping[str, Any] | bytes) -> str:
    """The sha256 of the endpoint and the canonical JSON of the full request body."""
    payload = body if isinstance(body, bytes) else encode_body(body)
    prefix = f"polygon-llm-cache {CACHE_FORMAT}\n{base_url.rstrip('/')}\n".encode()
    return hashlib.sha256(prefix + payload).hexdigest()


class ResponseCache:
    """Response bodies by request key in `<directory>/responses.sqlite3`.

    A cache that cannot be read or written (locked too long, damaged) degrades to misses
    with a warning: it never fails a call.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / DB_NAME
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0

    def get(self, key: str) -> bytes | None:
        """The stored response body for `key`, or None."""
        row = self._run("SELECT body FROM responses WHERE key = ?", (key,), fetch=True)
        return bytes(row[0]) if row else None

    def put(self, key: str, body: bytes) -> None:
        """Store a response body under `key` (replacing any older one)."""
        self._run("INSERT OR REPLACE INTO responses (key, body) VALUES (?, ?)", (key, body))

    def discard(self, key: str) -> None:
        """Forget one entry (a stored body that no longer parses, say)."""
        self._run("DELETE FROM responses WHERE key = ?", (key,))

    def items(self) -> Iterator[tuple[str, bytes]]:
        """Every (key, body) stored, for inspection."""
        with self._lock:
            rows = self._open().execute("SELECT key, body FROM responses").fetchall()
        return ((key, bytes(body)) for key, body in rows)

    def __len__(self) -> int:
        row = self._run("SELECT count(*) FROM responses", (), fetch=True)
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the database connection (it reopens when used again)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

    def _run(self, sql: str, args: tuple[Any, ...], *, fetch: bool = False) -> Any:
        try:
            with self._lock:
                cursor = self._open().execute(sql, args)
                return cursor.fetchone() if fetch else None
        except (sqlite3.Error, OSError) as exc:
            log.warning("LLM response cache %s unusable (%s): treating as a miss", self.path, exc)
            return None

    def _open(self) -> sqlite3.Connection:
        # A connection must not cross a fork: a child process opens its own.
        if self._connection is None or self._pid != os.getpid():
            self.directory.mkdir(parents=True, exist_ok=True)
            self._connection, self._pid = _connect(self.path), os.getpid()
        return self._connection


def _connect(path: Path) -> sqlite3.Connection:
    # Switching a new database to WAL needs a lock that SQLite does not wait for: when several
    # processes open a fresh cache at once, one may be told "locked" and simply tries again.
    for attempt in range(_OPEN_ATTEMPTS):
        connection = sqlite3.connect(
            path, timeout=30, isolation_level=None, check_same_thread=False
        )
        try:
            if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                connection.execute("PRAGMA journal_mode=WAL")
            # NORMAL in WAL mode: a crash may lose the last answers, never corrupt the cache.
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(_SCHEMA)
            return connection
        except sqlite3.OperationalError as exc:
            connection.close()
            if "locked" not in str(exc) or attempt + 1 == _OPEN_ATTEMPTS:
                raise
            time.sleep(0.01 * (attempt + 1))
    raise AssertionError("unreachable")
