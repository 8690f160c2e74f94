"""Listing runs without SQLAlchemy: the same statement, the same records, else the Store."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.dialects import sqlite

from polygon_voice.store import Store, list_runs_read_only
from polygon_voice.store.fast_read import LIST_RUNS_SQL, store_list_runs_sql
from polygon_voice.store.migrate import HEAD_REVISION, alembic_config
from polygon_voice.store.store import list_runs_statement
from tests.store.store_factories import T0, make_result, make_run

ROOT = Path(__file__).resolve().parents[2]


def _fill(url: str) -> None:
    """Runs of every shape the `runs` table holds."""
    with Store(url) as store:
        store.create_run(make_run("r-empty", minutes=0))
        store.create_run(make_run("r-two", minutes=5, seed=2**40))
        store.add_conversation("r-two", 0, make_result("c1"))
        store.add_conversation("r-two", 1, make_result("c2", scenario_id="cancel"))
        store.finish_run("r-two", "finished", datetime(2025, 3, 1, 13, 30, 0, 1, tzinfo=UTC))
        store.create_run(
            make_run(
                "r-url",
                minutes=10,
                agent="https://bot:hunter2@agents.example/talk?token=abc",
                config={
                    "noise": {"level": "heavy", "wer": [0.1, 0.25]},
                    "llm_usage": {"judge": {"calls": 3, "cost": 0.0125, "model": "m ü"}},
                    "headers": {"Authorization": "Bearer sk-secret"},
                    "nothing": None,
                },
            )
        )
        store.finish_run("r-url", "failed", T0 + timedelta(minutes=11))
        # Same start as r-url: the id breaks the tie, in both paths.
        store.create_run(make_run("r-tie", minutes=10, status="interrupted"))
        # Started in another time zone: stored and read back as UTC.
        offset = datetime(2025, 3, 1, 14, 0, tzinfo=UTC).astimezone(timezone(timedelta(hours=-5)))
        store.create_run(make_run("r-zone", started_at=offset, suite="ünïcode [bold]x[/]"))


@pytest.fixture
def filled_url(db_url: str) -> str:
    _fill(db_url)
    return db_url


def _path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///"))


def test_the_shipped_statement_is_the_stores_list_runs_compiled_for_sqlite() -> None:
    assert store_list_runs_sql() == LIST_RUNS_SQL, (
        "Store.list_runs changed: ship its SQL again (`python -m polygon_voice.store.fast_read`)"
    )
    # The two placeholders are (limit, offset), in that order.
    compiled = list_runs_statement(limit=7).compile(dialect=sqlite.dialect())
    assert compiled.positiontup is not None
    assert [compiled.params[name] for name in compiled.positiontup] == [7, 0]


@pytest.mark.parametrize("limit", [1, 2, 3, 20])
def test_the_fast_path_gives_the_stores_records(filled_url: str, limit: int) -> None:
    with Store(filled_url) as store:
        expected = store.list_runs(limit=limit)
    fast = list_runs_read_only(filled_url, limit)
    assert fast is not None
    assert fast == expected
    assert [r.model_dump() for r in fast] == [r.model_dump() for r in expected]
    assert len(fast) == min(limit, 5)


def test_the_records_carry_what_was_stored(filled_url: str) -> None:
    fast = list_runs_read_only(filled_url, 20)
    assert fast is not None
    by_id = {record.id: record for record in fast}
    assert [r.id for r in fast] == ["r-zone", "r-url", "r-tie", "r-two", "r-empty"]
    assert by_id["r-two"].conversation_count == 2
    assert by_id["r-two"].seed == 2**40
    assert by_id["r-two"].finished_at == datetime(2025, 3, 1, 13, 30, 0, 1, tzinfo=UTC)
    assert by_id["r-empty"].finished_at is None
    assert by_id["r-empty"].conversation_count == 0
    assert "hunter2" not in by_id["r-url"].agent
    assert "sk-secret" not in str(by_id["r-url"].config)
    assert by_id["r-url"].config["noise"] == {"level": "heavy", "wer": [0.1, 0.25]}
    assert by_id["r-zone"].started_at == datetime(2025, 3, 1, 14, 0, tzinfo=UTC)
    assert by_id["r-zone"].started_at.utcoffset() == timedelta(0)
    assert by_id["r-empty"].started_at == T0


def test_a_missing_file_is_left_to_the_store_and_not_created(db_url: str) -> None:
    assert list_runs_read_only(db_url, 20) is None
    assert not _path(db_url).exists()


def test_an_older_schema_is_left_to_the_store_and_not_migrated(filled_url: str) -> None:
    with sqlite3.connect(_path(filled_url)) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0003'")
    assert list_runs_read_only(filled_url, 20) is None
    with sqlite3.connect(_path(filled_url)) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("0003",)]


@pytest.mark.parametrize(
    "damage",
    [
        "DROP TABLE alembic_version",
        "DELETE FROM alembic_version",
        "INSERT INTO alembic_version VALUES ('9999')",
        "UPDATE runs SET config = '{not json' WHERE id = 'r-two'",
        "UPDATE runs SET started_at = 'yesterday' WHERE id = 'r-two'",
        "UPDATE runs SET status = 'exploded' WHERE id = 'r-two'",
        "ALTER TABLE runs RENAME COLUMN suite TO suite_name",
    ],
)
def test_unexpected_content_is_left_to_the_store(filled_url: str, damage: str) -> None:
    with sqlite3.connect(_path(filled_url)) as conn:
        conn.execute(damage)
    assert list_runs_read_only(filled_url, 20) is None


def test_files_that_are_no_database_are_left_to_the_store(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all\x00" * 100)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    for path in (empty, garbage, folder):
        assert list_runs_read_only(f"sqlite:///{path}", 20) is None
    assert empty.read_bytes() == b""


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://user:pw@localhost:1/db",
        "sqlite://",
        "sqlite:///:memory:",
        "sqlite+pysqlite:///{db}",
        "sqlite:///{db}?mode=ro",
        "sqlite:///{db}%00",
    ],
)
def test_other_urls_are_left_to_the_store(filled_url: str, url: str) -> None:
    assert list_runs_read_only(url.format(db=_path(filled_url)), 20) is None


def test_a_relative_sqlite_url_reads_the_same_file_as_the_store(
    filled_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _path(filled_url)
    monkeypatch.chdir(path.parent)
    relative = f"sqlite:///{path.name}"
    with Store(relative) as store:
        expected = store.list_runs(limit=20)
    assert list_runs_read_only(relative, 20) == expected


def test_a_path_with_uri_characters_is_opened_as_a_file(tmp_path: Path) -> None:
    folder = tmp_path / "a b#c&d=e"
    folder.mkdir()
    url = f"sqlite:///{folder / 'x y.db'}"
    _fill(url)
    with Store(url) as store:
        expected = store.list_runs(limit=20)
    assert list_runs_read_only(url, 20) == expected


def _polygon(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("POLYGON_DB", None)
    return subprocess.run(
        [sys.executable, "-m", "polygon_voice", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("extra", [(), ("--json",), ("--limit", "2"), ("--json", "--limit", "1")])
def test_runs_prints_the_same_on_both_paths(filled_url: str, extra: tuple[str, ...]) -> None:
    path = _path(filled_url)
    fast = _polygon(path.parent, "runs", *extra, "--db", str(path))
    # A driver in the URL sends `runs` through the Store, on the same file.
    slow = _polygon(path.parent, "runs", *extra, "--db", f"sqlite+pysqlite:///{path}")
    assert (fast.returncode, slow.returncode) == (0, 0), fast.stderr + slow.stderr
    assert fast.stdout == slow.stdout
    limit = int(extra[-1]) if "--limit" in extra else 20
    newest_first = ["r-zone", "r-url", "r-tie", "r-two", "r-empty"]
    listed = [run_id for run_id in newest_first if run_id in fast.stdout]
    assert listed == newest_first[:limit]
    assert "hunter2" not in fast.stdout


def test_a_limit_beyond_the_databases_integers_lists_every_run(filled_url: str) -> None:
    path = _path(filled_url)
    for db in (str(path), f"sqlite+pysqlite:///{path}"):
        done = _polygon(path.parent, "runs", "--json", "--limit", str(10**20), "--db", db)
        assert done.returncode == 0, done.stderr
        assert len(json.loads(done.stdout)["runs"]) == 5
    assert list_runs_read_only(filled_url, 10**20) is None  # too large for SQLite: not read


def test_runs_migrates_an_older_database_through_the_store(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0003")
    engine.dispose()
    with sqlite3.connect(_path(db_url)) as conn:
        conn.execute(
            "INSERT INTO runs VALUES ('r-old', 's', 'p', 'h', 'a', 1, 'finished', "
            "'2025-03-01 12:00:00.000000', NULL, '{}', '0.0.9')"
        )
    assert list_runs_read_only(db_url, 20) is None
    path = _path(db_url)
    done = _polygon(path.parent, "runs", "--json", "--db", str(path))
    assert done.returncode == 0, done.stderr
    assert [run["run_id"] for run in json.loads(done.stdout)["runs"]] == ["r-old"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (HEAD_REVISION,)
        ]
    # Now current: the same list without the Store.
    fast = list_runs_read_only(db_url, 20)
    assert fast is not None
    assert [record.id for record in fast] == ["r-old"]


def test_resolving_the_url_and_the_fast_read_import_no_sqlalchemy(filled_url: str) -> None:
    code = (
        "import sys\n"
        "from polygon_voice.store import list_runs_read_only, resolve_db_url\n"
        f"records = list_runs_read_only(resolve_db_url({str(_path(filled_url))!r}), 20)\n"
        "assert records is not None and len(records) == 5, records\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] == 'sqlalchemy'\n"
        "               or m.startswith('polygon_voice.model'))\n"
        "print(heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_revision_checked_is_the_migrations_head() -> None:
    from polygon_voice.store import revision

    # test_migrations pins migrate.HEAD_REVISION to Alembic's head; it is this constant.
    assert revision.HEAD_REVISION is HEAD_REVISION
