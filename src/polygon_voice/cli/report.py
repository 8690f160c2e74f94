"""`polygon report RUN_ID [RUN_ID...] --html FILE --junit FILE`: report files of stored runs.

Also used by `polygon run --html/--junit` and `polygon demo`, which write the same files
from the store once their runs end. Heavy imports stay inside the functions (`--help`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, RunsJudgementSetOption, console, fail, open_store
from polygon_voice.cli.console import SafeConsole

if TYPE_CHECKING:
    from polygon_voice.store import Store

HtmlOption = Annotated[
    Path | None,
    typer.Option(
        "--html", help="Write a self-contained HTML report here (opens from disk; docs/report.md)."
    ),
]
JunitOption = Annotated[
    Path | None,
    typer.Option("--junit", help="Write JUnit XML here, for CI systems (docs/results.md)."),
]


@app.command()
def report(
    runs: Annotated[
        list[str], typer.Argument(help="Run ids (or unique prefixes); two or more are compared.")
    ],
    html: HtmlOption = None,
    junit: JunitOption = None,
    judgement_set: RunsJudgementSetOption = "",
    db: DbOption = None,
) -> None:
    """Write the HTML report and/or JUnit XML of stored runs."""
    if html is None and junit is None:
        fail("say which file to write: --html FILE, --junit FILE or both")
    with open_store(db) as store:
        write_report_files(store, runs, html=html, junit=junit, judgement_set=judgement_set)


def write_report_files(
    store: Store,
    run_ids: Sequence[str],
    *,
    html: Path | None = None,
    junit: Path | None = None,
    judgement_set: str = "",
    out: SafeConsole | None = console,
) -> list[Path]:
    """Write the files asked for and say where each went; a clear error (exit 2) when a run
    is unknown, the runs cannot be read together or a file cannot be written. `out` None:
    nothing is printed (the caller says where the files went in its own words)."""
    from polygon_voice.compare import CompareError
    from polygon_voice.report.html import ReportError, write_html_report
    from polygon_voice.report.junit import write_junit
    from polygon_voice.store import StoreError

    written: list[Path] = []
    try:
        # Prefixes resolved once, so both files name the same runs.
        ids = list(dict.fromkeys(store.get_run(run_id).id for run_id in run_ids))
        if html is not None:
            written.append(write_html_report(store, ids, html, judgement_set))
            if out is not None:
                out.print(f"HTML report: {escape(str(html))} (open it in a browser)")
        if junit is not None:
            written.append(write_junit(store, ids, junit, judgement_set))
            if out is not None:
                out.print(f"JUnit XML: {escape(str(junit))}")
    except (StoreError, CompareError, ReportError) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the report: {exc}")
    return written
