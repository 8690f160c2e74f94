"""Stage results: what the stages after a conversation stored, one row per (stage, name)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from itertools import islice
from types import MappingProxyType
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from pydantic import BaseModel, RootModel

from polygon_voice.store import Store, StoreError
from polygon_voice.store.migrate import HEAD_REVISION, alembic_config, current_revision
from polygon_voice.store.schema import conversations, metadata, runs
from tests.store.store_factories import T0, make_result, make_run


class Check(BaseModel):
    id: str
    ok: bool
    detail: str = ""


class Checks(BaseModel):
    passed: int
    failed: list[Check]


CHECKS = Checks(passed=3, failed=[Check(id="no_double_booking", ok=False, detail="ü twice")])
CHECKS_JSON = CHECKS.model_dump(mode="json")


def _stored(store: Store, run_id: str, *indexes: int) -> None:
    store.create_run(make_run(run_id))
    for index in indexes:
        store.add_conversation(run_id, index, make_result(f"c{index}", scenario_id=f"s{index}"))


def test_round_trip_of_a_mapping_and_a_model(store: Store) -> None:
    _stored(store, "r1", 0)
    store.add_stage_result("r1", "c0", "checks", CHECKS)
    verdict = {"score": 0.5, "tags": ("a", "b"), "why": "ok", "nested": {"n": None}}
    store.add_stage_result("r1", "c0", "judge", verdict)
    assert store.get_stage_result("r1", "c0", "checks") == CHECKS_JSON
    assert Checks.model_validate(store.get_stage_result("r1", "c0", "checks")) == CHECKS
    assert store.get_stage_result("r1", "c0", "judge") == {
        "score": 0.5,
        "tags": ["a", "b"],
        "why": "ok",
        "nested": {"n": None},
    }
    assert list(store.iter_stage_results("r1", "checks")) == [("c0", CHECKS_JSON)]
    # The conversation itself is untouched by its stage results.
    assert store.get_conversation("r1", "c0") == make_result("c0", scenario_id="s0")


def test_models_and_mappings_nested_in_a_mapping(store: Store) -> None:
    _stored(store, "r1", 0)
    data = MappingProxyType({"checks": [CHECKS.failed[0]], "meta": MappingProxyType({"v": 2})})
    store.add_stage_result("r1", "c0", "checks", data)
    assert store.get_stage_result("r1", "c0", "checks") == {
        "checks": [{"id": "no_double_booking", "ok": False, "detail": "ü twice"}],
        "meta": {"v": 2},
    }


def test_stored_row_names_its_stage_and_conversation(store: Store, db_url: str) -> None:
    _stored(store, "r1", 0, 7)
    store.add_stage_result("r1", "c7", "judge", {"score": 1}, name="rejudge-1")
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        row = conn.exec_driver_sql(
            "SELECT s.run_id, s.conversation_id, s.idx, s.stage, s.name, s.data,"
            " s.conversation_pk = c.pk, s.created_at"
            " FROM stage_results s JOIN conversations c ON c.id = 'c7'"
        ).one()
    engine.dispose()
    assert row[:5] == ("r1", "c7", 7, "judge", "rejudge-1")
    assert json.loads(row[5]) == {"score": 1}
    assert row[6] == 1
    assert row[7]


def test_results_come_back_in_index_order(store: Store) -> None:
    _stored(store, "r1", 3, 0, 2, 1, 4)
    for index in [2, 4, 0, 3]:  # c1 has no checks: it is skipped, not an error
        store.add_stage_result("r1", f"c{index}", "checks", {"i": index})
    assert list(store.iter_stage_results("r1", "checks")) == [
        ("c0", {"i": 0}),
        ("c2", {"i": 2}),
        ("c3", {"i": 3}),
        ("c4", {"i": 4}),
    ]
    assert store.get_stage_result("r1", "c1", "checks") is None


def test_named_sets_are_kept_apart(store: Store) -> None:
    _stored(store, "r1", 0, 1)
    _stored(store, "r2", 0)
    store.add_stage_result("r1", "c0", "judge", {"v": "first"})
    store.add_stage_result("r1", "c1", "judge", {"v": "first"})
    store.add_stage_result("r1", "c1", "judge", {"v": "second"}, name="rejudge-b")
    store.add_stage_result("r1", "c0", "judge", {"v": "third"}, name="rejudge-a")
    store.add_stage_result("r1", "c0", "checks", {"v": "checks"})
    store.add_stage_result("r2", "c0", "judge", {"v": "other run"}, name="zzz")
    assert store.stage_result_names("r1", "judge") == ["", "rejudge-a", "rejudge-b"]
    assert store.stage_result_names("r1", "checks") == [""]
    assert store.stage_result_names("r1", "probes") == []
    assert store.stage_result_names("r2", "judge") == ["zzz"]
    assert [cid for cid, _ in store.iter_stage_results("r1", "judge")] == ["c0", "c1"]
    assert list(store.iter_stage_results("r1", "judge", "rejudge-b")) == [("c1", {"v": "second"})]
    assert list(store.iter_stage_results("r1", "judge", "nope")) == []
    assert store.get_stage_result("r1", "c0", "judge", "rejudge-a") == {"v": "third"}
    assert store.get_stage_result("r1", "c0", "judge", "rejudge-b") is None
    assert store.get_stage_result("r2", "c0", "judge") is None


def test_duplicate_is_refused_and_nothing_is_lost(store: Store) -> None:
    _stored(store, "r1", 0, 1)
    store.add_stage_result("r1", "c0", "checks", {"v": 1})
    store.add_stage_result("r1", "c0", "judge", {"v": 1}, name="set-a")
    with pytest.raises(
        StoreError, match="checks result of conversation c0 is already stored in run r1"
    ):
        store.add_stage_result("r1", "c0", "checks", {"v": 2})
    with pytest.raises(
        StoreError, match="judge result 'set-a' of conversation c0 is already stored"
    ):
        store.add_stage_result("r1", "c0", "judge", {"v": 2}, name="set-a")
    assert store.get_stage_result("r1", "c0", "checks") == {"v": 1}
    assert store.get_stage_result("r1", "c0", "judge", "set-a") == {"v": 1}
    # The store is still usable, for other conversations and other names.
    store.add_stage_result("r1", "c1", "checks", {"v": 3})
    store.add_stage_result("r1", "c0", "checks", {"v": 4}, name="again")
    assert list(store.iter_stage_results("r1", "checks")) == [("c0", {"v": 1}), ("c1", {"v": 3})]


def test_unknown_run_or_conversation_is_a_clear_error(store: Store) -> None:
    _stored(store, "r1", 0, 1)
    with pytest.raises(StoreError, match="run r1 has no conversation nope; it has c0, c1"):
        store.add_stage_result("r1", "nope", "checks", {})
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.add_stage_result("ghost", "c0", "checks", {})
    with pytest.raises(StoreError, match="run r1 has no conversation nope"):
        store.get_stage_result("r1", "nope", "checks")
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.get_stage_result("ghost", "c0", "checks")
    with pytest.raises(StoreError, match="no run with id ghost"):
        list(store.iter_stage_results("ghost", "checks"))
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.stage_result_names("ghost", "checks")
    assert list(store.iter_stage_results("r1", "checks")) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"x": object()}, "object is not JSON-serialisable"),
        ({"x": float("nan")}, "not JSON-serialisable"),
        (RootModel[list[int]]([1, 2]), r"must be a JSON object, not \[1,2\]"),
        ([("a", 1)], "neither a mapping nor a pydantic model"),
    ],
)
def test_data_must_be_a_json_object(store: Store, data: Any, message: str) -> None:
    _stored(store, "r1", 0)
    with pytest.raises(ValueError, match=message):
        store.add_stage_result("r1", "c0", "checks", data)
    with pytest.raises(ValueError, match=f"checks result of conversation c1 .*{message}"):
        store.add_conversation_with_results("r1", 1, make_result("c1"), [("checks", "", data)])
    assert store.stage_result_names("r1", "checks") == []
    assert store.conversation_ids("r1") == {"c0"}


def test_a_stage_result_names_its_stage(store: Store) -> None:
    _stored(store, "r1", 0)
    with pytest.raises(ValueError, match="names no stage"):
        store.add_stage_result("r1", "c0", "", {})


def test_conversation_with_results_in_one_commit(store: Store) -> None:
    store.create_run(make_run("r1"))
    result = make_result("c1")
    store.add_conversation_with_results(
        "r1", 4, result, [("checks", "", CHECKS), ("judge", "first", {"score": 2})]
    )
    store.add_conversation_with_results("r1", 2, make_result("c0"), [])
    assert store.get_conversation("r1", "c1") == result
    assert store.get_stage_result("r1", "c1", "checks") == CHECKS_JSON
    assert store.get_stage_result("r1", "c1", "judge", "first") == {"score": 2}
    assert store.get_stage_result("r1", "c0", "checks") is None
    assert [s.index for s in store.iter_summaries("r1")] == [2, 4]
    assert list(store.iter_stage_results("r1", "judge", "first")) == [("c1", {"score": 2})]


def test_unserialisable_stage_data_stores_no_conversation(store: Store) -> None:
    store.create_run(make_run("r1"))
    with pytest.raises(ValueError, match="judge result of conversation c1 is not JSON"):
        store.add_conversation_with_results(
            "r1", 0, make_result("c1"), [("checks", "", {"ok": 1}), ("judge", "", {"x": {1, 2}})]
        )
    assert store.conversation_ids("r1") == set()
    assert store.stage_result_names("r1", "checks") == []
    assert store.get_run("r1").conversation_count == 0
    # Nothing half-written blocks storing it properly.
    store.add_conversation_with_results("r1", 0, make_result("c1"), [("checks", "", {"ok": 1})])
    assert store.get_stage_result("r1", "c1", "checks") == {"ok": 1}


def test_a_stage_set_given_twice_stores_nothing(store: Store) -> None:
    store.create_run(make_run("r1"))
    with pytest.raises(ValueError, match="checks result 'x' of conversation c1 is given twice"):
        store.add_conversation_with_results(
            "r1", 0, make_result("c1"), [("checks", "x", {}), ("checks", "x", {})]
        )
    assert store.conversation_ids("r1") == set()


@pytest.fixture
def failing_stage_insert(store: Store) -> Iterator[None]:
    """The database refuses every INSERT into stage_results, after the conversation's went in."""

    def fail(*args: Any) -> None:
        if "INSERT INTO stage_results" in args[2]:
            raise sqlite3.OperationalError("disk I/O error")

    sa.event.listen(store._engine, "before_cursor_execute", fail)
    yield
    sa.event.remove(store._engine, "before_cursor_execute", fail)


