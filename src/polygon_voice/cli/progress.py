"""The one progress bar every long command shows (run, rejudge, generate, lint, compare).

Shown only on a terminal and without `--quiet`: piped output and CI logs stay clean. A command
adds its own live figures (verdicts so far, model requests in flight) through `fields`, which
the `{task.fields[status]}` column prints after the bar.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


def progress_bar(console: Console, *, quiet: bool = False) -> Progress:
    """A transient bar: label, bar, done/total, elapsed, remaining, then the task's `status`.

    Add tasks with `status=""` among their fields (`progress.add_task(label, total=n,
    status="")`) and update it with `progress.update(task, status=...)`.
    """
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        TextColumn("{task.fields[status]}"),
    )
    # disable: the bar draws nothing (and costs nothing) when not wanted or not on a terminal.
    return Progress(
        *columns, console=console, transient=True, disable=quiet or not console.is_terminal
    )
