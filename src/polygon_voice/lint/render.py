"""The prompt line by line, each finding marked under its line, then the five scores.

The prompt's lines are printed as they are, never re-wrapped to the terminal's width: a
caret line under a wrapped line would point at the wrong characters. Terminal controls in
the prompt are shown as escapes (\\x1b), and the carets count them as shown. Everything from the
prompt (and from a judge model) is untrusted: it goes into Rich `Text` objects, never into
markup, so "[red]" in a prompt prints as written.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from polygon_voice.lint.model import AXES, TIER_NAMES, Axis, Finding, LintReport
from polygon_voice.textsafe import visible

STYLES: dict[Axis, str] = {
    "overload": "bold magenta",
    "diluted_attention": "bold blue",
    "contradiction": "bold red",
    "ambiguity": "underline yellow",
    "redundancy": "bold cyan",
}


def _display(line: str) -> str:
    """The line as shown: terminal controls as escapes (ESC as \\x1b, never raw), a tab as
    one space, so that each character's column can be counted."""
    return visible(line.replace("\t", " "))


def _column(line: str, index: int) -> int:
    """Where character `index` of `line` is shown (escapes take several columns)."""
    return len(_display(line[:index]))


def _unwrapped(text: str = "", style: str = "") -> Text:
    return Text(text, style=style, no_wrap=True, overflow="ignore", end="\n")


GUTTER = 5  # digits of the line numbers


def _marks(line: str, finding: Finding) -> Text:
    """The row under a line: carets under the finding's span (to the line's end when the span
    runs on), then its place, axis, tier, rule and message."""
    start = min(len(line), finding.column - 1)
    end = min(len(line), start + (finding.end - finding.start))
    left, right = _column(line, start), _column(line, end)
    row = _unwrapped(" " * GUTTER + " | ", style="dim")
    row.append(" " * left + "^" * max(1, right - left), style=STYLES[finding.axis])
    if finding.end - finding.start > end - start:
        row.append("…", style=STYLES[finding.axis])
    row.append(f" {finding.line}:{finding.column} ", style="dim")
    row.append(finding.axis, style=STYLES[finding.axis])
    row.append(f" (tier {finding.tier}, {finding.kind}) ")
    row.append(finding.message)
    return row


def render(text: str, report: LintReport) -> RenderableType:
    """What `polygon lint` prints without --json: the prompt line by line, as written, each
    finding marked under the line it starts on; then the scores and the tiers."""
    lines = text.splitlines() or [""]
    findings = sorted(
        (f for axis in AXES for f in report.axes[axis].findings), key=lambda f: (f.start, f.axis)
    )
    at_line: dict[int, list[Finding]] = {}
    for finding in findings:
        at_line.setdefault(finding.line, []).append(finding)
    parts: list[RenderableType] = []
    for number, line in enumerate(lines, start=1):
        shown = _unwrapped(f"{number:>{GUTTER}} | ", style="dim")
        marked = Text(_display(line))
        for finding in at_line.get(number, []):
            start = min(len(line), finding.column - 1)
            end = min(len(line), start + (finding.end - finding.start))
            marked.stylize(STYLES[finding.axis], _column(line, start), _column(line, end))
        shown.append_text(marked)
        parts.append(shown)
        parts.extend(_marks(line, f) for f in at_line.get(number, []))
    parts.append(Text(""))
    if not findings:
        parts.extend([_unwrapped("no findings"), Text("")])
    scores = Table(title="Scores (0 good .. 1 bad)", title_justify="left")
    scores.add_column("axis")
    scores.add_column("score", justify="right")
    scores.add_column("findings", justify="right")
    for axis in AXES:
        result = report.axes[axis]
        scores.add_row(
            Text(axis, style=STYLES[axis]), f"{result.score:.2f}", str(len(result.findings))
        )
    parts.append(scores)
    tiers = Text("tiers run: " + ", ".join(f"{t} ({TIER_NAMES[t]})" for t in report.tiers_run))
    for skip in report.tiers_skipped:
        tiers.append(f"\ntier {skip.tier} ({skip.name}) skipped: {skip.reason}")
    if report.below_confidence:
        tiers.append(
            f"\n{report.below_confidence} finding(s) under confidence "
            f"{report.min_confidence:g} not shown (--min-confidence 0 shows them)"
        )
    for note in report.notes:
        tiers.append(f"\nnote: {note}")
    parts.append(tiers)
    return Group(*parts)
