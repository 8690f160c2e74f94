"""The prompt with its marked places highlighted, the findings and the five scores.

Everything from the prompt (and from a judge model) is untrusted: it goes into Rich `Text`
objects, never into markup, so "[red]" in a prompt prints as written.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from polygon_voice.lint.model import AXES, TIER_NAMES, Axis, LintReport

STYLES: dict[Axis, str] = {
    "overload": "bold magenta",
    "diluted_attention": "bold blue",
    "contradiction": "bold red",
    "ambiguity": "underline yellow",
    "redundancy": "bold cyan",
}


def render(text: str, report: LintReport) -> RenderableType:
    """What `polygon lint` prints without --json."""
    marked = Text(text)
    findings = [f for axis in AXES for f in report.axes[axis].findings]
    for finding in findings:
        marked.stylize(STYLES[finding.axis], finding.start, finding.end)
    listing = Text()
    for finding in sorted(findings, key=lambda f: (f.start, f.axis)):
        listing.append(f"{finding.line}:{finding.column} ", style="dim")
        listing.append(finding.axis, style=STYLES[finding.axis])
        listing.append(f" (tier {finding.tier}) ")
        listing.append(finding.message)
        listing.append("\n")
    scores = Table(title="Scores (0 good .. 1 bad)", title_justify="left")
    scores.add_column("axis")
    scores.add_column("score", justify="right")
    scores.add_column("findings", justify="right")
    for axis in AXES:
        result = report.axes[axis]
        scores.add_row(
            Text(axis, style=STYLES[axis]), f"{result.score:.2f}", str(len(result.findings))
        )
    tiers = Text("tiers run: " + ", ".join(f"{t} ({TIER_NAMES[t]})" for t in report.tiers_run))
    for skip in report.tiers_skipped:
        tiers.append(f"\ntier {skip.tier} ({skip.name}) skipped: {skip.reason}")
    return Group(marked, Text(""), listing or Text("no findings\n"), scores, tiers)
