"""Bringing a database to the schema this version of Polygon expects (Alembic, run in code)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from polygon_voice.store import new_schema
from polygon_voice.store.errors import StoreError

# HEAD_REVISION is kept apart (and re-exported here) so opening an up-to-date database costs
# one query and no Alembic import, and `runs` can check it without SQLAlchemy.
from polygon_voice.store.revision import HEAD_REVISION, VERSION_TABLE

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = [
    "HEAD_REVISION",
    "MIGRATIONS_DIR",
    "VERSION_TABLE",
    "alembic_config",
    "current_revision",
    "ensure_schema",
]

MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"


def current_revision(connection: Connection) -> str | None:
    """The revision the database is at, or None for an empty (never migrated) database."""
    if not sa.inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars()
    revisions = sorted(rows)
    return ",".join(revisions) if revisions else None


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config for the packaged migrations, using `connection` when given."""
    from alembic.config import Config

    config = Config()
    # configparser interpolates "%", which may occur in an install path.
    config.set_main_option("script_location", str(MIGRATIONS_DIR).replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def ensure_schema(engine: Engine, *, shipped: bool = True) -> bool:
    """Migrate the database to head unless it is there already; True when it migrated.

    A SQLite database with no tables at all is given the head schema from the shipped
    statements (store/new_schema.py, the same schema without importing Alembic) unless
    `shipped` is false; every other database is migrated by Alembic.
    """
    with engine.connect() as connection:
        if current_revision(connection) == HEAD_REVISION:
            return False
    with engine.begin() as connection:
        sqlite = engine.dialect.name == "sqlite"
        if sqlite:
            # Python's sqlite3 commits each CREATE as it goes, so two processes opening a new
            # database at once (pytest-xdist workers, two runs) would interleave their tables.
            # In one IMMEDIATE transaction the migration is atomic, and the second process
            # waits for it, then finds the schema made.
            connection.exec_driver_sql("BEGIN IMMEDIATE")
        current = current_revision(connection)
        if current == HEAD_REVISION:
            return False
        if sqlite and shipped and _shipped_schema_fits(connection, current):
            new_schema.create(connection)
        else:
            _upgrade(connection, current)
    return True


def _shipped_schema_fits(connection: Connection, current: str | None) -> bool:
    """A new, empty SQLite database, and shipped statements that build this head."""
    return (
        current is None
        and new_schema.REVISION == HEAD_REVISION
        and bool(new_schema.STATEMENTS)
        and new_schema.is_empty(connection)
    )


def _upgrade(connection: Connection, current: str | None) -> None:
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util import CommandError

    config = alembic_config(connection)
    known = {script.revision for script in ScriptDirectory.from_config(config).walk_revisions()}
    if current is not None and current not in known:
        raise StoreError(
            f"the results database is at schema revision {current}, which this version of "
            f"Polygon does not know (it knows up to {HEAD_REVISION}); upgrade polygon-voice "
            "or use another database"
        )
    try:
        command.upgrade(config, "head")
    except CommandError as exc:
        raise StoreError(f"could not migrate the results database: {exc}") from exc
