"""The three-layer harness on the command line: `demo` (both reference agents, compared)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, open_store
from polygon_voice.cli.runs import QuietOption

DEMO_AGENTS = ("reference:flawed", "reference:robust")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for each agent's report.")] = Path("out/demo"),
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Run the built-in three-layer suite against both reference agents and compare them."""
    from polygon_voice.api import RunOptions, load_suite, run_suite
    from polygon_voice.checks import RunSummary
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
    if quiet:
        return
    print_three_layer(columns)
    console.print(
        "The flawed agent sounds fine call by call; the axes show where it breaks. See one call: "
        f"polygon show {run_ids[DEMO_AGENTS[0]]} --conversation corr-04"
    )
