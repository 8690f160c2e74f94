"""The schema comes from the packaged Alembic migrations, applied once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from polygon_voice.store import Store, StoreError
from polygon_voice.store.migrate import HEAD_REVISION, MIGRATIONS_DIR, alembic_config
from polygon_voice.store.schema import metadata


def _revision(db_url: str) -> str | None:
    engine = sa.create_engine(db_url)
    try:
        with engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()
    finally:
        engine.dispose()


def test_head_constant_matches_the_migration_scripts() -> None:
    script = ScriptDirectory.from_config(alembic_config())
    assert script.get_heads() == [HEAD_REVISION]


def test_migrations_ship_inside_the_package() -> None:
    assert (MIGRATIONS_DIR / "env.py").is_file()
    assert any((MIGRATIONS_DIR / "versions").glob("0001_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0002_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0003_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0004_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0005_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0006_*.py"))
    assert any((MIGRATIONS_DIR / "versions").glob("0007_*.py"))


def test_migrates_an_empty_database_to_head(db_url: str) -> None:
    store = Store(db_url)
    store.close()
    assert store.migrated
    assert _revision(db_url) == HEAD_REVISION
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        # The packaged migrations and schema.py describe the same tables, columns and indexes.
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    engine.dispose()
    assert tables == {
        "alembic_version",
        "runs",
        "conversations",
        "stage_results",
        "personas",
        "run_leases",
        "sweeps",
        "sweep_points",
    }
    assert diff == []


def test_reopening_does_not_migrate_again(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    Store(db_url).close()

    def fail(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("upgrade ran on a database already at head")

    monkeypatch.setattr(command, "upgrade", fail)
    reopened = Store(db_url)
    reopened.close()
    assert not reopened.migrated
    assert _revision(db_url) == HEAD_REVISION


def test_sqlite_runs_in_wal_mode(store: Store, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "results.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_foreign_keys_are_enforced(store: Store) -> None:
    with store._engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_a_newer_schema_is_refused_clearly(db_url: str) -> None:
    Store(db_url).close()
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    engine.dispose()
    with pytest.raises(StoreError, match=r"revision 9999.*upgrade polygon-voice"):
        Store(db_url)


def test_downgrade_to_base_and_back(db_url: str) -> None:
    Store(db_url).close()
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "base")
    with engine.connect() as conn:
        assert set(sa.inspect(conn).get_table_names()) == {"alembic_version"}
    engine.dispose()
    reopened = Store(db_url)
    reopened.close()
    assert reopened.migrated
    assert _revision(db_url) == HEAD_REVISION
