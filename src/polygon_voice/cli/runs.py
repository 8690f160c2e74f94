"""`polygon run`: a thin shell over `polygon_voice.api.run_suite` (docs/cli.md, docs/api.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, LlmConfigOption, console, errors, fail, open_store
from polygon_voice.cli.report import HtmlOption, JunitOption
from polygon_voice.suites import BUILTIN_SUITES

if TYPE_CHECKING:
    from polygon_voice.api import RunResult
    from polygon_voice.store import Store

# The judge's repeat limit (judge.MAX_JUDGE_REPEATS), kept here so `--help` imports no judge.
MAX_JUDGE_REPEATS = 25
BUILTIN_NAMES = ", ".join(BUILTIN_SUITES)

QuietOption = Annotated[
    bool,
    typer.Option(
        "--quiet", "-q", help="No progress bar and no tables: only errors and the final line."
    ),
]


@app.command()
def run(
    suite: Annotated[
        Path,
        typer.Argument(
            help=f"Suite file (YAML or JSON), or the name of a built-in suite: {BUILTIN_NAMES}."
        ),
    ],
    agent: Annotated[
        str | None,
        typer.Option(
            help="Agent: package.module:attr, file.py:attr, prompt:FILE, an http:// URL or a "
            "registered name; default: the suite's agent: key."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Run seed: the same seed replays the same calls.")] = 0,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Conversations at once (with --executor ray: per worker).")
    ] = 8,
    executor: Annotated[
        Literal["local", "ray"],
        typer.Option(
            help="Where the calls are played: local (this process) or ray (Ray actors, the "
            "ray extra; docs/large-suites.md)."
        ),
    ] = "local",
    address: Annotated[
        str | None,
        typer.Option(
            help="With --executor ray: the cluster (auto, ray://HOST:PORT or HOST:PORT); "
            "default: RAY_ADDRESS, else a local cluster for the run."
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="With --executor ray: worker actors, one CPU each (default: one per CPU)."
        ),
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            help="Run only the scenarios whose id matches this glob (e.g. 'corr-*'); repeatable.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for report.json and transcripts.jsonl (default: .polygon/runs/RUN_ID)."
        ),
    ] = None,
    resume: Annotated[
        str | None, typer.Option(help="Finish an interrupted run (its id) instead of a new one.")
    ] = None,
    noise: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Recognition noise level for every call, 0 (none) to 1; overrides the suite's.",
        ),
    ] = None,
    gate: Annotated[
        bool,
        typer.Option(
            "--gate", help="Exit 1 when the three-layer release gate fails (docs/three-layer.md)."
        ),
    ] = False,
    fail_on: Annotated[
        Literal["warn", "fail"] | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when any call's verdict is this or worse (warn: warn, fail or unscored; "
            "fail: fail or unscored), listing those calls.",
        ),
    ] = None,
    min_composite: Annotated[
        float | None,
        typer.Option(
            "--min-composite",
            min=0.0,
            max=100.0,
            help="Exit 1 when the mean composite (0-100) of the run's calls is below this.",
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option(
            help="Who scores the calls: deterministic or llm (the judge role's model). "
            "(default: deterministic; a resumed run: its own)"
        ),
    ] = None,
    rubric: Annotated[
        str | None,
        typer.Option(
            help="Rubric: v1, v2, v3 or a rubric YAML file (default: v3; a resumed run: its own)."
        ),
    ] = None,
    judge_repeats: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_JUDGE_REPEATS,
            help="Judge each call K times; the median score counts "
            "(default: 1; a resumed run: its own).",
        ),
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Run each scenario K times (trial n: SCENARIO#n, its own seeds), over the "
            "suite's repeat:; the report adds pass rates and pass^k (docs/experiments.md).",
        ),
    ] = None,
    llm_config: LlmConfigOption = None,
    probes: Annotated[
        Path | None,
        typer.Option(
            "--probes", help="Probe YAML file; default: the built-in deterministic probes."
        ),
    ] = None,
    no_probes: Annotated[
        bool,
        typer.Option("--no-probes", help="Skip the probe pass (it never changes a verdict)."),
    ] = False,
    html: HtmlOption = None,
    junit: JunitOption = None,
    include_unrealistic: Annotated[
        bool,
        typer.Option(
            "--include-unrealistic",
            help="Also run the scenarios whose stored persona is marked unrealistic "
            "(docs/personas.md).",
        ),
    ] = False,
    json_output: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the run's results as one JSON document on stdout (docs/cli.md)."
        ),
    ] = False,
    quiet: QuietOption = False,
    db: DbOption = None,
) -> None:
    """Run a suite against an agent; store every call; write report.json and transcripts.jsonl."""
    from polygon_voice.api import RunInterrupted, RunOptions, run_suite
    from polygon_voice.cli.run_view import (
        CliObserver,
        library_errors,
        print_errors,
        print_run_summary,
        print_three_layer,
        verdict_exit,
    )

    if no_probes and probes is not None:
        fail("give --probes FILE or --no-probes, not both")
    store = open_store(db)
    quiet = quiet or json_output
    observer = CliObserver(quiet=quiet, out=errors if json_output else console)
    with library_errors():
        options = RunOptions(
            agent=agent,
            seed=seed,
            concurrency=concurrency,
            noise=noise,
            judge=judge,
            rubric=rubric,
            judge_repeats=judge_repeats,
            trials=trials,
            probes=probes,
            run_probes=not no_probes,
            llm_config=llm_config,
            scenarios=tuple(scenario or ()),
            include_unrealistic=include_unrealistic,
            resume=resume,
            out=out,
            executor=executor,
            ray_address=address,
            workers=workers,
        )
        try:
            with observer.showing():
                result = run_suite(_suite_source(suite), options, store=store, observer=observer)
        except RunInterrupted as exc:
            fail(str(exc), code=int(exc.exit_code))
    resume_hint = f"polygon run {suite} --resume {result.run_id}"
    if html is not None or junit is not None:
        _write_report_files(store, result.run_id, html, junit, to_stderr=json_output)
    if json_output:
        code = verdict_exit(result, fail_on=fail_on, min_composite=min_composite, gate=gate)
        print_errors(result, resume_hint=resume_hint)
        typer.echo(json.dumps({**result_json(result), "exit_code": code}, indent=2))
        raise typer.Exit(code)
    if not quiet:
        print_run_summary(store, result)
        if result.cases.seen:
            print_three_layer({result.agent: result.cases})
    print_errors(result, resume_hint=resume_hint)
    code = verdict_exit(result, fail_on=fail_on, min_composite=min_composite, gate=gate)
    _final_line(result, quiet)
    if code:
        raise typer.Exit(code)


def _write_report_files(
    store: Store, run_id: str, html: Path | None, junit: Path | None, *, to_stderr: bool
) -> None:
    """The HTML report and JUnit XML of the run just made, read back from the store."""
    from polygon_voice.cli.report import write_report_files

    # With --json, stdout holds the JSON document only: where the files went goes to stderr.
    shown = errors if to_stderr else console
    write_report_files(store, [run_id], html=html, junit=junit, out=shown)


def _suite_source(suite: Path) -> str | Path:
    # A name without a file of that name is a built-in suite's name (or a missing file).
    return str(suite) if not suite.exists() else suite


def _final_line(result: RunResult, quiet: bool) -> None:
    verdicts = ", ".join(f"{v} {n}" for v, n in result.verdicts.items()) or "not judged"
    if result.not_exercised:
        verdicts += f" ({result.not_exercised} not exercised)"
    files = f"{result.report_path}, {result.transcripts_path}" if result.report_path else ""
    console.print(
        f"Run [bold]{result.run_id}[/]: {len(result.calls)} calls, {escape(verdicts)}"
        + (f"; {escape(files)}" if files else "")
    )
    if not quiet:
        console.print(f"See a call turn by turn: polygon show {result.run_id} --conversation ID")


def result_json(result: RunResult) -> dict[str, object]:
    """The results as `--json` prints them (keys documented in docs/cli.md)."""
    return result.to_dict()
