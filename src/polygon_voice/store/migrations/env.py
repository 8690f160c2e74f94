"""Alembic environment for the results database.

Polygon runs it from `Store()` with the open connection in `config.attributes["connection"]`.
A developer can also run the alembic command line with the alembic.ini beside this file,
e.g. `alembic -c src/polygon_voice/store/migrations/alembic.ini -x url=sqlite:///x.db upgrade head`.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from polygon_voice.store.schema import metadata


def _run(connection: Connection) -> None:
    # Batch mode lets later migrations alter tables on SQLite (copy-and-move).
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def _main() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option(
        "sqlalchemy.url"
    )
    if not url:
        raise SystemExit("give the database URL: alembic ... -x url=sqlite:///path/to/polygon.db")
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


_main()
