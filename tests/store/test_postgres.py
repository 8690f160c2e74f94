"""The same store on PostgreSQL: a real server, started for the tests (see tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import dev
import pytest

from polygon_voice.store import Store, StoreError
from polygon_voice.store.migrate import HEAD_REVISION, current_revision
from tests.pg_server import TOOLS, find_bindir
from tests.store.store_factories import make_result, make_run


def test_postgres_round_trip(postgres_url: str) -> None:
    with Store(postgres_url) as store:
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
    with Store(postgres_url) as reopened:
        assert not reopened.migrated
        with reopened._engine.connect() as conn:
            assert current_revision(conn) == HEAD_REVISION


def _install_tools(folder: Path, tools: tuple[str, ...] = TOOLS) -> Path:
    folder.mkdir(parents=True)
    for tool in tools:
        (folder / tool).write_text("")
        (folder / tool).chmod(0o755)  # PATH lookups skip files that cannot be run
    return folder


def test_server_binaries_are_found_newest_debian_version_first(tmp_path: Path) -> None:
    debian = tmp_path / "lib" / "postgresql"
    _install_tools(debian / "9.6" / "bin")
    newest = _install_tools(debian / "15" / "bin")
    _install_tools(debian / "16" / "bin", tools=("pg_ctl",))  # a client-only install
    on_path = _install_tools(tmp_path / "path")
    assert find_bindir(debian, path=str(on_path)) == newest
    assert find_bindir(tmp_path / "nothing", path=str(on_path)) == on_path
    assert find_bindir(tmp_path / "nothing", path="") is None


@pytest.mark.parametrize(
    ("env", "found", "install"),
    [
        ({"CI": "true"}, None, True),
        ({"CI": "true"}, Path("/found"), False),
        ({"CI": "true", "POLYGON_TEST_POSTGRES_URL": "postgresql://u@h/db"}, None, False),
        ({}, None, False),  # a developer's machine: never install system packages
        ({"CI": "1"}, None, False),
    ],
)
def test_ci_installs_the_server_only_when_it_is_missing(
    env: dict[str, str], found: Path | None, install: bool
) -> None:
    assert dev.needs_postgres_install(env, found) is install
