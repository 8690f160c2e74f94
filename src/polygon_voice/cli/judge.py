"""`polygon rejudge`: judge a stored run's calls again, without running them again.

A thin shell over `polygon_voice.api.rejudge_run`: the new judgements are a named set beside
the run's own, never in place of it, so a verdict keeps the rubric version it was made under.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, LlmConfigOption, console, open_store
from polygon_voice.cli.judge_options import JudgeRepeatsOption, RubricOption
from polygon_voice.cli.runs import QuietOption


@app.command()
def rejudge(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    judge: Annotated[str, typer.Option(help="Who scores: deterministic or llm.")] = (
        "deterministic"
    ),
    rubric: RubricOption = "v3",
    judge_repeats: JudgeRepeatsOption = 1,
    name: Annotated[
        str | None,
        typer.Option(
            help="Name of the new judgement set (refused when the run has one of that name) "
            "(default: RUBRIC:JUDGE:K, numbered when taken)."
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations judged at once.")] = 8,
    out: Annotated[
        Path | None,
        typer.Option(help="Write report.json and transcripts.jsonl here, with the new set."),
    ] = None,
    llm_config: LlmConfigOption = None,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Judge a stored run again as a new named judgement set; the run's own set stays."""
    from polygon_voice.api import RejudgeOptions, rejudge_run
    from polygon_voice.cli.run_view import CliObserver, library_errors, print_errors
    from polygon_voice.report.terminal import verdict_table

    store = open_store(db)
    observer = CliObserver(quiet=quiet)
    options = RejudgeOptions(
        judge=judge,
        rubric=rubric,
        judge_repeats=judge_repeats,
        concurrency=concurrency,
        name=name,
        llm_config=llm_config,
        out=out,
    )
    with library_errors(), observer.showing():
        result = rejudge_run(run_id, options, store=store, observer=observer)
    set_name = escape(result.judgement_set)
    if not quiet:
        console.print(f"Judgement set [bold]{set_name}[/] of run {result.run_id}:")
        console.print(verdict_table(result.verdicts, result.mean_composite))
        judge_usage = (result.usage or {}).get("judge")
        if judge_usage:
            console.print(
                f"judge model: {judge_usage['calls']} calls ({judge_usage['cached_calls']} "
                f"cached), {judge_usage['tokens_in']} tokens in, {judge_usage['tokens_out']} out"
            )
    print_errors(result)
    if result.report_path is not None:
        console.print(f"Report with this set: {escape(str(result.report_path))}")
    verdicts = ", ".join(f"{v} {n}" for v, n in result.verdicts.items()) or "none judged"
    console.print(
        f"Set [bold]{set_name}[/] of run {result.run_id}: {escape(verdicts)}. See one: "
        f"polygon show {result.run_id} --conversation ID --judgement-set {set_name}"
    )
    if result.infrastructure_failed:
        raise typer.Exit(3)
