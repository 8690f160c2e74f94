"""`polygon lint`: read an agent's prompt before a run (docs/lint.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress, TaskID

from polygon_voice.cli.app import app
from polygon_voice.cli.common import LlmConfigOption, console, errors, fail
from polygon_voice.cli.progress import progress_bar
from polygon_voice.lint import AXES, MAX_TIER, LintError, lint
from polygon_voice.lint.confidence import DEFAULT_MIN_CONFIDENCE
from polygon_voice.lint.engine import MAX_PROMPT_BYTES, Step, check_size
from polygon_voice.lint.render import render
from polygon_voice.llm import LLMError, LLMSettings, load_llm_config


@app.command("lint")
def lint_command(
    prompt_file: Annotated[Path, typer.Argument(help="The agent's prompt (text or Markdown).")],
    max_tier: Annotated[
        int,
        typer.Option(
            "--max-tier",
            min=1,
            max=MAX_TIER,
            help="Stop after this tier: 1 rules, 2 word rarity, 3 embeddings, 4 judge model.",
        ),
    ] = MAX_TIER,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    fail_above: Annotated[
        float | None,
        typer.Option(
            "--fail-above",
            min=0.0,
            max=1.0,
            help="Exit 1 when any axis scores above this (0 good .. 1 bad).",
        ),
    ] = None,
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang",
            help="The prompt's language: en, de, hr or ru (default: detected from the text).",
        ),
    ] = None,
    llm_config: LlmConfigOption = None,
    max_bytes: Annotated[
        int,
        typer.Option("--max-bytes", min=0, help="Refuse a larger prompt file (0: no limit)."),
    ] = MAX_PROMPT_BYTES,
    min_confidence: Annotated[
        float,
        typer.Option(
            "--min-confidence",
            min=0.0,
            max=1.0,
            help="Report only findings of kinds this often right on the labelled corpus (0: all).",
        ),
    ] = DEFAULT_MIN_CONFIDENCE,
) -> None:
    """Score PROMPT_FILE on five axes and mark the weak places."""
    limit = max_bytes or None
    try:
        # Sized before it is read: a huge file is refused without loading it.
        check_size(prompt_file.stat().st_size, limit)
        text = prompt_file.read_text(encoding="utf-8")
    except LintError as exc:
        fail(f"cannot lint {prompt_file}: {exc}")
    except (OSError, UnicodeDecodeError) as exc:
        fail(f"cannot read {prompt_file}: {exc}")
    try:
        settings = load_llm_config(llm_config) if max_tier >= 4 else None
        if settings is not None and settings.is_configured("judge"):
            _settle_judge_endpoint(settings)
        bar = progress_bar(errors)
        try:
            report = lint(
                text,
                max_tier=max_tier,
                language=lang,
                settings=settings,
                max_bytes=limit,
                on_step=_show_steps(bar),
                min_confidence=min_confidence,
            )
        finally:
            bar.stop()
    except (LintError, LLMError) as exc:
        fail(str(exc))
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), ensure_ascii=False, indent=2) + "\n")
    else:
        # soft_wrap: the prompt's lines are printed whole, never cut or re-wrapped to fit
        # the terminal, so each caret stays under its characters.
        console.print(render(text, report), soft_wrap=True)
    for skip in report.tiers_skipped:
        if skip.failed:
            # A configured tier that broke is said even under --json (stderr keeps stdout
            # JSON); the other tiers' scores stand, so the exit code does not change.
            errors.print(f"warning: tier {skip.tier} skipped: {skip.reason}", markup=False)
        elif "pip install" in skip.reason:
            # A missing extra is worth saying even under --json, for the same reason.
            errors.print(f"note: tier {skip.tier} skipped: {skip.reason}", markup=False)
    if as_json:
        for note in report.notes:
            errors.print(f"note: {note}", markup=False)
    if fail_above is not None and any(report.axes[a].score > fail_above for a in AXES):
        raise typer.Exit(1)


def _settle_judge_endpoint(settings: LLMSettings) -> None:
    """What tier 4's endpoint takes, from the capability cache or a cheap probe (as before a
    run), so its one request goes in a form the server takes. A problem found here is left
    to the tier itself: it is then skipped with its reason, and tiers 1-3 stand."""
    from polygon_voice.preflight import RoleNeed, check_roles

    check_roles([RoleNeed("judge", "lint tier 4")], settings)


def _show_steps(bar: Progress) -> Step:
    """The slow steps on the progress bar (on stderr: stdout may be --json): tiers 3-4's,
    and tier 2's when it asks a logprobs endpoint.

    The bar starts with the first step, so a lint of tiers 1-2 without an endpoint draws
    nothing at all.
    """
    task: TaskID | None = None

    def on_step(description: str, done: int, total: int) -> None:
        nonlocal task
        if task is None:
            bar.start()
            task = bar.add_task(description, total=total, status="")
        bar.update(task, description=description, completed=done)

    return on_step
