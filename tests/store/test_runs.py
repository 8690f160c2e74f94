"""Runs: create, finish, list newest first, find by id prefix."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from polygon_voice.store import RunRecord, Store, StoreError
from tests.store.store_factories import T0, make_result, make_run


def test_create_and_get_run_round_trip(store: Store) -> None:
    run = make_run("abc123def456", config={"rubric": "v2", "tags": ["a", "b"]})
    store.create_run(run)
    stored = store.get_run("abc123def456")
    assert stored == run
    assert stored.started_at.tzinfo is not None
    assert stored.started_at.utcoffset() == timedelta(0)


def test_times_come_back_in_utc(store: Store) -> None:
    plus_two = timezone(timedelta(hours=2))
    store.create_run(make_run("r1", started_at=datetime(2025, 3, 1, 14, 0, tzinfo=plus_two)))
    store.finish_run("r1", "finished", datetime(2025, 3, 1, 15, 0, tzinfo=plus_two))
    run = store.get_run("r1")
    assert run.started_at == T0
    assert run.started_at.tzinfo is not None
    assert run.started_at.utcoffset() == timedelta(0)
    assert run.finished_at == T0 + timedelta(hours=1)
    assert run.status == "finished"


def test_naive_datetimes_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        make_run("r1", started_at=datetime(2025, 3, 1, 12, 0))


def test_finish_run_checks_status_and_run(store: Store) -> None:
    store.create_run(make_run("r1"))
    with pytest.raises(ValueError, match="not one of"):
        store.finish_run("r1", "done", T0)
    with pytest.raises(ValueError, match="time zone"):
        store.finish_run("r1", "finished", datetime(2025, 3, 1))
    with pytest.raises(StoreError, match="no run with id nope"):
        store.finish_run("nope", "failed", T0)


def test_duplicate_run_id_is_refused(store: Store) -> None:
    store.create_run(make_run("r1"))
    with pytest.raises(StoreError, match="already stored"):
        store.create_run(make_run("r1", suite="other"))
    assert store.get_run("r1").suite == "clinic"


def test_list_runs_newest_first_with_counts(store: Store) -> None:
    for minutes, run_id in [(0, "old"), (10, "new"), (5, "mid")]:
        store.create_run(make_run(run_id, minutes=minutes))
    store.add_conversation("mid", 0, make_result("c1"))
    store.add_conversation("mid", 1, make_result("c2"))
    listed = store.list_runs()
    assert [run.id for run in listed] == ["new", "mid", "old"]
    assert [run.conversation_count for run in listed] == [0, 2, 0]
    assert [run.id for run in store.list_runs(limit=2)] == ["new", "mid"]
    assert store.get_run("mid").conversation_count == 2


def test_list_runs_on_an_empty_database(store: Store) -> None:
    assert store.list_runs() == []


def test_get_run_by_unique_prefix(store: Store) -> None:
    store.create_run(make_run("a1b2c3d4e5f6"))
    store.create_run(make_run("a1ffffffffff"))
    store.create_run(make_run("0f0f0f0f0f0f"))
    assert store.get_run("a1b").id == "a1b2c3d4e5f6"
    assert store.get_run(" 0f ").id == "0f0f0f0f0f0f"


def test_exact_id_wins_over_longer_ids_with_that_prefix(store: Store) -> None:
    store.create_run(make_run("abc"))
    store.create_run(make_run("abcdef"))
    assert store.get_run("abc").id == "abc"


def test_ambiguous_prefix_lists_candidates(store: Store) -> None:
    store.create_run(make_run("a1b2c3d4e5f6"))
    store.create_run(make_run("a1ffffffffff", suite="billing"))
    with pytest.raises(StoreError) as caught:
        store.get_run("a1")
    message = str(caught.value)
    assert "more than one run" in message
    for expected in ("a1b2c3d4e5f6", "a1ffffffffff", "billing"):
        assert expected in message


def test_missing_run_is_a_clear_error(store: Store, db_url: str) -> None:
    store.create_run(make_run("a1b2c3d4e5f6"))
    with pytest.raises(StoreError, match="no run id starts with 'zz'") as caught:
        store.get_run("zz")
    assert "results.db" in str(caught.value)
    with pytest.raises(StoreError, match="give a run id"):
        store.get_run("  ")


def test_prefix_wildcards_are_literal(store: Store) -> None:
    store.create_run(make_run("a1b2c3d4e5f6"))
    with pytest.raises(StoreError, match="no run id starts with"):
        store.get_run("%")
    with pytest.raises(StoreError, match="no run id starts with"):
        store.get_run("a_")


def test_credentials_in_config_are_masked(store: Store) -> None:
    run = make_run(
        "r1",
        agent="http://bot:hunter2@agent.local/chat",
        config={
            "judge": {
                "api_key": "sk-secret",
                "base_url": "http://u:pw@llm:8000/v1",
                "max_tokens": 9,
            },
            "db": "postgresql://polygon:letmein@db/results",
            "token": "",
            "headers": [{"Authorization": "Bearer abc"}],
        },
    )
    store.create_run(run)
    stored = store.get_run("r1")
    text = stored.model_dump_json()
    for secret in ("sk-secret", "hunter2", "letmein", "Bearer abc", ":pw@"):
        assert secret not in text
    assert stored.agent == "http://bot:***@agent.local/chat"
    assert stored.config["judge"] == {
        "api_key": "***",
        "base_url": "http://u:***@llm:8000/v1",
        "max_tokens": 9,
    }
    assert stored.config["token"] == ""


def test_run_record_defaults() -> None:
    run = RunRecord(
        id="r1",
        suite="s",
        suite_path="s.yaml",
        suite_hash="h",
        agent="a",
        seed=1,
        started_at=T0,
    )
    assert run.status == "running"
    assert run.finished_at is None
    assert run.config == {}
    assert run.conversation_count == 0
    assert run.polygon_version
