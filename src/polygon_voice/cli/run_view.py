"""What `run`, `demo` and `rejudge` show while and after a run: the progress bar, the first
failure of each role, the summary tables, the causes of failures, the calls that broke a
--fail-on or --min-composite. The library prints nothing; this module does it for them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from polygon_voice.api.errors import ExitCode, PolygonError
from polygon_voice.api.events import RequestCounts, RunObserver, RunStarted
from polygon_voice.cli.common import console, errors, fail
from polygon_voice.cli.progress import progress_bar
from polygon_voice.judge.run import UNUSABLE_ANSWERS
from polygon_voice.llm.usage import in_flight_text
from polygon_voice.textsafe import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from polygon_voice.api.config import FailOn
    from polygon_voice.api.results import CallResult, RunResult
    from polygon_voice.checks import RunSummary
    from polygon_voice.model import ConversationResult
    from polygon_voice.runner import RunTally
    from polygon_voice.store import Store

SHOWN_INLINE = 30  # a run with more calls lists them with `polygon show RUN`, not here
# How each role's failures read in the summary, and what they mean for the calls.
ROLE_WORDS = {
    "agent": ("the agent's model or service could not be reached", "those calls ended in error"),
    "caller": ("the caller model failed", "those calls are not exercised"),
    "judge": ("the judge model failed", "their verdict is unscored"),
    "probes": ("the probe model failed", "its answers count as not applicable"),
}


@contextmanager
def library_errors() -> Iterator[None]:
    """The library's errors as one plain line each and their exit code; never a traceback."""
    try:
        yield
    except PolygonError as exc:
        fail(str(exc), code=int(exc.exit_code))


class _LiveStatus:
    """The progress bar's status text, made each time the bar is drawn (so requests in
    flight move between calls): verdicts so far, model requests, failures per role."""

    def __init__(self) -> None:
        self.tally: RunTally | None = None
        self.activity: Callable[[], RequestCounts] | None = None
        self._lock = threading.Lock()

    def __format__(self, spec: str) -> str:
        with self._lock:
            parts: list[str] = []
            tally = self.tally
            if tally is not None and tally.verdicts:
                parts.append(
                    " ".join(
                        f"{v} {tally.verdicts[v]}"
                        for v in ("pass", "warn", "fail", "unscored")
                        if tally.verdicts[v]
                    )
                )
            if tally is not None and tally.not_exercised:
                parts.append(f"not exercised {tally.not_exercised}")
            if self.activity is not None:
                counts = self.activity()
                if counts.requests:
                    waiting = in_flight_text(counts.in_flight, counts.oldest_wait, counts.waiting)
                    line = f"model: {waiting}, {counts.requests} sent"
                    parts.append(line + (f", {counts.retries} retried" if counts.retries else ""))
            if tally is not None:
                failed = [f"{f.role} failed {f.count}" for f in tally.failures.in_order()]
                if failed:
                    parts.append("[red]" + ", ".join(failed) + "[/]")
            return " · ".join(parts)


class CliObserver(RunObserver):
    """Draws the progress bar of a run or rejudge and prints each role's first failure."""

    def __init__(self, *, quiet: bool = False, out: Console | None = None) -> None:
        self.quiet = quiet
        self.out = out or console
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._status = _LiveStatus()

    @contextmanager
    def showing(self) -> Iterator[CliObserver]:
        """The bar is drawn while inside (nothing when quiet or not on a terminal)."""
        with progress_bar(self.out, quiet=self.quiet) as progress:
            self._progress = progress
            try:
                yield self
            finally:
                self._progress = None
                self._task = None

    def run_started(self, started: RunStarted) -> None:
        self._status.activity = started.activity
        if self._progress is not None:
            label = escape(f"{started.suite} with {started.agent}")
            self._task = self._progress.add_task(label, total=started.total, status=self._status)

    def call_finished(self, result: ConversationResult, tally: RunTally) -> None:
        self._status.tally = tally
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)

    def role_failed(self, role: str, error: str) -> None:
        what = ROLE_WORDS.get(role, (f"{role} failed", ""))[0]
        errors.print(
            f"[bold red]error:[/] {escape(what)}: {escape(on_screen(error))} "
            "[dim](further failures are counted, not printed)[/]"
        )

    def note(self, message: str) -> None:
        if not self.quiet:
            self.out.print(escape(message))

    def warning(self, message: str) -> None:
        errors.print(f"[yellow]warning:[/] {escape(message)}")


