"""Conversations: stored one at a time, read back whole, in order, or as summaries."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest
import sqlalchemy as sa

from polygon_voice.model.trace import ConversationResult
from polygon_voice.store import ConversationSummary, Store, StoreError
from tests.store.store_factories import make_result, make_run


def test_round_trip_keeps_every_field(store: Store) -> None:
    store.create_run(make_run("r1"))
    result = make_result("c1")
    store.add_conversation("r1", 0, result)
    assert store.get_conversation("r1", "c1") == result
    assert list(store.iter_conversations("r1")) == [result]
    assert store.conversation_ids("r1") == {"c1"}


def test_stored_row_names_its_stage_and_holds_json(store: Store, db_url: str) -> None:
    store.create_run(make_run("r1"))
    store.add_conversation("r1", 0, make_result("c1"))
    engine = sa.create_engine(db_url)
    with engine.connect() as conn:
        stage, data = conn.exec_driver_sql("SELECT stage, data FROM conversations").one()
    engine.dispose()
    assert stage == "conversation"
    assert ConversationResult.model_validate_json(data) == make_result("c1")


def test_conversations_come_back_in_index_order(store: Store) -> None:
    store.create_run(make_run("r1"))
    for index in [3, 0, 2, 1]:
        store.add_conversation("r1", index, make_result(f"c{index}", scenario_id=f"s{index}"))
    assert [c.id for c in store.iter_conversations("r1")] == ["c0", "c1", "c2", "c3"]
    assert [s.index for s in store.iter_summaries("r1")] == [0, 1, 2, 3]


def test_runs_do_not_see_each_others_conversations(store: Store) -> None:
    store.create_run(make_run("r1"))
    store.create_run(make_run("r2"))
    store.add_conversation("r1", 0, make_result("c1"))
    store.add_conversation("r2", 0, make_result("c1"))
    store.add_conversation("r2", 1, make_result("c2"))
    assert store.conversation_ids("r1") == {"c1"}
    assert store.conversation_ids("r2") == {"c1", "c2"}


def test_summaries_come_from_columns(store: Store) -> None:
    store.create_run(make_run("r1"))
    store.add_conversation("r1", 5, make_result("c1", scenario_id="book"))
    assert list(store.iter_summaries("r1")) == [
        ConversationSummary(
            id="c1",
            scenario_id="book",
            index=5,
            end_reason="error",
            end_message="agent raised",
            turn_count=2,
            tool_call_count=1,
        )
    ]


def test_iteration_is_lazy_and_can_stop_early(store: Store) -> None:
    store.create_run(make_run("r1"))
    for index in range(250):
        store.add_conversation("r1", index, make_result(f"c{index:03}"))
    stream = store.iter_conversations("r1")
    assert isinstance(stream, Iterator)
    assert [c.id for c in islice(stream, 2)] == ["c000", "c001"]
    del stream  # abandoned mid-way: its connection goes back to the pool
    assert sum(1 for _ in store.iter_summaries("r1")) == 250


def test_duplicate_conversation_is_refused_and_nothing_is_lost(store: Store) -> None:
    store.create_run(make_run("r1"))
    first = make_result("c1", scenario_id="book")
    store.add_conversation("r1", 0, first)
    store.add_conversation("r1", 1, make_result("c2"))
    with pytest.raises(StoreError, match="c1 is already stored in run r1"):
        store.add_conversation("r1", 2, make_result("c1", scenario_id="other"))
    assert [c.id for c in store.iter_conversations("r1")] == ["c1", "c2"]
    assert store.get_conversation("r1", "c1") == first
    assert store.get_run("r1").conversation_count == 2
    store.add_conversation("r1", 2, make_result("c3"))
    assert store.conversation_ids("r1") == {"c1", "c2", "c3"}


def test_conversation_for_a_missing_run_is_refused(store: Store) -> None:
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.add_conversation("ghost", 0, make_result("c1"))


def test_missing_conversation_names_the_run_and_lists_ids(store: Store) -> None:
    store.create_run(make_run("r1"))
    for index in range(12):
        store.add_conversation("r1", index, make_result(f"c{index:02}"))
    with pytest.raises(StoreError) as caught:
        store.get_conversation("r1", "nope")
    message = str(caught.value)
    assert "run r1 has no conversation nope" in message
    assert "c00, c01" in message
    assert "and 2 more" in message


def test_missing_conversation_in_an_empty_run(store: Store) -> None:
    store.create_run(make_run("r1"))
    with pytest.raises(StoreError, match="it has none stored"):
        store.get_conversation("r1", "c1")


def test_reads_of_a_missing_run_say_so(store: Store) -> None:
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.get_conversation("ghost", "c1")
    with pytest.raises(StoreError, match="no run with id ghost"):
        store.conversation_ids("ghost")
    with pytest.raises(StoreError, match="no run with id ghost"):
        list(store.iter_conversations("ghost"))
    with pytest.raises(StoreError, match="no run with id ghost"):
        list(store.iter_summaries("ghost"))


_KILLED_RUN = """
import os, signal, sys
sys.path.insert(0, sys.argv[2])
from tests.store.store_factories import make_result, make_run
from polygon_voice.store import Store
store = Store(sys.argv[1])
store.create_run(make_run("killed"))
for index in range(3):
    store.add_conversation("killed", index, make_result(f"c{index}"))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_run_keeps_its_finished_conversations(db_url: str) -> None:
    here = str(Path(__file__).parents[2])
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_RUN, db_url, here],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": here},
        check=False,
    )
    assert child.returncode == -9, child.stderr
    with Store(db_url) as store:
        [run] = store.list_runs()
        assert run.id == "killed"
        assert run.status == "running"
        assert run.finished_at is None
        assert run.conversation_count == 3
        assert store.conversation_ids("killed") == {"c0", "c1", "c2"}
        assert [c.id for c in store.iter_conversations("killed")] == ["c0", "c1", "c2"]
