"""What every command shares: consoles, plain errors, the database option."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape

from polygon_voice.cli.console import SafeConsole

if TYPE_CHECKING:
    from polygon_voice.store import Store

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


# For the commands that read several runs together: one set name, looked up in each run.
RunsJudgementSetOption = Annotated[
    str,
    typer.Option(
        "--judgement-set", help='Judge result set to read in every run ("" = the run\'s own).'
    ),
]

JsonOption = Annotated[
    bool,
    typer.Option(
        "--json", help="Print one JSON document on stdout instead of tables (docs/results.md)."
    ),
]

# Characters JSON leaves raw but a terminal acts on (C1 controls, bidirectional marks, lone
# surrogates); JSON's own escapes already cover C0. Each is written as a \uXXXX escape.
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def print_json(document: Any) -> None:
    """Write `document` to stdout as one JSON document (UTF-8, indented), and nothing else.

    Text from transcripts and models stays readable (no ASCII escaping of letters), but no
    control character reaches the terminal raw, even when stdout is one.
    """
    text = json.dumps(document, ensure_ascii=False, indent=2, default=str)
    text = _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped early (`| head`): nothing is wrong, and nothing more is wanted.
        # stdout goes to devnull so that Python's own flush at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise typer.Exit(0) from None


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a plain error and exit without a traceback."""
    errors.print(f"[bold red]error:[/] {escape(message)}")
    raise typer.Exit(code)


def open_store(db: str | None) -> Store:
    """The results database named by --db, POLYGON_DB or the default file."""
    # Imported here: commands that never open the database do not load SQLAlchemy.
    from polygon_voice.store import Store, StoreError, resolve_db_url

    try:
        return Store(resolve_db_url(db))
    except StoreError as exc:
        fail(str(exc))
