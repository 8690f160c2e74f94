"""The three-layer harness on the command line: `gate` and `demo`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from polygon_voice.checks import RunSummary
from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, open_store
from polygon_voice.cli.runs import _load, execute_run, print_three_layer
from polygon_voice.report import write_run_files

DEMO_AGENTS = ("reference:flawed", "reference:robust")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Folder for each agent's report.")] = Path("out/demo"),
    seed: Annotated[int, typer.Option(help="Run seed.")] = 0,
    db: DbOption = None,
) -> None:
    """Run the built-in three-layer suite against both reference agents and compare them."""
    loaded = _load(Path("three-layer"))
    store = open_store(db)
    columns: dict[str, RunSummary] = {}
    run_ids: dict[str, str] = {}
    for agent in DEMO_AGENTS:
        record, tally = execute_run(store, loaded, agent, seed, concurrency=8)
        folder = out / agent.split(":")[-1]
        report, _ = write_run_files(store, store.get_run(record.id), folder)
        console.print(f"{agent}: run {record.id}, report {escape(str(report))}")
        columns[agent] = tally.cases
        run_ids[agent] = record.id
    print_three_layer(columns)
    console.print(
        "The flawed agent sounds fine call by call; the axes show where it breaks. See one call: "
        f"polygon show {run_ids[DEMO_AGENTS[0]]} --conversation corr-04"
    )
