"""A person marks a stored persona unrealistic (READ-2): stored, read back, kept across upgrades."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from polygon_voice.store import Store, StoreError
from polygon_voice.store.migrate import alembic_config, current_revision
from tests.store.store_factories import T0, make_run
from tests.store.test_personas import record


def test_a_new_persona_is_realistic(store: Store) -> None:
    store.add_personas([record("p-1")])
    stored = store.get_persona("p-1")
    assert (stored.unrealistic, stored.unrealistic_note, stored.marked_at) == (False, None, None)


def test_marking_is_stored_with_its_note_and_time(store: Store) -> None:
    store.add_personas([record("p-1a"), record("p-2b")])
    marked = store.mark_persona("p-1", True, note="  nobody talks like this  ")
    assert marked.id == "p-1a"  # a unique prefix is enough
    assert (marked.unrealistic, marked.unrealistic_note) == (True, "nobody talks like this")
    assert marked.marked_at is not None
    assert marked.marked_at > T0
    assert store.get_persona("p-1a") == marked
    assert not store.get_persona("p-2b").unrealistic
    assert [r.unrealistic for r in store.list_personas()] == [True, False]


def test_marking_realistic_again_clears_the_note(store: Store) -> None:
    store.add_personas([record("p-1")])
    store.mark_persona("p-1", True, note="robotic")
    again = store.mark_persona("p-1", False)
    assert (again.unrealistic, again.unrealistic_note) == (False, None)
    assert store.get_persona("p-1") == again
    assert again.marked_at is not None


def test_a_refresh_keeps_the_mark(store: Store) -> None:
    store.add_personas([record("p-1")])
    marked = store.mark_persona("p-1", True, note="robotic")
    store.replace_persona(marked.model_copy(update={"prompt_hash": "new"}))
    assert store.get_persona("p-1").unrealistic


def test_marking_an_unknown_persona_is_a_clear_error(store: Store) -> None:
    store.add_personas([record("p-1")])
    with pytest.raises(StoreError, match="no persona with id 'p-9'"):
        store.mark_persona("p-9", True)


def test_a_0005_database_keeps_its_personas_and_runs(db_url: str) -> None:
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        command.upgrade(alembic_config(conn), "0005")
        conn.execute(
            sa.text(
                "INSERT INTO personas (persona_id, name, data, prompt_path, prompt_hash, "
                "generator, created_at, updated_at, usage) VALUES ('p-old', 'Anna', :data, "
                "'/p/prompt.md', 'abc123', 'deterministic', :t, :t, NULL)"
            ),
            {"data": record("p-old").persona.model_dump_json(), "t": T0.replace(tzinfo=None)},
        )
    engine.dispose()
    with Store(db_url) as store:
        assert store.migrated
        old = store.get_persona("p-old")
        assert old.persona == record("p-old").persona
        assert (old.unrealistic, old.unrealistic_note, old.marked_at) == (False, None, None)
        store.create_run(make_run("r1"))
        assert store.mark_persona("p-old", True).unrealistic
    engine = sa.create_engine(db_url)
    with engine.begin() as conn:
        assert current_revision(conn) == "0007"
        command.downgrade(alembic_config(conn), "0005")
        assert conn.exec_driver_sql("SELECT persona_id FROM personas").scalars().all() == ["p-old"]
        assert conn.exec_driver_sql("SELECT id FROM runs").scalars().all() == ["r1"]
        columns = {c["name"] for c in sa.inspect(conn).get_columns("personas")}
        assert "unrealistic" not in columns
        assert "usage" in columns
    engine.dispose()


def test_postgres_marking(postgres_url: str) -> None:
    with Store(postgres_url) as store:
        store.add_personas([record("p-pg1"), record("p-pg2")])
        marked = store.mark_persona("p-pg1", True, note="Ивана never talks like this")
        assert store.get_persona("p-pg1") == marked
        assert [r.unrealistic for r in store.list_personas()] == [True, False]