@pytest.mark.usefixtures("failing_stage_insert")
def test_a_failing_stage_insert_rolls_the_conversation_back(store: Store) -> None:
    store.create_run(make_run("r1"))
    store.add_conversation("r1", 0, make_result("c0"))  # no stage results: not affected
    with pytest.raises(StoreError, match=r"could not store conversation c1 of run r1.*disk I/O"):
        store.add_conversation_with_results("r1", 1, make_result("c1"), [("checks", "", {})])
    assert store.conversation_ids("r1") == {"c0"}
    assert store.get_run("r1").conversation_count == 1


def test_a_stored_conversation_is_not_stored_again_with_results(store: Store) -> None:
    _stored(store, "r1", 0)
    store.add_stage_result("r1", "c0", "checks", {"v": 1})
    with pytest.raises(StoreError, match="c0 is already stored in run r1"):
        store.add_conversation_with_results(
            "r1", 5, make_result("c0"), [("checks", "", {"v": 2}), ("judge", "", {})]
        )
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.add_conversation_with_results("ghost", 0, make_result("c0"), [("checks", "", {})])
    assert store.get_stage_result("r1", "c0", "checks") == {"v": 1}
    assert store.get_stage_result("r1", "c0", "judge") is None
    assert [s.index for s in store.iter_summaries("r1")] == [0]


