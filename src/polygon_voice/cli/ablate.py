"""`polygon ablate RUN_ID`: which factor a run's failures depend on (docs/experiments.md).

A thin shell over `polygon_voice.experiments.ablate.ablate_run`. Exit codes: 0 done (the
table says what rescued what), 2 bad input (an unknown run or factor, a suite changed since).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    JsonOption,
    LlmConfigOption,
    console,
    open_store,
    print_json,
)
from polygon_voice.cli.run_view import CliObserver, library_errors
from polygon_voice.cli.runs import QuietOption


@app.command()
def ablate(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    factors: Annotated[
        list[str] | None,
        typer.Option(
            "--factor",
            help="A factor to remove (repeatable): noise, persona, tool_faults, latency, "
            "barge_ins [default: all of them].",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Calls played at once.")] = 8,
    llm_config: LlmConfigOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Rerun a run's failing calls with one factor removed at a time; show what rescues them."""
    from polygon_voice.experiments.ablate import FACTORS, ablate_run

    observer = CliObserver(quiet=quiet or json_output)
    with open_store(db) as store, library_errors(), observer.showing():
        result = ablate_run(
            store,
            run_id,
            tuple(factors) if factors else tuple(FACTORS),
            observer=observer,
            concurrency=concurrency,
            llm_config=llm_config,
        )
    document = result.to_dict()
    if json_output:
        print_json(document)
        return
    print_ablation(document)


def print_ablation(document: dict[str, Any]) -> None:
    """The factor x calls-rescued table, then what each failing call depends on."""
    failing = document["failing_calls"]
    console.print(f"Run {document['run_id']}: {len(failing)} failing calls")
    if not failing:
        console.print("Nothing to ablate: no call of the run fails.")
        return
    table = Table(title="Calls rescued with one factor removed")
    for name, justify in (
        ("factor", "left"),
        ("removed", "left"),
        ("rescued", "right"),
        ("calls rescued", "left"),
        ("run", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for row in document["factors"]:
        rescued = f"{row['rescued']} of {len(failing)}" if row["error"] is None else "error"
        calls = ", ".join(row["rescued_calls"]) or "—"
        table.add_row(
            row["factor"],
            row["removed"],
            rescued,
            escape(row["error"] or calls),
            row["run_id"] or "—",
        )
    console.print(table)
    for call, factors in document["depends_on"].items():
        shown = ", ".join(factors) if factors else "no single factor (its own handling fails)"
        console.print(f"{escape(call)}: depends on {escape(shown)}")
