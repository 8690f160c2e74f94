"""A new SQLite database gets the migrations' schema from shipped statements, without Alembic;
every other database still goes through Alembic (store/new_schema.py)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic import command

from polygon_voice.store import Store, new_schema
from polygon_voice.store.engine import open_engine
from polygon_voice.store.migrate import HEAD_REVISION, ensure_schema


def _everything_sqlite_keeps(path: Path) -> dict[str, Any]:
    with sqlite3.connect(path) as connection:
        return {
            "objects": connection.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid"
            ).fetchall(),
            "revision": connection.execute("SELECT * FROM alembic_version").fetchall(),
            "user_version": connection.execute("PRAGMA user_version").fetchall(),
        }


def _migrated_by_alembic(path: Path) -> None:
    engine = open_engine(f"sqlite:///{path}")
    try:
        assert ensure_schema(engine, shipped=False)
    finally:
        engine.dispose()


def test_the_shipped_statements_build_what_the_migrations_build(tmp_path: Path) -> None:
    _migrated_by_alembic(tmp_path / "alembic.db")
    store = Store(f"sqlite:///{tmp_path / 'shipped.db'}")
    store.close()
    assert store.migrated
    shipped = _everything_sqlite_keeps(tmp_path / "shipped.db")
    assert shipped == _everything_sqlite_keeps(tmp_path / "alembic.db"), (
        "the migrations changed: ship the statements again "
        "(`python -m polygon_voice.store.new_schema`)"
    )
    assert shipped["revision"] == [(HEAD_REVISION,)]
    assert new_schema.REVISION == HEAD_REVISION


def test_a_new_database_is_made_without_running_alembic(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("Alembic ran for a new SQLite database")

    monkeypatch.setattr(command, "upgrade", fail)
    store = Store(db_url)
    try:
        assert store.migrated
        assert store.list_runs() == []
    finally:
        store.close()


def test_opening_a_new_database_imports_no_alembic(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    code = (
        "import sys\nfrom polygon_voice.store import Store\n"
        f"Store({url!r}).close()\nprint('alembic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "False"


def test_a_file_with_tables_of_its_own_goes_through_alembic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    upgraded: list[object] = []
    monkeypatch.setattr(command, "upgrade", lambda *args, **kwargs: upgraded.append(args))
    Store(f"sqlite:///{path}").close()
    assert len(upgraded) == 1


def test_shipped_statements_for_another_revision_are_not_used(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(new_schema, "REVISION", "0001")
    upgraded: list[object] = []
    monkeypatch.setattr(command, "upgrade", lambda *args, **kwargs: upgraded.append(args))
    Store(db_url).close()
    assert len(upgraded) == 1


def test_the_statements_print_back_as_the_module_holds_them() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "polygon_voice.store.new_schema"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    printed: dict[str, Any] = {}
    exec(done.stdout, printed)  # the printed text is the module's assignment
    assert printed["STATEMENTS"] == new_schema.STATEMENTS
    assert printed["REVISION"] == new_schema.REVISION == HEAD_REVISION
