"""Stored personas: add, list, find by id or prefix, replace in place, and what they played."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from alembic import command

from polygon_voice.model import Outcome, Persona, PersonaType
from polygon_voice.store import PersonaRecord, Store, StoreError, new_persona_id
from polygon_voice.store.migrate import alembic_config, current_revision
from tests.store.store_factories import T0, make_result, make_run


def record(persona_id: str, *, name: str = "Anna", prompt: str = "/p/prompt.md") -> PersonaRecord:
    return PersonaRecord(
        id=persona_id,
        persona=Persona(
            name=name,
            type=PersonaType.BUSY,
            intended_outcome=Outcome.CALLBACK,
            difficulty=3,
            goal="Change order 5590.",
            facts={"order_id": "5590", "quantity": 3},
            language="en",
        ),
        prompt_path=prompt,
        prompt_hash="abc123",
        generator="deterministic",
        created_at=T0,
        updated_at=T0,
    )


def test_personas_round_trip_in_creation_order(store: Store) -> None:
    store.add_personas([record("p-2", name="B"), record("p-1", name="A", prompt="/q.md")])
    store.add_personas([record("p-3")])
    assert [r.id for r in store.list_personas()] == ["p-2", "p-1", "p-3"]
    assert store.list_personas()[0] == record("p-2", name="B")
    assert [r.id for r in store.list_personas(prompt_path="/q.md")] == ["p-1"]
    assert store.get_persona("p-1") == record("p-1", name="A", prompt="/q.md")


def test_a_persona_is_found_by_a_unique_prefix(store: Store) -> None:
    store.add_personas([record("p-abc1"), record("p-abd2")])
    assert store.get_persona("p-abc").id == "p-abc1"
    with pytest.raises(StoreError, match="more than one persona id: p-abc1, p-abd2"):
        store.get_persona("p-ab")
    with pytest.raises(StoreError, match=r"no persona with id 'p-zz'.*personas list"):
        store.get_persona("p-zz")
    with pytest.raises(StoreError, match="give a persona id"):
        store.get_persona("  ")


def test_adding_a_stored_id_again_stores_none_of_the_batch(store: Store) -> None:
    store.add_personas([record("p-1")])
    with pytest.raises(StoreError, match="already stored"):
        store.add_personas([record("p-2"), record("p-1")])
    assert [r.id for r in store.list_personas()] == ["p-1"]


def test_replace_keeps_the_id_and_the_creation_time(store: Store) -> None:
    store.add_personas([record("p-1"), record("p-2")])
    later = T0 + timedelta(days=1)
    new = record("p-1", name="Zoe").model_copy(
        update={"prompt_hash": "def456", "generator": "llm:fake", "updated_at": later}
    )
    store.replace_persona(new)
    stored = store.get_persona("p-1")
    assert stored.persona.name == "Zoe"
    assert (stored.prompt_hash, stored.generator) == ("def456", "llm:fake")
    assert (stored.created_at, stored.updated_at) == (T0, later)
    assert store.get_persona("p-2") == record("p-2")
    with pytest.raises(StoreError, match="no persona with id 'p-9'"):
        store.replace_persona(record("p-9"))


def test_new_persona_ids_are_short_and_fresh() -> None:
    ids = {new_persona_id() for _ in range(200)}
    assert len(ids) == 200
    assert all(i.startswith("p-") and len(i) == 10 for i in ids)


def _run_with_links(store: Store, run_id: str, minutes: int, links: list[dict[str, str]]) -> None:
    store.create_run(make_run(run_id, minutes=minutes, config={"personas": links}))
    for index, scenario in enumerate(sorted({link["scenario"] for link in links})):
        store.add_conversation(
            run_id, index, make_result(f"{run_id}-{scenario}", scenario_id=scenario)
        )


def test_the_conversation_of_the_current_version_is_preferred(store: Store) -> None:
    _run_with_links(store, "old", 0, [{"scenario": "s1", "persona": "p-1", "version": "v1"}])
    _run_with_links(store, "new", 5, [{"scenario": "s1", "persona": "p-1", "version": "v2"}])
    _run_with_links(store, "newest", 9, [{"scenario": "s2", "persona": "p-2", "version": "w"}])
    store.create_run(make_run("unrelated", minutes=12))
    found = store.persona_conversations({"p-1": "v1", "p-2": "x", "p-3": "y"})
    assert found["p-1"].run_id == "old"
    assert found["p-1"].current_version
    assert found["p-1"].conversation.id == "old-s1"
    # No run played p-2's current version: the newest other one stands in, marked so.
    assert (found["p-2"].run_id, found["p-2"].current_version) == ("newest", False)
    assert "p-3" not in found
    assert store.persona_conversations({"p-1": "v2"})["p-1"].run_id == "new"


def test_a_run_without_the_conversation_is_skipped(store: Store) -> None:
    _run_with_links(store, "done", 0, [{"scenario": "s1", "persona": "p-1", "version": "v"}])
    store.create_run(
        make_run("killed", minutes=5, config={"personas": [{"scenario": "s1", "persona": "p-1"}]})
    )
    assert store.persona_conversations({"p-1": "v"})["p-1"].run_id == "done"


def test_a_0002_database_gains_the_personas_table(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0002")
        assert not sa.inspect(conn).has_table("personas")
    engine.dispose()
    with Store(db_url) as store:
        assert store.migrated
        store.add_personas([record("p-1")])
        assert store.get_persona("p-1") == record("p-1")


def test_downgrading_0003_drops_only_the_personas(store: Store, db_url: str) -> None:
    store.create_run(make_run("r1"))
    store.add_personas([record("p-1")])
    store.close()
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        command.downgrade(alembic_config(conn), "0002")
    with engine.connect() as conn:
        assert current_revision(conn) == "0002"
        assert not sa.inspect(conn).has_table("personas")
        assert conn.exec_driver_sql("SELECT id FROM runs").scalars().all() == ["r1"]
    engine.dispose()


def test_postgres_personas(postgres_url: str) -> None:
    with Store(postgres_url) as store:
        store.add_personas([record("p-x1", name="Ивана"), record("p-2")])
        store.replace_persona(record("p-2", name="Zoe"))
        assert [r.persona.name for r in store.list_personas()] == ["Ивана", "Zoe"]
        assert store.get_persona("p-x").id == "p-x1"
        _run_with_links(store, "r1", 0, [{"scenario": "s1", "persona": "p-2", "version": "v"}])
        assert store.persona_conversations({"p-2": "v"})["p-2"].conversation.id == "r1-s1"