# Errors are stored in full with their call (polygon show prints them); a screen line
# keeps their start, which names the role, the endpoint and the status.
SCREEN_ERROR_CHARS = 300


def on_screen(error: str) -> str:
    """An error shortened for a terminal line; the stored text is the whole of it."""
    if len(error) <= SCREEN_ERROR_CHARS:
        return error
    rest = len(error) - SCREEN_ERROR_CHARS
    return f"{error[:SCREEN_ERROR_CHARS]}... ({rest} more characters in the stored call)"


def print_run_summary(store: Store, result: RunResult) -> None:
    """The calls (when few), how they ended, the verdicts, expectations, probes and counts."""
    from polygon_voice.report.terminal import (
        CallVerdict,
        conversations_table,
        end_reason_table,
        verdict_table,
    )

    if len(result.calls) <= SHOWN_INLINE:
        verdicts = {
            c.id: CallVerdict(c.verdict, c.composite) for c in result.calls if c.verdict is not None
        }
        summaries = list(store.iter_summaries(result.run_id))
        console.print(conversations_table(summaries, "Conversations", verdicts))
    ends: dict[str, int] = {}
    for call in result.calls:
        ends[call.end_reason] = ends.get(call.end_reason, 0) + 1
    console.print(end_reason_table(ends))
    if result.verdicts:
        console.print(verdict_table(result.verdicts, result.mean_composite))
    console.print(expectations_line(result))
    if result.not_exercised:
        console.print(not_exercised_line(result))
    if result.probes:
        console.print(probes_table(result))
    print_trials(result.calls)
    console.print(
        f"{result.calls_run} calls run now, {result.turns_run} turns, "
        f"{result.tool_calls_run} tool calls."
    )


def print_trials(calls: Sequence[CallResult]) -> None:
    """The trials table, when some scenario ran more than once (docs/experiments.md)."""
    from polygon_voice.report.trials_view import trials_table, trials_view

    view = trials_view(calls)
    if view is None:
        return
    console.print(trials_table(view))
    for note in view["notes"]:
        console.print(escape(note))


def print_errors(result: RunResult, *, resume_hint: str | None = None) -> None:
    """The calls that ended in an agent error (a few), then each failed role's cause, once."""
    for conversation_id, message in result.errors:
        errors.print(f"[red]error in {escape(conversation_id)}:[/] {escape(message)}")
    for failure in result.failures:
        what, meaning = ROLE_WORDS.get(failure.role, (f"{failure.role} failed", ""))
        count = f"{failure.count} call(s)"
        line = f"[bold red]{escape(what)} for {count}:[/] {escape(failure.first_error)}"
        if meaning:
            line += f"; {meaning}"
        # Only a judge that never answered is asked again on resume; unusable answers replay.
        if (
            failure.role == "judge"
            and resume_hint
            and not failure.first_error.startswith(UNUSABLE_ANSWERS)
        ):
            line += f" ({escape(resume_hint)} judges them again)"
        errors.print(line)


def expectations_line(result: RunResult) -> str:
    """How the calls stand against their scenarios' expected outcomes, and how many state none."""
    counts = result.expectations
    line = (
        f"Expected outcomes: {counts['met']} met, {counts['not_met']} not met, "
        f"{counts['not_exercised']} not exercised"
    )
    unstated = len(result.calls) - sum(counts.values())
    if unstated:
        line += (
            f"; {unstated} call(s) from scenarios without `expect:`, whose verdicts cannot "
            "tell a request done from one ignored (docs/suites.md)"
        )
    return escape(line)


# Distinct reasons a summary names; the rest are counted ("polygon show RUN" lists them all).
NAMED_REASONS = 3


