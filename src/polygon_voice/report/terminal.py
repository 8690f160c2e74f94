"""Terminal views: run lists, run summaries and a conversation turn by turn.

Everything a transcript or an agent produced is untrusted: it is passed to Rich as
plain `Text`, never as markup, so a caller saying "[bold]" prints those characters, and
its control characters are shown as escapes (`textsafe.visible`: ESC as `\x1b`) before
Rich, which would drop some (BEL, CR) and pass the rest (ESC, OSC) to the terminal raw.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from polygon_voice.checks import RunSummary
from polygon_voice.model import CaseScore, ConversationResult, ExpectResult, Speaker
from polygon_voice.model.judgement import Judgement
from polygon_voice.noise import caller_wer
from polygon_voice.store import ConversationSummary, RunRecord
from polygon_voice.textsafe import visible

_REASON_STYLE = {
    "agent_hangup": "green",
    "caller_hangup": "green",
    "transferred": "cyan",
    "loop_detected": "yellow",
    "turn_limit": "yellow",
    "error": "red",
}


def reason_text(reason: str) -> Text:
    """An end reason, coloured by how worrying it is."""
    return Text(reason, style=_REASON_STYLE.get(reason, ""))


def runs_table(runs: Iterable[RunRecord]) -> Table:
    """Stored runs, newest first."""
    table = Table(title="Runs", title_justify="left")
    for column in ("run", "suite", "agent", "seed", "status", "calls", "started (UTC)"):
        table.add_column(column)
    for run in runs:
        table.add_row(
            Text(run.id),
            Text(run.suite),
            Text(run.agent),
            str(run.seed),
            Text(run.status, style="green" if run.status == "finished" else "yellow"),
            str(run.conversation_count),
            run.started_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def conversations_table(summaries: Iterable[ConversationSummary], title: str) -> Table:
    """One row per conversation of a run."""
    table = Table(title=title, title_justify="left")
    for column in ("conversation", "end", "turns", "tool calls", "message"):
        table.add_column(column)
    for summary in summaries:
        table.add_row(
            Text(summary.id),
            reason_text(summary.end_reason),
            str(summary.turn_count),
            str(summary.tool_call_count),
            Text(summary.end_message),
        )
    return table


def end_reason_table(counts: dict[str, int]) -> Table:
    """How the conversations ended."""
    table = Table(title="How the calls ended", title_justify="left")
    table.add_column("end")
    table.add_column("calls", justify="right")
    for reason, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        table.add_row(reason_text(reason), str(count))
    return table


_VERDICT_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "unscored": "dim"}


def verdict_table(counts: dict[str, int], mean_composite: float | None) -> Table:
    """The judge's verdicts of the calls run now, and their mean composite."""
    table = Table(title="Verdicts", title_justify="left")
    table.add_column("verdict")
    table.add_column("calls", justify="right")
    for verdict in ("pass", "warn", "fail", "unscored"):
        if counts.get(verdict):
            table.add_row(Text(verdict, style=_VERDICT_STYLE[verdict]), str(counts[verdict]))
    mean = "n/a" if mean_composite is None else f"{mean_composite:.1f}"
    table.add_row(Text("mean composite", style="bold"), mean)
    return table


def conversation_view(result: ConversationResult) -> RenderableType:
    """A conversation as a timeline: turns, tool calls, state updates and backend writes."""
    rows: list[tuple[float, int, RenderableType]] = []
    for turn in result.turns:
        rows.append((turn.start, 3, _turn_line(turn.speaker, turn.text, turn.heard, turn)))
    for update in result.state_updates:
        line = Text(f"  state  {update.field} = {update.value!r}  (version {update.version})")
        rows.append((update.time, 0, _styled(line, "magenta")))
    for call in result.tool_calls:
        for change in call.history:
            rows.append((change.time, 1, _call_line(call.model_dump(), change.status.value)))
    rows.extend(
        (entry.time, 0, _sanitised_line(entry.source, entry.data))
        for entry in result.trace
        if entry.kind == "text_sanitised"
    )
    for write in result.backend_writes:
        line = Text(
            f"  write  {write.collection}/{write.record}.{write.field}: "
            f"{write.old!r} -> {write.new!r}  (v{write.version}, key {write.idempotency_key}, "
            f"call {write.call_id})"
        )
        rows.append((write.time, 2, _styled(line, "blue")))
    # At one instant, causes come first: state, then tool steps and writes, then speech.
    rows.sort(key=lambda row: (row[0], row[1]))
    lines: list[RenderableType] = [
        Text.assemble(
            ("Conversation ", "bold"), Text(result.id), f"  (scenario {result.scenario_id})"
        )
    ]
    lines.extend(Text.assemble(f"{time:7.2f}s ", row) for time, _, row in rows)  # type: ignore[arg-type]
    end = Text.assemble(
        f"{result.end.time:7.2f}s ", "  end  ", reason_text(result.end.reason.value)
    )
    if result.end.message:
        end.append(" — ")
        end.append(visible(result.end.message))
    lines.append(end)
    wer = caller_wer(result)
    if wer is not None:
        lines.append(Text(f"word error rate, caller said vs agent heard: {wer:.3f}", style="dim"))
    return Group(*lines)


