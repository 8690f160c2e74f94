"""`polygon compare RUN_A RUN_B [...]`: put runs side by side (docs/compare.md).

Heavy imports (the store, the comparison, the tables) are inside the command, so `--help`
stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    JsonOption,
    RunsJudgementSetOption,
    console,
    errors,
    fail,
    open_store,
    print_json,
)

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from polygon_voice.report.layout import FitTable


@app.command("compare")
def compare_runs(
    runs: Annotated[list[str], typer.Argument(help="Two or more run ids (or unique prefixes).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="Folder to write compare.json into.")
    ] = None,
    judgement_set: RunsJudgementSetOption = "",
    as_json: JsonOption = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar while the runs are read.")
    ] = False,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a later run has a detected regression against the first "
            "(overall, a criterion or a scenario), naming each on stderr; noise never does.",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Compare runs: scorecards, scenario matrix, divergence points, changes told from noise
    and an analysis."""
    from polygon_voice.cli.progress import progress_bar
    from polygon_voice.compare import CompareError, compare
    from polygon_voice.store import StoreError

    # With --json the bar goes to stderr, so stdout holds the JSON document only.
    bar = progress_bar(errors if as_json else console, quiet=quiet)
    with open_store(db) as store, bar:
        steps = _BarSteps(bar, bar.add_task("comparing", total=0, status=""))
        try:
            result = compare(store, runs, judgement_set, steps)
        except (CompareError, StoreError) as exc:
            fail(str(exc))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        path = out / "compare.json"
        path.write_text(json.dumps(result, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        (errors if as_json else console).print(f"wrote {escape(str(path))}")
    if as_json:
        print_json(result)
    else:
        _show(result)
    if fail_on_regression:
        _fail_on_regressions(result["changes"])


def _fail_on_regressions(changes: list[dict[str, Any]]) -> None:
    """Exit 1 naming every detected regression; nothing when there is none."""
    found = [(c["before"], c["after"], name) for c in changes for name in c["regressions"]]
    if not found:
        return
    for before, after, name in found:
        errors.print(f"regressed: {escape(name)} (run {after} against {before})")
    errors.print(f"--fail-on-regression: {len(found)} detected regression(s)")
    raise typer.Exit(1)


class _BarSteps:
    """The comparison's steps on the progress bar: done / total, and what was last done."""

    def __init__(self, bar: Progress, task: TaskID) -> None:
        self.bar, self.task = bar, task
        self.total = 0

    def more(self, count: int) -> None:
        self.total += count
        self.bar.update(self.task, total=self.total)

    def done(self, what: str) -> None:
        self.bar.update(self.task, advance=1, status=escape(what))


def _show(result: dict[str, Any]) -> None:
    for table in (_scorecards(result), _matrix(result), _divergence(result)):
        console.print(table)
    from polygon_voice.report.trials_view import CHANGE_NOTE

    for change in result["changes"]:
        console.print(_changes(change))
    if result["changes"]:
        console.print(escape(CHANGE_NOTE))
    if result["incomparable"]:
        console.print("incomparable: " + escape(", ".join(result["incomparable"])))
    console.print(escape(result["analysis"]))


def _scorecards(result: dict[str, Any]) -> FitTable:
    from polygon_voice.report.layout import Column, FitTable

    columns = (Column("run", whole=True), "agent", Column("calls", right=True),
               "composite (95 % CI)", "pass / warn / fail / unscored")  # fmt: skip
    cards = FitTable(f"Scorecards (rubric {result['rubric_version']})", columns)
    agents = {c["run_id"]: c["agent"] for c in result["configs"]}
    for card in result["scorecards"]:
        c, v = card["composite"], card["verdicts"]
        mean = "-" if c["mean"] is None else f"{c['mean']:.1f}"
        ci = "" if c["ci_low"] is None else f" ({c['ci_low']:.1f}-{c['ci_high']:.1f})"
        counts = f"{v['pass']}/{v['warn']}/{v['fail']}/{v['unscored']}"
        cards.add_row(card["run_id"], agents[card["run_id"]], str(card["calls"]), mean + ci, counts)
    return cards


def _matrix(result: dict[str, Any]) -> FitTable:
    from polygon_voice.report.layout import Column, FitTable

    ids = [c["run_id"] for c in result["configs"]]
    headers = [Column(i, right=True, whole=True) for i in ids]
    matrix = FitTable("Scenarios by spread", [Column("scenario", whole=True), *headers,
                                              Column("spread", right=True)])  # fmt: skip
    for row in result["matrix"]:
        values = [f"{row['composites'][i]:.1f}" for i in ids]
        matrix.add_row(row["scenario"], *values, f"{row['spread']:.1f}")
    return matrix


def _divergence(result: dict[str, Any]) -> FitTable:
    from polygon_voice.report.layout import Column, FitTable

    columns = (Column("scenario", whole=True), Column("a", whole=True), Column("b", whole=True),
               Column("turn", right=True), "rule")  # fmt: skip
    parted = FitTable("Divergence points", columns)
    for d in result["divergence"]:
        turn = "never" if d["turn"] is None else str(d["turn"])
        # Not in the matrix (unscored in some run): its turns are compared all the same.
        scenario = d["scenario"] if d.get("scored", True) else f"{d['scenario']} (unscored)"
        parted.add_row(scenario, d["a"], d["b"], turn, d["rule"] or "")
    return parted


def _changes(change: dict[str, Any]) -> FitTable:
    from polygon_voice.report.layout import Column, FitTable
    from polygon_voice.report.trials_view import change_rows

    columns = (Column("what", whole=True), Column("mark", whole=True),
               Column("difference", right=True), Column("pairs", right=True),
               "pass flips (better/worse, p)", "why")  # fmt: skip
    title = (
        f"Changes: {change['after']} against {change['before']} "
        f"({change['pairs']} pairs, {change['unpaired']} unpaired)"
    )
    table = FitTable(title, columns)
    for row in change_rows(change):
        what, mark, difference, _, _, pairs, flips, why = row["cells"]
        # The interval and p are in `why`; a regression stands out in capitals.
        shown = mark.upper() if mark == "regressed" else mark
        table.add_row(what, shown, difference, pairs, flips, why)
    return table
