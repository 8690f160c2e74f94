"""`polygon import`: real calls from production systems in, as a stored run (docs/import.md).

Each call is judged as it is stored (`--judge deterministic` by default), with the rules of
IMP-2 for a real call (imports/judging.py).

Exit codes: 0 every record imported (skipped records, which hold nothing to store, do not
count as failures), 1 some records failed (the others are stored), 2 bad arguments or
nothing readable (no file could be read, or nothing was imported at all from unreadable
input), 3 some calls are stored but their judging failed (a judge model that never
answered, a judge error): `polygon rejudge` judges them again.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    JsonOption,
    LlmConfigOption,
    console,
    errors,
    fail,
    open_store,
)
from polygon_voice.cli.common import print_json as _print_json
from polygon_voice.cli.judge_options import JudgeRepeatsOption, RubricOption
from polygon_voice.cli.progress import progress_bar

if TYPE_CHECKING:
    from polygon_voice.imports.expect_file import ExpectFile
    from polygon_voice.imports.judging import CallJudging
    from polygon_voice.imports.run import ImportSummary

# At most this many error lines are printed; the JSON summary has them all.
MAX_ERROR_LINES = 200
IMPORT_JUDGES = ("deterministic", "llm", "none")
JUDGING_FAILED = 3


@app.command("import")
def import_(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH",
            help="Files, folders, globs or - for stdin (JSON, JSONL, CSV, text, gzip).",
        ),
    ],
    format_name: Annotated[
        str,
        typer.Option(
            "--format",
            help="auto (detect from the content) or polygon, vapi, retell, livekit, elevenlabs, "
            "twilio, deepgram, openai, csv, lines (docs/import.md).",
        ),
    ] = "auto",
    name: Annotated[
        str | None, typer.Option("--name", help="The run's name (default: import).")
    ] = None,
    agent_label: Annotated[
        str | None,
        typer.Option(
            "--agent-label",
            help="The agent's speaker label (csv, lines) or channel number (twilio, deepgram).",
        ),
    ] = None,
    judge: Annotated[
        str,
        typer.Option(
            help="Who scores each call as it is stored: deterministic, llm (the judge role's "
            "model) or none (stored unjudged)."
        ),
    ] = "deterministic",
    rubric: RubricOption = "v3",
    judge_repeats: JudgeRepeatsOption = 1,
    llm_config: LlmConfigOption = None,
    probes: Annotated[
        Path | None,
        typer.Option("--probes", help="Probe YAML file: ask these probes of every call."),
    ] = None,
    expect: Annotated[
        Path | None,
        typer.Option(
            "--expect",
            help="YAML/JSON file: call id -> {scenario, expect} (what should have happened; "
            "it wins over a record's own).",
        ),
    ] = None,
    scenario_key: Annotated[
        str | None,
        typer.Option(
            "--scenario-key",
            help="Dotted path into each record's kept fields (e.g. analysis.structuredData."
            "intent) whose value is the call's scenario id, for polygon compare.",
        ),
    ] = None,
    forbidden_phrase: Annotated[
        list[str] | None,
        typer.Option(
            "--forbidden-phrase", help="A phrase the agent must never say (fails the call)."
        ),
    ] = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Import real calls (Vapi, Retell, LiveKit, OpenAI messages, CSV, ...) as a stored run."""
    from polygon_voice.cli.run_view import library_errors
    from polygon_voice.imports.detect import UnknownFormat
    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import StoreError

    if scenario_key is not None and not _plain_key(scenario_key):
        fail(f"--scenario-key {scenario_key!r}: a dotted path of field names, e.g. customer.id")
    expect_file = _expect_file(expect)
    with library_errors():  # a judge that cannot work stops here, before a record is read
        judging = call_judging(
            judge,
            rubric,
            judge_repeats,
            llm_config,
            probes,
            tuple(forbidden_phrase or ()),
            name or "import",
        )
    options = ImportOptions(tuple(paths), format_name, name, agent_label, expect_file, scenario_key)
    store = open_store(db)
    try:
        with progress_bar(errors, quiet=as_json) as bar:
            task = bar.add_task("importing", total=None, status="")

            def show_progress(summary: ImportSummary) -> None:
                if summary.records % 50 == 0:
                    bar.update(task, completed=summary.records, status=_status(summary))

            summary = import_calls(store, options, show_progress, judging)
    except UnknownFormat as exc:
        fail(str(exc))
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    code = exit_code(summary)
    if as_json:
        _print_json({**summary.as_dict(), "exit_code": code})
    else:
        _print_summary(summary)
    raise typer.Exit(code)


