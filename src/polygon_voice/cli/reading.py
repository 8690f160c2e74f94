"""Reading stored runs: `runs`, `show` and `gate`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, fail, open_store
from polygon_voice.model import CaseScore, ExpectResult
from polygon_voice.model.judgement import Judgement
from polygon_voice.report import case_summary
from polygon_voice.report.terminal import (
    case_view,
    conversation_view,
    conversations_table,
    expect_view,
    gate_table,
    judgement_view,
    not_exercised_table,
    runs_table,
)
from polygon_voice.store import StoreError


@app.command()
def runs(
    limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 20,
    db: DbOption = None,
) -> None:
    """List stored runs, newest first."""
    store = open_store(db)
    console.print(runs_table(store.list_runs(limit=limit)))


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", "-c", help="Show this conversation turn by turn."),
    ] = None,
    judgement_set: Annotated[
        str,
        typer.Option(
            "--judgement-set",
            help="Which judgement set to show: '' (the run's own, default) or a rejudge's name.",
        ),
    ] = "",
    db: DbOption = None,
) -> None:
    """Show a stored run, or one of its conversations turn by turn with its judgement."""
    store = open_store(db)
    try:
        record = store.get_run(run_id)
        if conversation is None:
            title = (
                f"Run {record.id}: {record.suite} with {record.agent} "
                f"(seed {record.seed}, {record.status})"
            )
            console.print(conversations_table(store.iter_summaries(record.id), title))
            sets = store.stage_result_names(record.id, "judge")
            if any(sets):  # rejudged: say which sets exist and how to see one
                names = ", ".join(repr(name) for name in sets)
                console.print(f"Judgement sets: {escape(names)} (--judgement-set NAME)")
            return
        played = store.get_conversation(record.id, conversation)
        console.print(conversation_view(played))
        checks = store.get_stage_result(record.id, conversation, "checks")
        if checks is not None:
            console.print(case_view(CaseScore.model_validate(checks)))
        expected = store.get_stage_result(record.id, conversation, "expect")
        if expected is not None:
            shown = ExpectResult.model_validate(expected)
            console.print(expect_view(shown, played.scenario_id))
        judged = store.get_stage_result(record.id, conversation, "judge", judgement_set)
        if judged is not None:
            label = f"set '{judgement_set}'" if judgement_set else "the run's own"
            console.print(judgement_view(Judgement.model_validate(judged), label))
        elif judgement_set:
            fail(f"conversation {conversation} has no judgement in set '{judgement_set}'")
    except StoreError as exc:
        fail(str(exc))


@app.command()
def gate(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    db: DbOption = None,
) -> None:
    """The release gate of a stored run: exit 0 when REL-1..4 all pass, 1 when any fails."""
    store = open_store(db)
    try:
        record = store.get_run(run_id)
        summary = case_summary(store, record.id)
    except StoreError as exc:
        fail(str(exc))
    if summary is None:
        fail(f"run {record.id} has no three-layer cases to gate (suite {record.suite})")
    result = summary.gate()
    verdict = "passes" if result["passed"] else "fails"
    console.print(
        gate_table(result, f"Release gate for run {record.id} ({record.agent}): {verdict}")
    )
    if summary.skipped:
        console.print(not_exercised_table(summary, "Not exercised (the gate ignores them)"))
    raise typer.Exit(0 if result["passed"] else 1)
