"""A real PostgreSQL server for the tests that need one, and a fresh database per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from tests.cli.conftest import Polygon
from tests.pg_server import DEBIAN_ROOT, find_bindir, throwaway_server

# A server to use instead of starting one; its user needs the CREATEDB privilege.
PG_ENV = "POLYGON_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A superuser URL of $POLYGON_TEST_POSTGRES_URL, else of a server started for this session."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("needs the postgres extra (psycopg): pip install -e '.[test,postgres]'")
    given = os.environ.get(PG_ENV)
    if given:
        url = sa.make_url(given)
        # A bare postgresql:// means psycopg2 to SQLAlchemy; the postgres extra is psycopg 3.
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        yield url.render_as_string(hide_password=False)
        return
    bindir = find_bindir()
    if bindir is None:
        _unavailable(
            f"no PostgreSQL server: found no initdb/pg_ctl/postgres in {DEBIAN_ROOT}/*/bin "
            f"or on PATH (Debian: apt-get install postgresql), and {PG_ENV} is not set"
        )
    with throwaway_server(bindir) as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """The URL of a new, empty database on the test server, dropped after the test."""
    name = f"polygon_test_{uuid.uuid4().hex[:12]}"
    # AUTOCOMMIT: CREATE and DROP DATABASE cannot run inside a transaction.
    admin = sa.create_engine(postgres_server, isolation_level="AUTOCOMMIT", poolclass=NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        url = sa.make_url(postgres_server).set(database=name)
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            # FORCE: a connection the test leaked must not keep the database alive.
            conn.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def _unavailable(reason: str) -> NoReturn:
    # CI installs the server (dev.py), so there a missing one is a failure, never a quiet skip.
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (CI=true: the PostgreSQL tests must run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def polygon(tmp_path: Path) -> Polygon:
    """The `polygon` command, isolated in tmp_path (any test folder may use it)."""
    return Polygon(tmp_path)