def call_judging(
    judge: str,
    rubric: str,
    repeats: int,
    llm_config: Path | None,
    probes: Path | None,
    forbidden_phrases: tuple[str, ...],
    name: str,
) -> CallJudging | None:
    """How each imported call is judged; None for `--judge none` without probes.

    A model role the options need and cannot use is a SetupError here, before any record is
    read, as `polygon run` checks its roles before the first call."""
    from polygon_voice.api.errors import InputError
    from polygon_voice.api.setup import judging_for, probing_for
    from polygon_voice.imports.judging import CallJudging

    if judge not in IMPORT_JUDGES:
        raise InputError(f"no judge {judge!r}; known: {', '.join(IMPORT_JUDGES)}")
    judging = judging_for(judge, rubric, repeats, llm_config) if judge != "none" else None
    probing = probing_for(probes, llm_config) if probes is not None else None
    _preflight(judging is not None and judging.judge.name == "llm", probing, llm_config)
    if judging is None and probing is None:
        return None
    return CallJudging(judging, probing, name, forbidden_phrases)


def _preflight(judge_llm: bool, probing: object, llm_config: Path | None) -> None:
    from polygon_voice import preflight
    from polygon_voice.api.errors import SetupError
    from polygon_voice.api.setup import llm_settings
    from polygon_voice.probes import Probing

    model_probes = (
        [p.id for p in probing.probes if p.rule is None]
        if isinstance(probing, Probing) and probing.client is not None
        else []
    )
    if not judge_llm and not model_probes:
        return
    problems = preflight.check_run_roles(
        llm_settings(llm_config), judge_llm=judge_llm, model_probes=model_probes
    )
    if problems:
        raise SetupError(str(preflight.SetupError(problems)))


def _expect_file(path: Path | None) -> ExpectFile | None:
    from polygon_voice.imports.expect_file import ExpectFileError, load_expect_file

    if path is None:
        return None
    try:
        return load_expect_file(path)
    except ExpectFileError as exc:
        fail(str(exc))


def _plain_key(key: str) -> bool:
    return all(part.strip() and part == part.strip() for part in key.split("."))


def exit_code(summary: ImportSummary) -> int:
    """0 all imported, 1 some failed (others stored), 2 nothing readable or nothing stored,
    3 some stored calls could not be judged (judge model or judge failure)."""
    if not summary.files_read or (summary.imported == 0 and summary.failed):
        return 2
    if summary.judge_failures:
        return JUDGING_FAILED
    return 1 if summary.failed else 0


def _status(summary: ImportSummary) -> str:
    status = f"{summary.imported} imported, {len(summary.failed)} failed"
    if summary.judged:
        status += ", " + _verdicts(summary)
    return status


def _verdicts(summary: ImportSummary) -> str:
    from polygon_voice.imports.run import VERDICTS

    counts = summary.verdicts
    return ", ".join(f"{v} {counts[v]}" for v in VERDICTS if counts[v]) or "none judged"


def _print_summary(summary: ImportSummary) -> None:
    for line in summary.format_lines():
        errors.print(f"[dim]format[/] {escape(line)}")
    for chosen, others in summary.ambiguous.items():
        also = ", ".join(others)
        errors.print(
            f"[yellow]note:[/] records read as {escape(chosen)} also match {escape(also)}; "
            "use --format to choose"
        )
    for failure in summary.failed[:MAX_ERROR_LINES]:
        errors.print(f"[bold red]error:[/] {escape(failure.line())}")
    if len(summary.failed) > MAX_ERROR_LINES:
        errors.print(f"... and {len(summary.failed) - MAX_ERROR_LINES} more errors (see --json)")
    for skip in summary.skipped[:MAX_ERROR_LINES]:
        errors.print(f"[yellow]skipped:[/] {escape(skip.line())}")
    _print_judging_notes(summary)
    run = f"run {summary.run_id}" if summary.run_id else "no run stored"
    console.print(
        f"{run}: {summary.imported} imported, {len(summary.skipped)} skipped, "
        f"{len(summary.failed)} failed"
    )
    if summary.judged or summary.with_expectation:
        console.print(escape(_judging_line(summary)))


def _print_judging_notes(summary: ImportSummary) -> None:
    for failure in summary.judge_failures[:MAX_ERROR_LINES]:
        errors.print(f"[bold red]error:[/] {escape(failure.line())}")
    if summary.expect_unused:
        shown = ", ".join(summary.expect_unused[:20])
        more = len(summary.expect_unused) - 20
        errors.print(
            f"[yellow]warning:[/] {len(summary.expect_unused)} call id(s) of the expect file "
            f"match no imported call: {escape(shown)}" + (f" and {more} more" if more > 0 else "")
        )
    if summary.expect_overridden:
        errors.print(
            f"[yellow]note:[/] the expect file replaced the record's own expectation of "
            f"{summary.expect_overridden} call(s)"
        )
    if summary.scenario_key_missing:
        errors.print(
            f"[yellow]note:[/] {summary.scenario_key_missing} call(s) have no --scenario-key "
            "value: their scenario id is their call id"
        )


def _judging_line(summary: ImportSummary) -> str:
    """`judged 6: pass 2, fail 1, unscored 3; 2 with an expectation (1 met, 1 not met)`."""
    line = f"judged {summary.judged}: {_verdicts(summary)}"
    if summary.with_expectation:
        counts = summary.expectations
        parts = [f"{counts[k]} {k.replace('_', ' ')}" for k in counts if counts[k]]
        line += f"; {summary.with_expectation} with an expectation ({', '.join(parts)})"
    else:
        line += "; none with an expectation"
    return line
