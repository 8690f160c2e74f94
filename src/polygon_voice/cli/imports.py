"""`polygon import`: real calls from production systems in, as a stored run (docs/import.md).

Exit codes: 0 every record imported (skipped records, which hold nothing to store, do not
count as failures), 1 some records failed (the others are stored), 2 bad arguments or
nothing readable (no file could be read, or nothing was imported at all from unreadable input).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, JsonOption, console, errors, fail, open_store
from polygon_voice.cli.common import print_json as _print_json
from polygon_voice.cli.progress import progress_bar

if TYPE_CHECKING:
    from polygon_voice.imports.run import ImportSummary

# At most this many error lines are printed; the JSON summary has them all.
MAX_ERROR_LINES = 200


@app.command("import")
def import_(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH",
            help="Files, folders, globs or - for stdin (JSON, JSONL, CSV, text, gzip).",
        ),
    ],
    format_name: Annotated[
        str,
        typer.Option(
            "--format",
            help="auto (detect from the content) or polygon, vapi, retell, livekit, elevenlabs, "
            "twilio, deepgram, openai, csv, lines (docs/import.md).",
        ),
    ] = "auto",
    name: Annotated[
        str | None, typer.Option("--name", help="The run's name (default: import).")
    ] = None,
    agent_label: Annotated[
        str | None,
        typer.Option(
            "--agent-label",
            help="The agent's speaker label (csv, lines) or channel number (twilio, deepgram).",
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Import real calls (Vapi, Retell, LiveKit, OpenAI messages, CSV, ...) as a stored run."""
    from polygon_voice.imports.detect import UnknownFormat
    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import StoreError

    options = ImportOptions(tuple(paths), format_name, name, agent_label)
    store = open_store(db)
    try:
        with progress_bar(errors, quiet=as_json) as bar:
            task = bar.add_task("importing", total=None, status="")

            def show_progress(summary: ImportSummary) -> None:
                if summary.records % 50 == 0:
                    bar.update(task, completed=summary.records, status=_status(summary))

            summary = import_calls(store, options, show_progress)
    except UnknownFormat as exc:
        fail(str(exc))
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    code = exit_code(summary)
    if as_json:
        _print_json({**summary.as_dict(), "exit_code": code})
    else:
        _print_summary(summary)
    raise typer.Exit(code)


def exit_code(summary: ImportSummary) -> int:
    """0 all imported, 1 some failed (others stored), 2 nothing readable or nothing stored."""
    if not summary.files_read or (summary.imported == 0 and summary.failed):
        return 2
    return 1 if summary.failed else 0


def _status(summary: ImportSummary) -> str:
    return f"{summary.imported} imported, {len(summary.failed)} failed"


def _print_summary(summary: ImportSummary) -> None:
    for line in summary.format_lines():
        errors.print(f"[dim]format[/] {escape(line)}")
    for chosen, others in summary.ambiguous.items():
        also = ", ".join(others)
        errors.print(
            f"[yellow]note:[/] records read as {escape(chosen)} also match {escape(also)}; "
            "use --format to choose"
        )
    for failure in summary.failed[:MAX_ERROR_LINES]:
        errors.print(f"[bold red]error:[/] {escape(failure.line())}")
    if len(summary.failed) > MAX_ERROR_LINES:
        errors.print(f"... and {len(summary.failed) - MAX_ERROR_LINES} more errors (see --json)")
    for skip in summary.skipped[:MAX_ERROR_LINES]:
        errors.print(f"[yellow]skipped:[/] {escape(skip.line())}")
    run = f"run {summary.run_id}" if summary.run_id else "no run stored"
    console.print(
        f"{run}: {summary.imported} imported, {len(summary.skipped)} skipped, "
        f"{len(summary.failed)} failed"
    )
