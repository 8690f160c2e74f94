"""The list of stored runs, on the terminal and as JSON (`polygon runs`).

Kept apart from the run and conversation views so that listing runs loads no conversation
model: a run's header is all it shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text

from polygon_voice.report.layout import Column, FitTable
from polygon_voice.store.run_record import RunRecord

IMPORTED = "imported"  # imports.run.RUN_KIND, named here so that listing imports nothing more
REPLAY = "replay"  # api.replay.RUN_KIND: an imported run's callers against another agent


def run_kind(run: RunRecord) -> str:
    """`imported` for a run of real calls (`polygon import`), `replay` for their callers played
    against another agent (`polygon replay`), else `simulated`."""
    kind = run.config.get("kind")
    return kind if kind in (IMPORTED, REPLAY) else "simulated"


def run_header(run: RunRecord) -> dict[str, Any]:
    """The fields that identify a run."""
    return {
        "run_id": run.id,
        "kind": run_kind(run),
        "suite": run.suite,
        "suite_path": run.suite_path,
        "suite_hash": run.suite_hash,
        "agent": run.agent,
        "seed": run.seed,
        "status": run.status,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "polygon_version": run.polygon_version,
        # `polygon run --noise`; null: each scenario's or the suite's level applied.
        "noise": run.config.get("noise"),
        # Calls, tokens and cost of the run's model calls per role; null when none were made.
        "llm_usage": run.config.get("llm_usage"),
    }


def run_entry(run: RunRecord) -> dict[str, Any]:
    """A run as `runs --json` lists it: report.json's header and its number of calls."""
    return {**run_header(run), "conversation_count": run.conversation_count}


def runs_table(runs: Iterable[RunRecord]) -> FitTable:
    """Stored runs, newest first."""
    columns = (Column("run", whole=True), "suite", "agent", Column("seed", right=True), "status",
               Column("calls", right=True), Column("started (UTC)", whole=True))  # fmt: skip
    table = FitTable("Runs", columns)
    for run in runs:
        table.add_row(
            run.id,
            _suite_cell(run),
            run.agent,
            str(run.seed),
            Text(run.status, style="green" if run.status == "finished" else "yellow"),
            str(run.conversation_count),
            run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def _suite_cell(run: RunRecord) -> Text:
    """The suite's name; an import's is marked, so real calls never pass for a simulated run."""
    cell = Text(run.suite)
    kind = run_kind(run)
    if kind != "simulated":
        cell.append(f" ({kind})", style="cyan")
    return cell
