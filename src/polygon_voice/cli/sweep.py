"""`polygon sweep FILE` runs a parameter sweep; `polygon sweep show ID` shows a stored one.

A thin shell over `polygon_voice.experiments`: the points are run (or reused, or refused)
one after another, with a bar over the points and one over the calls of the point running,
then the leaderboard is printed (docs/experiments.md). Exit codes: 0 the sweep ran to its
end (refused points included: they are named), 1 it stopped early at its floor, 2 bad
input, 3 a point's run failed on a model or endpoint.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    JsonOption,
    LlmConfigOption,
    console,
    fail,
    open_store,
    print_json,
)
from polygon_voice.cli.run_view import CliObserver, library_errors
from polygon_voice.cli.runs import QuietOption
from polygon_voice.experiments.sweep import PointOutcome, SweepObserver

if TYPE_CHECKING:
    from rich.progress import TaskID

SHOW = "show"


class _SweepProgress(CliObserver, SweepObserver):
    """A bar over the points, and the usual run bar for the point being played."""

    def __init__(self, *, quiet: bool) -> None:
        super().__init__(quiet=quiet)
        self._points: TaskID | None = None

    def point_started(self, index: int, total: int, settings: dict[str, Any]) -> None:
        if self._progress is None:
            return
        if self._points is None:
            self._points = self._progress.add_task("sweep points", total=total, status="")
        if self._task is not None:  # the previous point's run bar
            self._progress.remove_task(self._task)
            self._task = None
        shown = ", ".join(f"{k}={v}" for k, v in settings.items())
        self._progress.update(self._points, status=escape(f"point {index}: {shown}"))

    def point_finished(self, outcome: PointOutcome) -> None:
        if self._progress is not None and self._points is not None:
            self._progress.advance(self._points)


@app.command()
def sweep(
    target: Annotated[
        str, typer.Argument(help="A sweep file to run, or `show` to show a stored sweep.")
    ],
    sweep_id: Annotated[
        str | None,
        typer.Argument(help="With `show`: the sweep id (a unique prefix); none: list them."),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the sweep's one-file HTML report.")
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Calls played at once.")] = 8,
    profiles: Annotated[
        Path,
        typer.Option(help="Folder for the prompt-agent files of each profile version."),
    ] = Path(".polygon") / "profiles",
    llm_config: LlmConfigOption = None,
    json_output: JsonOption = False,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Run a parameter sweep and print its leaderboard, or show a stored sweep."""
    if target == SHOW and sweep_id is not None:
        _show(sweep_id, db, html, json_output)
        return
    if sweep_id is not None:
        fail(f"one sweep file at a time; to show a stored sweep: polygon sweep show {sweep_id}")
    if target == SHOW and not Path(SHOW).exists():
        _list(db, json_output)
        return
    _run(Path(target), db, html, json_output, quiet, concurrency, profiles, llm_config)


def _run(
    path: Path,
    db: str | None,
    html: Path | None,
    json_output: bool,
    quiet: bool,
    concurrency: int,
    profiles: Path,
    llm_config: Path | None,
) -> None:
    from polygon_voice.experiments.sweep import SweepOptions, run_sweep
    from polygon_voice.experiments.sweep_file import load_sweep
    from polygon_voice.scenario import SuiteError

    try:
        loaded = load_sweep(path)
    except SuiteError as exc:
        fail(str(exc))
    options = SweepOptions(llm_config=llm_config, concurrency=concurrency, profiles_dir=profiles)
    observer = _SweepProgress(quiet=quiet or json_output)
    with open_store(db) as store, library_errors():
        with observer.showing():
            result = run_sweep(loaded, store, options, observer)
        _show_stored(store, result.sweep_id, html, json_output)
    if result.status == "stopped":
        raise typer.Exit(1)
    if result.failed:
        raise typer.Exit(3)


def _list(db: str | None, json_output: bool) -> None:
    """`polygon sweep show` without an id: the stored sweeps, newest first."""
    with open_store(db) as store:
        sweeps = store.list_sweeps()
    rows: list[dict[str, Any]] = [
        {
            "id": s.id,
            "name": s.name,
            "status": s.status,
            "reason": s.reason,
            "started_at": s.started_at.isoformat(),
            "points": s.config.get("points_planned"),
        }
        for s in sweeps
    ]
    if json_output:
        print_json({"sweeps": rows})
        return
    if not rows:
        console.print("No stored sweep; polygon sweep FILE runs one.")
        return
    table = Table(title="Stored sweeps, newest first")
    for name in ("id", "name", "status", "started", "points"):
        table.add_column(name)
    for row in rows:
        status = row["status"] + (f": {row['reason']}" if row["reason"] else "")
        table.add_row(
            row["id"],
            escape(row["name"]),
            escape(status),
            row["started_at"][:19],
            str(row["points"] or "—"),
        )
    console.print(table)


def _show(sweep_id: str, db: str | None, html: Path | None, json_output: bool) -> None:
    from polygon_voice.store import StoreError

    with open_store(db) as store:
        try:
            _show_stored(store, sweep_id, html, json_output)
        except StoreError as exc:
            fail(str(exc))


def _show_stored(store: Any, sweep_id: str, html: Path | None, json_output: bool) -> None:
    from polygon_voice.experiments.view import sweep_document

    document = sweep_document(store, sweep_id)
    if html is not None:
        from polygon_voice.report.sweep_html import write_sweep_report

        try:
            write_sweep_report(store, document["sweep"]["id"], html)
        except OSError as exc:
            fail(f"cannot write {html}: {exc.strerror or exc}")
    if json_output:
        print_json(document)
        return
    print_sweep(document)
    if html is not None:
        console.print(f"HTML report: {escape(str(html))} (open it in a browser)")


def print_sweep(document: dict[str, Any]) -> None:
    """The sweep's status line, its leaderboard and the points that did not run."""
    info = document["sweep"]
    status = info["status"] + (f": {info['reason']}" if info["reason"] else "")
    console.print(f"Sweep [bold]{escape(info['name'])}[/] {info['id']}: {escape(status)}")
    console.print(leaderboard_table(document["leaderboard"]))
    for row in document["leaderboard"]:
        if row["status"] in ("refused", "skipped", "failed"):
            console.print(f"point {row['point']} {row['status']}: {escape(row['reason'] or '')}")
    for curve in document["curves"]:
        console.print(
            f"robustness curve over {escape(curve['condition'])}: {len(curve['rows'])} values "
            f"(the chart: polygon sweep show {info['id']} --html FILE)"
        )


def leaderboard_table(rows: list[dict[str, Any]]) -> Table:
    """Rank (ties marked `=`), point, settings, the three figures, calls, run, status."""
    table = Table(title="Leaderboard (composite, then stability, then speed)")
    for name in (
        "rank",
        "point",
        "settings",
        "composite",
        "pass rate",
        "stability",
        "speed s",
        "calls",
        "run",
        "status",
    ):
        table.add_column(name, justify="right" if name in ("rank", "point", "calls") else "left")
    for row in rows:
        rank = "—" if row["rank"] is None else f"{row['rank']}{'=' if row['tied'] else ''}"
        settings = ", ".join(f"{k}={v}" for k, v in row["settings"].items())
        table.add_row(
            rank,
            str(row["point"]),
            escape(settings),
            _num(row["mean_composite"], 1),
            "—" if row["pass_rate"] is None else f"{row['pass_rate'] * 100:.0f} %",
            _num(row["stability"], 1),
            _num(row["speed_seconds"], 2),
            str(row["calls"]),
            row["run_id"] or "—",
            escape(row["status"]),
        )
    return table


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:.{digits}f}"