def test_iteration_is_lazy_and_can_stop_early(store: Store) -> None:
    store.create_run(make_run("r1"))
    for index in range(250):
        store.add_conversation_with_results(
            "r1", index, make_result(f"c{index:03}"), [("checks", "", {"i": index})]
        )
    stream = store.iter_stage_results("r1", "checks")
    assert isinstance(stream, Iterator)
    assert [cid for cid, _ in islice(stream, 2)] == ["c000", "c001"]
    del stream  # abandoned mid-way: its connection goes back to the pool
    assert [data["i"] for _, data in store.iter_stage_results("r1", "checks")] == list(range(250))


def test_results_go_with_their_conversation_and_run(store: Store) -> None:
    _stored(store, "r1", 0, 1)
    _stored(store, "r2", 0)
    for run_id, cid in [("r1", "c0"), ("r1", "c1"), ("r2", "c0")]:
        store.add_stage_result(run_id, cid, "checks", {})
    with store._engine.begin() as conn:  # foreign keys are on in the store's connections
        conn.execute(sa.delete(conversations).where(conversations.c.id == "c1"))
        conn.execute(sa.delete(runs).where(runs.c.id == "r2"))
        remaining = conn.exec_driver_sql("SELECT run_id, conversation_id FROM stage_results")
        assert remaining.all() == [("r1", "c0")]


