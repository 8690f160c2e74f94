"""`polygon replay RUN_ID --agent CONFIG`: a thin shell over `polygon_voice.api.replay_run`
(docs/replay.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, LlmConfigOption, console, errors, fail, open_store
from polygon_voice.cli.report import HtmlOption

if TYPE_CHECKING:
    from polygon_voice.api.replay import ReplayResult


@app.command()
def replay(
    run_id: Annotated[
        str, typer.Argument(help="The imported run whose calls are replayed (`polygon import`).")
    ],
    agent: Annotated[
        str,
        typer.Option(
            help="The new agent: package.module:attr, file.py:attr, prompt:FILE, an http:// "
            "URL or a registered name (as polygon run takes it)."
        ),
    ],
    on_mismatch: Annotated[
        Literal["continue", "stop", "llm"],
        typer.Option(
            "--on-mismatch",
            help="When the next recorded caller line no longer fits the new agent: play it "
            "anyway (continue), end the call (stop), or hand over to the LLM caller (llm).",
        ),
    ] = "continue",
    seed: Annotated[int, typer.Option(help="Run seed: the same seed replays the same calls.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations at once.")] = 8,
    judge: Annotated[
        str,
        typer.Option(help="Who scores the calls: deterministic or llm (the judge role's model)."),
    ] = "deterministic",
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for report.json and transcripts.jsonl (default: .polygon/runs/RUN_ID)."
        ),
    ] = None,
    html: HtmlOption = None,
    llm_config: LlmConfigOption = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print the replay's results as one JSON document.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar: only errors and the summary.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Replay an imported run's callers against another agent; store it as a run to compare."""
    from polygon_voice.api import RunInterrupted
    from polygon_voice.api.replay import ReplayOptions, replay_run
    from polygon_voice.cli.run_view import CliObserver, library_errors, print_errors, verdict_exit

    store = open_store(db)
    quiet = quiet or json_output
    observer = CliObserver(quiet=quiet, out=errors if json_output else console)
    with library_errors():
        options = ReplayOptions(
            agent=agent,
            on_mismatch=on_mismatch,
            seed=seed,
            concurrency=concurrency,
            judge=judge,
            llm_config=llm_config,
            out=out,
        )
        try:
            with observer.showing():
                result = replay_run(run_id, options, store=store, observer=observer)
        except RunInterrupted as exc:
            fail(str(exc), code=int(exc.exit_code))
    if html is not None:
        from polygon_voice.cli.report import write_report_files

        shown = errors if json_output else console
        write_report_files(store, [result.replay_of, result.run.run_id], html=html, out=shown)
    print_errors(result.run)
    code = verdict_exit(result.run)
    if json_output:
        typer.echo(json.dumps({**replay_json(result), "exit_code": code}, indent=2))
    else:
        _summary(result)
    if code:
        raise typer.Exit(code)


def _summary(result: ReplayResult) -> None:
    run = result.run
    verdicts = ", ".join(f"{v} {n}" for v, n in run.verdicts.items()) or "not judged"
    skipped = f", {len(result.skipped)} skipped" if result.skipped else ""
    console.print(
        f"Replay [bold]{run.run_id}[/] of run {escape(result.replay_of)}: "
        f"{result.replayed} calls replayed{skipped}; {result.mismatches} mismatches marked "
        f"in {result.calls_with_mismatch} calls; {escape(verdicts)}"
    )
    console.print(f"Compare with the recorded calls: {escape(result.compare_command)}")


def replay_json(result: ReplayResult) -> dict[str, object]:
    """The replay as `--json` prints it: the run's results and the replay's own figures."""
    return {
        **result.run.to_dict(),
        "replay_of": result.replay_of,
        "replayed": result.replayed,
        "skipped": [{"call_id": s.call_id, "reason": s.reason} for s in result.skipped],
        "mismatches": result.mismatches,
        "calls_with_mismatch": result.calls_with_mismatch,
        "first_mismatch": result.first_mismatch,
        "compare": result.compare_command,
    }