def not_exercised_line(result: RunResult) -> str:
    """How many calls did not test the agent, counted apart from the verdicts, and why."""
    reasons: dict[str, int] = {}
    for call in result.calls:
        if call.not_exercised is not None:
            reason = visible(on_screen(call.not_exercised))  # a model's error may hold ESC
            reasons[reason] = reasons.get(reason, 0) + 1
    named = sorted(reasons.items(), key=lambda item: -item[1])[:NAMED_REASONS]
    parts = [f"{reason} ({count})" for reason, count in named]
    if len(reasons) > NAMED_REASONS:
        parts.append(f"{len(reasons) - NAMED_REASONS} more reasons")
    line = (
        f"Not exercised: {result.not_exercised} of {len(result.calls)} call(s), counted apart "
        f"(the agent was not put to the test): {'; '.join(parts)}"
    )
    return escape(line)


def probes_table(result: RunResult) -> Any:
    """Each probe over the run's calls: yes, no, not applicable and the compliance."""
    from polygon_voice.report.layout import Column, FitTable

    table = FitTable(
        "Probes (they never change a verdict; docs/probes.md)",
        [
            Column("probe", whole=True),
            "kind",
            Column("yes", right=True),
            Column("no", right=True),
            Column("n/a", right=True),
            Column("complied", right=True),
        ],
    )
    for probe in result.probes:
        rate = "—" if probe.compliance is None else f"{probe.compliance:.0%}"
        table.add_row(
            probe.id, probe.polarity, str(probe.yes), str(probe.no), str(probe.not_applicable), rate
        )
    return table


def print_three_layer(columns: dict[str, RunSummary]) -> None:
    """The axes side by side, then each run's fix list and release gate."""
    from polygon_voice.report.terminal import (
        axes_table,
        fix_list_table,
        gate_table,
        not_exercised_table,
    )

    console.print(axes_table(columns))
    for name, summary in columns.items():
        if summary.fix_list():
            console.print(fix_list_table(summary, f"Fix list for {name}: failures by root cause"))
        if summary.skipped:
            console.print(not_exercised_table(summary, f"Not exercised for {name} (counted apart)"))
        verdict = "passes" if summary.gate()["passed"] else "fails"
        console.print(gate_table(summary.gate(), f"Release gate for {name}: {verdict}"))


def verdict_exit(
    result: RunResult,
    *,
    fail_on: FailOn | None = None,
    min_composite: float | None = None,
    gate: bool = False,
) -> int:
    """The exit code for `result`, after printing (to stderr) what set it: the calls at or
    below --fail-on, the mean below --min-composite, the release gate."""
    code = result.exit_code(fail_on=fail_on, min_composite=min_composite, gate=gate)
    if code == ExitCode.INFRASTRUCTURE and not result.infrastructure_failed:
        errors.print(
            f"[bold red]nothing was tested:[/] no call of the run was exercised (exit "
            f'{int(code)}); the reasons are listed under "Not exercised" above'
        )
        return int(code)
    if code == ExitCode.INFRASTRUCTURE:
        errors.print(
            "[bold red]infrastructure failures:[/] a model or endpoint failed during the run "
            f"(exit {int(code)}); the verdicts above do not show the agent's behaviour alone"
        )
        return int(code)
    if fail_on is not None:
        _print_breakers(result.failing_calls(fail_on), f"--fail-on {fail_on}")
    if min_composite is not None and result.below_composite(min_composite):
        mean = result.mean_composite
        shown = "none (no call was scored)" if mean is None else f"{mean:.1f}"
        errors.print(f"[red]mean composite {shown} is below --min-composite {min_composite:g}[/]")
        _print_breakers(
            [c for c in result.calls if c.composite is None or c.composite < min_composite],
            f"below {min_composite:g}",
        )
    if gate and not result.gate_passed:
        errors.print(
            "release gate: FAIL" if result.cases.total else "release gate: no exercised cases"
        )
    return int(code)


def _print_breakers(calls: list[CallResult], why: str) -> None:
    if not calls:
        return
    errors.print(f"[red]{len(calls)} call(s) {escape(why)}:[/]")
    for call in calls:
        composite = "—" if call.composite is None else f"{call.composite:.1f}"
        errors.print(
            f"  {escape(call.id)}  scenario {escape(call.scenario)}  "
            f"verdict {call.verdict or 'not judged'}  composite {composite}",
            markup=True,
        )