def _old_database(url: str) -> None:
    """A database at revision 0001 holding one run and one conversation, as 0001 wrote them."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            command.upgrade(alembic_config(conn), "0001")
        with engine.begin() as conn:
            assert current_revision(conn) == "0001"
            assert not sa.inspect(conn).has_table("stage_results")
            run = make_run("old")
            conn.execute(sa.insert(runs), run.model_dump(exclude={"conversation_count"}))
            result = make_result("c1")
            conn.execute(
                sa.insert(conversations),
                {
                    "run_id": "old",
                    "id": "c1",
                    "scenario_id": result.scenario_id,
                    "idx": 0,
                    "stage": result.stage,
                    "end_reason": result.end.reason.value,
                    "end_message": result.end.message,
                    "turn_count": len(result.turns),
                    "tool_call_count": len(result.tool_calls),
                    "data": result.model_dump_json(),
                    "created_at": T0,
                },
            )
    finally:
        engine.dispose()


def _check_upgraded(url: str) -> None:
    with Store(url) as store:
        assert store.migrated
        [run] = store.list_runs()
        assert run == make_run("old").model_copy(update={"conversation_count": 1})
        assert store.get_conversation("old", "c1") == make_result("c1")
        assert store.get_stage_result("old", "c1", "checks") is None
        store.add_stage_result("old", "c1", "checks", {"ok": True})
        assert list(store.iter_stage_results("old", "checks")) == [("c1", {"ok": True})]
        with store._engine.connect() as conn:
            assert current_revision(conn) == HEAD_REVISION == "0007"
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
    with Store(url) as reopened:
        assert not reopened.migrated


def test_a_0001_database_is_upgraded_with_its_data(db_url: str) -> None:
    _old_database(db_url)
    _check_upgraded(db_url)


def test_downgrading_0002_keeps_the_conversations(store: Store, db_url: str) -> None:
    _stored(store, "r1", 0)
    store.add_stage_result("r1", "c0", "checks", {})
    store.close()
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0001")
    with engine.connect() as conn:
        assert not sa.inspect(conn).has_table("stage_results")
        assert conn.exec_driver_sql("SELECT id FROM conversations").scalars().all() == ["c0"]
    engine.dispose()
    with Store(db_url) as reopened:
        assert reopened.migrated
        assert reopened.get_stage_result("r1", "c0", "checks") is None


def test_postgres_round_trip(postgres_url: str) -> None:
    with Store(postgres_url) as store:
        _stored(store, "pg1", 2, 0, 1)
        store.add_conversation_with_results(
            "pg1", 3, make_result("c3"), [("checks", "", CHECKS), ("judge", "j", {"s": 1})]
        )
        store.add_stage_result("pg1", "c2", "checks", {"ok": "ü"})
        store.add_stage_result("pg1", "c0", "checks", {"ok": True})
        store.add_stage_result("pg1", "c0", "checks", {"ok": False}, name="again")
        assert list(store.iter_stage_results("pg1", "checks")) == [
            ("c0", {"ok": True}),
            ("c2", {"ok": "ü"}),
            ("c3", CHECKS_JSON),
        ]
        assert store.stage_result_names("pg1", "checks") == ["", "again"]
        assert store.get_stage_result("pg1", "c3", "judge", "j") == {"s": 1}
        assert store.get_stage_result("pg1", "c1", "checks") is None
        with pytest.raises(StoreError, match="already stored in run pg1"):
            store.add_stage_result("pg1", "c0", "checks", {"ok": None})
        assert store.get_stage_result("pg1", "c0", "checks") == {"ok": True}
        with pytest.raises(StoreError, match="run pg1 has no conversation c9"):
            store.add_stage_result("pg1", "c9", "checks", {})
        with pytest.raises(StoreError, match="c3 is already stored in run pg1"):
            store.add_conversation_with_results("pg1", 4, make_result("c3"), [("probes", "", {})])
        assert store.stage_result_names("pg1", "probes") == []
        with pytest.raises(ValueError, match="not JSON-serialisable"):
            store.add_conversation_with_results(
                "pg1", 4, make_result("c4"), [("checks", "", {"x": object()})]
            )
        assert store.get_run("pg1").conversation_count == 4


def test_postgres_0001_database_is_upgraded(postgres_url: str) -> None:
    _old_database(postgres_url)
    _check_upgraded(postgres_url)
