"""A group of calls is stored on SQLite through its own cursor (store/plain_insert.py): the
same rows, keys and times as SQLAlchemy's statements store, and the same refusals."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.store import Store, StoreError
from polygon_voice.store import store as store_module
from polygon_voice.store.errors import ConversationExists
from tests.store.store_factories import make_result, make_run

PATHS = ("plain", "sqlalchemy")


def _open(path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> Store:
    if how == "sqlalchemy":  # the path PostgreSQL takes, on SQLite
        monkeypatch.setattr(store_module, "is_sqlite", lambda conn: False)
    return Store(f"sqlite:///{path}")


def _group(first: int, count: int) -> list[tuple[int, Any, list[Any]]]:
    return [
        (
            first + n,
            make_result(f"c{first + n}"),
            [("checks", "", {"n": n, "text": "é\u2028"}), ("judge", "v3", {"ok": n % 2 == 0})],
        )
        for n in range(count)
    ]


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as db:
        return {
            table: db.execute(f"SELECT * FROM {table} ORDER BY pk").fetchall()
            for table in ("conversations", "stage_results")
        }


def test_both_paths_store_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stored: dict[str, dict[str, list[tuple[Any, ...]]]] = {}
    fixed = store_module.datetime.now(store_module.UTC)
    for how in PATHS:
        with monkeypatch.context() as patch:
            # One clock for both, so that the times stored can be compared as text.
            patch.setattr(store_module, "datetime", _Clock(fixed))
            store = _open(tmp_path / f"{how}.db", how, patch)
            store.create_run(make_run("r1"))
            store.add_conversation("r1", 0, make_result("c0"))  # one call: SQLAlchemy's path
            store.add_conversations_with_results("r1", _group(1, 5))
            store.add_conversations_with_results("r1", _group(6, 3))
            store.close()
        stored[how] = _rows(tmp_path / f"{how}.db")
    plain, reference = stored["plain"], stored["sqlalchemy"]
    assert len(plain["conversations"]) == 9
    assert len(plain["stage_results"]) == 16
    assert plain == reference  # every column, the keys and created_at's text included
    created = plain["conversations"][1][-1]
    assert isinstance(created, str)
    assert created.startswith(f"{fixed:%Y-%m-%d %H:%M:%S}")


@pytest.mark.parametrize("how", PATHS)
def test_a_group_with_a_stored_call_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    store = _open(tmp_path / "p.db", how, monkeypatch)
    store.create_run(make_run("r1"))
    store.add_conversations_with_results("r1", _group(0, 2))
    with pytest.raises(ConversationExists, match="conversation c1 is already stored in run r1"):
        store.add_conversations_with_results("r1", _group(1, 3))
    assert store.conversation_ids("r1") == {"c0", "c1"}
    store.close()


@pytest.mark.parametrize("how", PATHS)
def test_a_group_of_a_missing_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    store = _open(tmp_path / "p.db", how, monkeypatch)
    with pytest.raises(StoreError, match="r9"):
        store.add_conversations_with_results("r9", _group(0, 2))
    store.close()


@pytest.mark.parametrize("how", PATHS)
def test_a_refused_stage_row_rolls_the_group_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    store = _open(tmp_path / "p.db", how, monkeypatch)
    store.create_run(make_run("r1"))
    with sqlite3.connect(tmp_path / "p.db") as db:
        db.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON stage_results WHEN NEW.idx = 2 "
            "BEGIN SELECT RAISE(ABORT, 'disk says no'); END"
        )
    with pytest.raises(StoreError):
        store.add_conversations_with_results("r1", _group(0, 4))
    assert store.conversation_ids("r1") == set()
    assert _rows(tmp_path / "p.db") == {"conversations": [], "stage_results": []}
    store.close()


class _Clock:
    """`datetime` whose `now` is fixed (the rest of the class as it is)."""

    def __init__(self, fixed: Any) -> None:
        self._fixed = fixed

    def now(self, tz: Any = None) -> Any:
        return self._fixed

    def __getattr__(self, name: str) -> Any:
        return getattr(type(self._fixed), name)