def _turn_line(speaker: Speaker, text: str, heard: str, turn: Any) -> Text:
    who = "caller" if speaker is Speaker.CALLER else "agent "
    line = Text(f"  {who} ", style="bold cyan" if speaker is Speaker.CALLER else "bold green")
    line.append(visible(text))
    if heard != text:
        label = "agent heard" if speaker is Speaker.CALLER else "caller heard"
        line.append(f"\n            {label}: ", style="dim")
        line.append(visible(heard) or "(nothing)", style="dim")
    flags = [
        name for name, on in (("interrupted", turn.interrupted), ("barge-in", turn.barge_in)) if on
    ]
    if flags:
        line.append(f"  [{', '.join(flags)}]", style="yellow")
    return line


def _sanitised_line(source: str, data: dict[str, Any]) -> Text:
    where = data.get("where", "")
    return Text(
        f"  note   {data.get('replaced', '?')} invalid character(s) from the {source} "
        f"({where}) stored as U+FFFD",
        style="red",
    )


def _call_line(call: dict[str, Any], status: str) -> Text:
    line = Text(f"  tool   {call['call_id']} {call['tool']} {status}", style="yellow")
    if status == "prepared":
        line.append(f"  args {call['args']!r}  (state v{call['state_version']}", style="yellow")
        line.append(f", key {call['idempotency_key']})", style="yellow")
        if not call["args_valid"]:
            line.append(f"  INVALID: {'; '.join(call['arg_errors'])}", style="red")
    elif status in ("completed",):
        line.append(f"  -> {call['result']!r}", style="yellow")
    elif status in ("failed", "timed_out"):
        line.append(f"  -> {call['error']} {call['error_message']}", style="red")
    if call["fault"] and status == "sent":
        line.append(f"  (fault injected: {call['fault']})", style="red")
    return line


def _styled(text: Text, style: str) -> Text:
    text.stylize(style)
    return text


AXIS_LABELS = {
    "captured": "event captured",
    "active_state_correct": "active state correct",
    "tool_args_correct": "tool arguments correct",
    "stale_write_prevented": "stale write prevented",
    "backend_correct": "backend correct",
    "confirmation_matches_backend": "confirmation matched backend",
}


def axes_table(columns: dict[str, RunSummary]) -> Table:
    """The six axes and end-to-end integrity, one column per run (never averaged)."""
    table = Table(title="Three-layer outcome (passed / total)", title_justify="left")
    table.add_column("axis")
    for name in columns:
        table.add_column(Text(name), justify="right")
    for axis, label in AXIS_LABELS.items():
        table.add_row(label, *(_fraction(s.passed[axis], s.total) for s in columns.values()))
    table.add_row(
        Text("end-to-end task integrity", style="bold"),
        *(_fraction(s.e2e, s.total, bold=True) for s in columns.values()),
    )
    return table


def fix_list_table(summary: RunSummary, title: str) -> Table:
    """Failed cases grouped by root cause, largest first, with the layer to repair."""
    table = Table(title=title, title_justify="left")
    for column in ("cases", "root cause", "layer to repair", "which"):
        table.add_column(column)
    for row in summary.fix_list():
        layer = row["layer"] or "—"
        table.add_row(str(row["count"]), row["cause"], layer, Text(", ".join(row["cases"])))
    return table


def gate_table(gate: dict[str, Any], title: str) -> Table:
    """The release gate: each check, passed or not, with the cases that broke it."""
    table = Table(title=title, title_justify="left")
    for column in ("check", "", "broken by"):
        table.add_column(column)
    for check in gate["checks"]:
        mark = Text("pass", style="green") if check["passed"] else Text("FAIL", style="bold red")
        table.add_row(f"{check['id']} {check['name']}", mark, Text(", ".join(check["cases"])))
    return table


