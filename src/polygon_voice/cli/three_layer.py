"""The three-layer harness on the command line: `demo` (both reference agents, compared)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, open_store
from polygon_voice.cli.runs import QuietOption

if TYPE_CHECKING:
    from polygon_voice.store import Store

DEMO_AGENTS = ("reference:flawed", "reference:robust")


@app.command()
def demo(
    out: Annotated[
        Path, typer.Option(help="Folder for each agent's report and the HTML report.")
    ] = Path("out/demo"),
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Run the built-in three-layer suite against both reference agents and compare them."""
    from polygon_voice.api import RunOptions, load_suite, run_suite
    from polygon_voice.checks import RunSummary
    from polygon_voice.cli.report import write_report_files
    from polygon_voice.cli.run_view import CliObserver, library_errors, print_three_layer

    store = open_store(db)
    columns: dict[str, RunSummary] = {}
    run_ids: dict[str, str] = {}
    with library_errors():
        loaded = load_suite("three-layer")
        for agent in DEMO_AGENTS:
            options = RunOptions(agent=agent, seed=seed, out=out / agent.split(":")[-1])
            observer = CliObserver(quiet=quiet)
            with observer.showing():
                result = run_suite(loaded, options, store=store, observer=observer)
            console.print(f"{agent}: run {result.run_id}, report {escape(str(result.report_path))}")
            columns[agent] = result.cases
            run_ids[agent] = result.run_id
        _persona_run(store, out, seed, quiet)
    report = out / REPORT_FILE
    write_report_files(store, list(run_ids.values()), html=report, out=None)
    if not quiet:
        print_three_layer(columns)
        console.print(
            "The flawed agent sounds fine call by call; the axes show where it breaks. See one "
            f"call: polygon show {run_ids[DEMO_AGENTS[0]]} --conversation corr-04"
        )
    console.print(f"Open in a browser: {escape(str(report))}")
    if not quiet:
        console.print(f"Every screen, over these runs: polygon serve{_db_flag(db)}")


REPORT_FILE = "report.html"


def _persona_run(store: Store, out: Path, seed: int, quiet: bool) -> None:
    """A few personas generated from the order-line prompt, played against the robust agent."""
    from polygon_voice.api import RunOptions, run_suite
    from polygon_voice.cli.demo_personas import demo_personas, demo_prompt, write_persona_suite
    from polygon_voice.cli.run_view import CliObserver

    prompt = demo_prompt(out)
    records = demo_personas(store, prompt, seed)
    if all(record.unrealistic for record in records):
        console.print("The demo's personas are all marked unrealistic: their run is skipped.")
        return
    suite = write_persona_suite(out, records)
    options = RunOptions(agent=DEMO_AGENTS[1], seed=seed, out=out / "personas")
    observer = CliObserver(quiet=quiet)
    with observer.showing():
        result = run_suite(suite, options, store=store, observer=observer)
    console.print(
        f"{len(records)} personas from {escape(str(prompt))}, {len(result.calls)} calls: "
        f"run {result.run_id} ({escape(str(suite))})"
    )


def _db_flag(db: str | None) -> str:
    return f" --db {escape(db)}" if db else ""
