"""The same store on PostgreSQL; runs only when POLYGON_TEST_POSTGRES_URL names a server."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from polygon_voice.store import Store, StoreError
from polygon_voice.store.migrate import HEAD_REVISION, current_revision
from tests.store.store_factories import make_result, make_run

PG_ENV = "POLYGON_TEST_POSTGRES_URL"

pytestmark = pytest.mark.skipif(
    not os.environ.get(PG_ENV),
    reason=f"set {PG_ENV} (e.g. postgresql://user:pw@localhost/db) to test PostgreSQL",
)


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A URL whose tables live in a fresh schema, dropped afterwards."""
    pytest.importorskip("psycopg", reason="needs the postgres extra (psycopg)")
    base = sa.make_url(os.environ[PG_ENV])
    schema = f"polygon_test_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(base)
    with admin.begin() as conn:
        conn.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    url = base.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def test_postgres_round_trip(pg_url: str) -> None:
    with Store(pg_url) as store:
        assert store.migrated
        store.create_run(make_run("pg1", config={"nested": {"list": [1, 2]}}))
        store.add_conversation("pg1", 1, make_result("c2"))
        store.add_conversation("pg1", 0, make_result("c1"))
        assert store.get_conversation("pg1", "c1") == make_result("c1")
        assert [c.id for c in store.iter_conversations("pg1")] == ["c1", "c2"]
        assert [s.index for s in store.iter_summaries("pg1")] == [0, 1]
        with pytest.raises(StoreError, match="already stored"):
            store.add_conversation("pg1", 2, make_result("c1"))
        store.finish_run("pg1", "finished", make_run("x", minutes=5).started_at)
        [run] = store.list_runs()
        assert run.conversation_count == 2
        assert run.status == "finished"
        assert run.config == {"nested": {"list": [1, 2]}}
        assert run.started_at == make_run("x").started_at
        assert store.get_run("pg").id == "pg1"
    with Store(pg_url) as reopened:
        assert not reopened.migrated
        with reopened._engine.connect() as conn:
            assert current_revision(conn) == HEAD_REVISION