def not_exercised_table(summary: RunSummary, title: str) -> Table:
    """Cases that did not play as written or could not be won, each with the reason."""
    table = Table(title=title, title_justify="left")
    for column in ("case", "why it is not counted"):
        table.add_column(column)
    for row in summary.skipped:
        table.add_row(row["case"], Text(row["reason"]))
    return table


def _fraction(passed: int, total: int, bold: bool = False) -> Text:
    style = ("green" if passed == total else "red") + (" bold" if bold else "")
    return Text(f"{passed} / {total}", style=style)


def case_view(score: CaseScore) -> Table:
    """A three-layer case's six axes with the reason for each, and its root cause."""
    verdict = "end-to-end task integrity" if score.e2e else "not end-to-end"
    if score.not_exercised is not None:
        verdict = "not exercised (the suite's problem, counted apart)"
    table = Table(title=f"Three-layer outcome of {score.case_id}: {verdict}", title_justify="left")
    for column in ("axis", "", "why"):
        table.add_column(column)
    for axis, label in AXIS_LABELS.items():
        result = score.axes[axis]
        mark = Text("✓", style="green") if result.passed else Text("✗", style="bold red")
        table.add_row(label, mark, Text(result.why))
    cause = score.root_cause
    if cause is not None:
        layer = cause.layer.value if cause.layer else "—"
        table.add_row("root cause", Text(layer), Text(f"{cause.cause}: {cause.evidence}"))
    if score.gate_breaks:
        table.add_row("release gate", "", Text("breaks " + ", ".join(score.gate_breaks)))
    if score.not_exercised is not None:
        table.add_row("not exercised", "", Text(score.not_exercised))
    return table


_STATUS_STYLE = {"scored": "", "missing": "red", "unscored": "dim"}


def judgement_view(judgement: Judgement, label: str = "") -> Table:
    """A judgement: each criterion's score, status and evidence, then composite and verdict."""
    composite = "n/a" if judgement.composite is None else f"{judgement.composite:.2f}"
    partial = ", partial" if judgement.partial else ""
    title = (
        f"Judgement ({judgement.judge} judge, rubric {judgement.rubric_version}, "
        f"k={judgement.repeats}{', ' + label if label else ''}): {judgement.verdict}, "
        f"composite {composite}{partial}"
    )
    table = Table(title=title, title_justify="left")
    for column in ("criterion", "score", "status", "evidence", "why"):
        table.add_column(column)
    for cid, criterion in judgement.criteria.items():
        score = "—" if criterion.score is None else f"{criterion.score:g}"
        evidence = Text(criterion.evidence)
        if criterion.evidence_found is False:  # a quote the transcript does not contain
            evidence.append("  (not in the transcript)", style="bold red")
        table.add_row(
            cid,
            score,
            Text(criterion.status, style=_STATUS_STYLE.get(criterion.status, "")),
            evidence,
            Text(criterion.reason),
        )
    verdict = Text(judgement.verdict, style=_VERDICT_STYLE.get(judgement.verdict, ""))
    table.add_row(
        Text("verdict", style="bold"), composite, verdict, Text("; ".join(judgement.reasons))
    )
    if judgement.gates_failed:
        table.add_row("gates failed", "", "", Text(", ".join(judgement.gates_failed), style="red"))
    if judgement.unscored:
        table.add_row("unscored", "", "", Text(", ".join(judgement.unscored), style="dim"))
    for error in judgement.errors:
        table.add_row("judge error", "", "", Text(error, style="red"))
    return table


def expect_view(result: ExpectResult, scenario_id: str) -> Table:
    """The scenario's expected outcome: each check with whether it held and why."""
    if result.not_exercised is not None:
        verdict = "not exercised"
    else:
        verdict = "met" if result.met else "NOT met"
    source = "expect:" if result.source == "expect" else "the case's expected axes"
    title = f"Expected outcome of {scenario_id} ({source}): {verdict}"
    table = Table(title=title, title_justify="left")
    for column in ("check", "", "why"):
        table.add_column(column)
    if result.not_exercised is not None:
        table.add_row("not exercised", Text("—"), Text(result.not_exercised))
    for check in result.checks:
        mark = Text("✓", style="green") if check.passed else Text("✗", style="bold red")
        table.add_row(check.name, mark, Text(check.why))
    return table
