"""`polygon compare RUN_A RUN_B [...]`: put runs side by side (spec section 8, docs/compare.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, fail, open_store
from polygon_voice.compare import CompareError, compare
from polygon_voice.store import StoreError


@app.command("compare")
def compare_runs(
    runs: Annotated[list[str], typer.Argument(help="Two or more run ids (or unique prefixes).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write compare.json into.")
    ] = None,
    judgement_set: Annotated[
        str,
        typer.Option(
            "--judgement-set", help='Judge result set to read in every run ("" = the run\'s own).'
        ),
    ] = "",
    db: DbOption = None,
) -> None:
    """Compare runs: scorecards, scenario matrix, divergence points and an analysis."""
    with open_store(db) as store:
        try:
            result = compare(store, runs, judgement_set)
        except (CompareError, StoreError) as exc:
            fail(str(exc))
    _show(result)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / "compare.json"
        path.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        console.print(f"wrote {escape(str(path))}")


def _show(result: dict[str, Any]) -> None:
    cards = Table(title=f"Scorecards (rubric {result['rubric_version']})")
    for column in ("run", "agent", "calls", "composite (95 % CI)", "pass/warn/fail/unscored"):
        cards.add_column(column)
    agents = {c["run_id"]: c["agent"] for c in result["configs"]}
    for card in result["scorecards"]:
        c, v = card["composite"], card["verdicts"]
        mean = "-" if c["mean"] is None else f"{c['mean']:.1f}"
        ci = "" if c["ci_low"] is None else f" ({c['ci_low']:.1f}-{c['ci_high']:.1f})"
        counts = f"{v['pass']}/{v['warn']}/{v['fail']}/{v['unscored']}"
        cards.add_row(
            card["run_id"], escape(agents[card["run_id"]]), str(card["calls"]), mean + ci, counts
        )
    console.print(cards)
    ids = [c["run_id"] for c in result["configs"]]
    matrix = Table(title="Scenarios by spread")
    for column in ("scenario", *ids, "spread"):
        matrix.add_column(column)
    for row in result["matrix"]:
        values = [f"{row['composites'][i]:.1f}" for i in ids]
        matrix.add_row(escape(row["scenario"]), *values, f"{row['spread']:.1f}")
    console.print(matrix)
    parted = Table(title="Divergence points")
    for column in ("scenario", "a", "b", "turn", "rule"):
        parted.add_column(column)
    for d in result["divergence"]:
        turn = "never" if d["turn"] is None else str(d["turn"])
        parted.add_row(escape(d["scenario"]), d["a"], d["b"], turn, d["rule"] or "")
    console.print(parted)
    if result["incomparable"]:
        console.print("incomparable: " + escape(", ".join(result["incomparable"])))
    console.print(escape(result["analysis"]))
