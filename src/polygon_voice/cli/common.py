"""What every command shares: consoles, plain errors, the database option."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from polygon_voice.cli.console import SafeConsole
from polygon_voice.store import Store, StoreError, resolve_db_url

# Safe consoles: no control sequence from a transcript, suite or model reaches the terminal.
console = SafeConsole()
errors = SafeConsole(stderr=True, soft_wrap=True)

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db", help="Database URL or SQLite file [env: POLYGON_DB; default .polygon/polygon.db]"
    ),
]

LlmConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--llm-config",
        help="YAML/TOML file with an `llm:` section (docs/llm.md); else the environment only.",
    ),
]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a plain error and exit without a traceback."""
    errors.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def open_store(db: str | None) -> Store:
    """The results database named by --db, POLYGON_DB or the default file."""
    try:
        return Store(resolve_db_url(db))
    except StoreError as exc:
        fail(str(exc))
