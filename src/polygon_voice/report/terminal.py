"""Terminal views: run lists, run summaries and a conversation turn by turn.

Everything a transcript or an agent produced is untrusted: it is passed to Rich as
plain `Text`, never as markup, so a caller saying "[bold]" prints those characters, and
its control characters are shown as escapes (`textsafe.visible`: ESC as `\x1b`) before
Rich, which would drop some (BEL, CR) and pass the rest (ESC, OSC) to the terminal raw.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.text import Text

from polygon_voice.model import CaseScore, ConversationResult, ExpectResult, Speaker
from polygon_voice.model.judgement import Judgement
from polygon_voice.model.trace import TraceEntry, Turn
from polygon_voice.noise import caller_wer
from polygon_voice.report.layout import Column, FitTable
from polygon_voice.store import ConversationSummary
from polygon_voice.textsafe import visible

if TYPE_CHECKING:
    # For annotations only: the checks package loads the whole scoring pipeline.
    from polygon_voice.checks import RunSummary

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


@dataclass(frozen=True)
class CallVerdict:
    """A call's verdict and composite as its stored judgement gives them."""

    verdict: str
    composite: float | None


def conversations_table(
    summaries: Iterable[ConversationSummary],
    title: str,
    verdicts: Mapping[str, CallVerdict] | None = None,
) -> FitTable:
    """One row per conversation of a run; with `verdicts` (by conversation id, from
    `report.stored.call_verdicts`), each call's verdict and composite ("—": not judged)."""
    columns: list[Column | str] = [
        Column("conversation", whole=True),
        "end",
        Column("turns", right=True),
        Column("tool calls", right=True),
    ]
    if verdicts is not None:
        columns += ["verdict", Column("composite", right=True)]
    table = FitTable(title, [*columns, "message"])
    for summary in summaries:
        cells: list[Text | str] = [
            summary.id,
            reason_text(summary.end_reason),
            str(summary.turn_count),
            str(summary.tool_call_count),
        ]
        if verdicts is not None:
            cells += _verdict_cells(verdicts.get(summary.id))
        table.add_row(*cells, summary.end_message)
    return table


def _verdict_cells(judged: CallVerdict | None) -> list[Text | str]:
    if judged is None:
        return [Text("—", style="dim"), "—"]
    composite = "—" if judged.composite is None else f"{judged.composite:.1f}"
    return [Text(judged.verdict, style=_VERDICT_STYLE.get(judged.verdict, "")), composite]


def end_reason_table(counts: dict[str, int]) -> FitTable:
    """How the conversations ended."""
    table = FitTable("How the calls ended", ["end", Column("calls", right=True)])
    for reason, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        table.add_row(reason_text(reason), str(count))
    return table


_VERDICT_STYLE = {"pass": "green", "warn": "yellow", "fail": "red", "unscored": "dim"}


def verdict_table(counts: dict[str, int], mean_composite: float | None) -> FitTable:
    """The judge's verdicts of the calls run now, and their mean composite."""
    table = FitTable("Verdicts", ["verdict", Column("calls", right=True)])
    for verdict in ("pass", "warn", "fail", "unscored"):
        if counts.get(verdict):
            table.add_row(Text(verdict, style=_VERDICT_STYLE[verdict]), str(counts[verdict]))
    mean = "n/a" if mean_composite is None else f"{mean_composite:.1f}"
    table.add_row(Text("mean composite", style="bold"), mean)
    return table


def conversation_view(result: ConversationResult) -> RenderableType:
    """A conversation as a timeline: turns, tool calls, state updates and backend writes.

    Rows are in the order things happened: by virtual time, and at one instant in the
    order of the call's trace (its sequence numbers), never regrouped by kind.
    """
    order = _TraceOrder(result.trace)
    rows: list[tuple[tuple[float, float], RenderableType]] = []
    for turn in result.turns:
        rows.append((order.of_turn(turn), _turn_line(turn.speaker, turn.text, turn.heard, turn)))
    for update in result.state_updates:
        line = Text(f"  state  {update.field} = {update.value!r}  (version {update.version})")
        at = order.of_entry(update.time, "update_state", version=update.version)
        rows.append((at, _styled(line, "magenta")))
    for call in result.tool_calls:
        for change in call.history:
            kind = _STATUS_KIND.get(change.status.value, "")
            at = order.of_entry(change.time, kind, call_id=call.call_id)
            rows.append((at, _call_line(call.model_dump(), change.status.value)))
    rows.extend(
        ((_instant(entry.time), float(entry.seq)), _sanitised_line(entry.source, entry.data))
        for entry in result.trace
        if entry.kind == "text_sanitised"
    )
    rows.extend(
        ((_instant(entry.time), float(entry.seq)), _replay_line(entry.kind, entry.data))
        for entry in result.trace
        if entry.kind in _REPLAY_MARKS
    )
    for write in result.backend_writes:
        line = Text(
            f"  write  {write.collection}/{write.record}.{write.field}: "
            f"{write.old!r} -> {write.new!r}  (v{write.version}, key {write.idempotency_key}, "
            f"call {write.call_id})"
        )
        rows.append((order.of_write(write.time, write.call_id), _styled(line, "blue")))
    rows.sort(key=lambda row: row[0])  # stable: rows placed alike keep the order they were added
    lines: list[RenderableType] = [
        Text.assemble(
            ("Conversation ", "bold"), Text(result.id), f"  (scenario {result.scenario_id})"
        )
    ]
    lines.extend(Text.assemble(f"{at[0]:7.2f}s ", row) for at, row in rows)  # type: ignore[arg-type]
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


# The trace entry each step of a tool call's lifecycle is recorded as.
_STATUS_KIND = {
    "prepared": "prepare_tool_call",
    "sent": "send_tool_call",
    "completed": "tool_result",
    "failed": "tool_error",
    "timed_out": "tool_error",
    "cancelled": "cancel_tool_call",
}


def _instant(time: float) -> float:
    # The trace stores times rounded to the microsecond, tool histories do not: one instant.
    return round(time, 6)


class _TraceOrder:
    """Where a row of the timeline falls in the call's trace: (instant, position).

    The position is the sequence number of the trace entry that recorded it; a row with no
    entry of its own (a caller's turn starts before its words are recorded, a write can land
    with no event) falls just after the last entry at or before its instant.
    """

    def __init__(self, trace: list[TraceEntry]) -> None:
        self.trace = trace
        self.times = [_instant(entry.time) for entry in trace]
        self.used: set[int] = set()
        # (instant, kind) -> positions: a long call is placed in linear time.
        self.at: dict[tuple[float, str], list[int]] = {}
        for position, entry in enumerate(trace):
            self.at.setdefault((self.times[position], entry.kind), []).append(position)

    def after(self, time: float) -> tuple[float, float]:
        instant = _instant(time)
        last = bisect_right(self.times, instant) - 1
        return instant, (self.trace[last].seq if last >= 0 else -1) + 0.5

    def of_entry(self, time: float, kind: str, **data: Any) -> tuple[float, float]:
        instant = _instant(time)
        for position in self.at.get((instant, kind), []):
            entry = self.trace[position]
            if position not in self.used and all(entry.data.get(k) == v for k, v in data.items()):
                self.used.add(position)
                return instant, float(entry.seq)
        return self.after(time)

    def of_turn(self, turn: Turn) -> tuple[float, float]:
        if turn.speaker is Speaker.AGENT:
            return self.of_entry(turn.start, "say")
        return self.after(turn.start)

    def of_write(self, time: float, call_id: str) -> tuple[float, float]:
        # A write lands with its call's answer: just after it when both are at one instant.
        instant = _instant(time)
        answers = [
            *self.at.get((instant, "tool_result"), []),
            *self.at.get((instant, "tool_error"), []),
        ]
        for position in answers:
            if self.trace[position].data.get("call_id") == call_id:
                return instant, self.trace[position].seq + 0.5
        return self.after(time)


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


# The marks a replay leaves in its calls' traces (replay/caller.py), shown where they fell:
# after the new agent's answer, before the recorded caller line that no longer fits it.
_REPLAY_MARKS = ("replay_mismatch", "replay_handover")


def _replay_line(kind: str, data: dict[str, Any]) -> Text:
    """A replay mark as one timeline line; every value is shown, never interpreted (the
    quoted turns are a real call's text)."""

    def field(name: str) -> str:
        return visible(str(data.get(name, "?")))

    if kind == "replay_handover":
        return Text(
            f"  replay handed over to the LLM caller at recorded caller line {field('line')} "
            f"({field('remaining')} line(s) not played)",
            style="red",
        )
    line = Text(
        f"  replay mismatch at turn {field('turn')}, before recorded caller line "
        f"{field('line')} (rule {field('rule')}, then {field('action')}): {field('reason')}",
        style="red",
    )
    for label, name in (("recorded agent", "recorded"), ("new agent", "new"),
                        ("next caller line", "next_line")):  # fmt: skip
        if data.get(name) is not None:
            line.append(f"\n           {label}: {field(name)}", style="red")
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
        line.append(f"  args {call['args']!r}  ({_state_and_key(call)})", style="yellow")
        if not call["args_valid"]:
            line.append(f"  INVALID: {'; '.join(call['arg_errors'])}", style="red")
    elif status in ("completed",):
        line.append(f"  -> {call['result']!r}", style="yellow")
    elif status in ("failed", "timed_out"):
        line.append(f"  -> {call['error']} {call['error_message']}", style="red")
    if call["fault"] and status == "sent":
        line.append(f"  (fault injected: {call['fault']})", style="red")
    return line


def _state_and_key(call: dict[str, Any]) -> str:
    """`state v3, key k1`; a dash for what the call has not got (an imported call has neither:
    a real agent's backend does not report them)."""
    version, key = call.get("state_version"), call.get("idempotency_key")
    shown_version = f"v{version}" if version is not None else "—"
    return f"state {shown_version}, key {key if key is not None else '—'}"


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


def axes_table(columns: dict[str, RunSummary]) -> FitTable:
    """The six axes and end-to-end integrity, one column per run (never averaged)."""
    headers = [Column(name, right=True) for name in columns]
    table = FitTable("Three-layer outcome (passed / total)", ["axis", *headers])
    for axis, label in AXIS_LABELS.items():
        table.add_row(label, *(_fraction(s.passed[axis], s.total) for s in columns.values()))
    table.add_row(
        Text("end-to-end task integrity", style="bold"),
        *(_fraction(s.e2e, s.total, bold=True) for s in columns.values()),
    )
    return table


def fix_list_table(summary: RunSummary, title: str) -> FitTable:
    """Failed cases grouped by root cause, largest first, with the layer to repair."""
    columns = (Column("cases", right=True), "root cause", "layer to repair", "which")
    table = FitTable(title, columns)
    for row in summary.fix_list():
        layer = row["layer"] or "—"
        table.add_row(str(row["count"]), row["cause"], layer, Text(", ".join(row["cases"])))
    return table


def gate_table(gate: dict[str, Any], title: str) -> FitTable:
    """The release gate: each check, passed or not, with the cases that broke it."""
    table = FitTable(title, ("check", "", "broken by"))
    for check in gate["checks"]:
        mark = Text("pass", style="green") if check["passed"] else Text("FAIL", style="bold red")
        table.add_row(f"{check['id']} {check['name']}", mark, Text(", ".join(check["cases"])))
    return table


def not_exercised_table(summary: RunSummary, title: str) -> FitTable:
    """Cases that did not play as written or could not be won, each with the reason."""
    table = FitTable(title, (Column("case", whole=True), "why it is not counted"))
    for row in summary.skipped:
        table.add_row(row["case"], Text(row["reason"]))
    return table


def _fraction(passed: int, total: int, bold: bool = False) -> Text:
    style = ("green" if passed == total else "red") + (" bold" if bold else "")
    return Text(f"{passed} / {total}", style=style)


def case_view(score: CaseScore) -> FitTable:
    """A three-layer case's six axes with the reason for each, and its root cause."""
    verdict = "end-to-end task integrity" if score.e2e else "not end-to-end"
    if score.not_exercised is not None:
        verdict = "not exercised (the suite's problem, counted apart)"
    table = FitTable(f"Three-layer outcome of {score.case_id}: {verdict}", ("axis", "", "why"))
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


_STATUS_STYLE = {"scored": "", "missing": "red", "unscored": "dim", "not_applicable": "dim"}


def judgement_view(judgement: Judgement, label: str = "") -> FitTable:
    """A judgement: each criterion's score, status and evidence, then composite and verdict."""
    composite = "n/a" if judgement.composite is None else f"{judgement.composite:.2f}"
    partial = ", partial" if judgement.partial else ""
    title = (
        f"Judgement ({judgement.judge} judge, rubric {judgement.rubric_version}, "
        f"k={judgement.repeats}{', ' + label if label else ''}): {judgement.verdict}, "
        f"composite {composite}{partial}"
    )
    table = FitTable(title, ("criterion", Column("score", right=True), "status", "evidence", "why"))
    for cid, criterion in judgement.criteria.items():
        score = "—" if criterion.score is None else f"{criterion.score:g}"
        if criterion.status == "not_applicable":
            score = "n/a"  # not a missing score: the criterion asks what the record cannot tell
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
    for cid, why in judgement.not_applicable.items():
        table.add_row("not applicable", "", "", Text(f"{cid}: {why}", style="dim"))
    for error in judgement.errors:
        table.add_row("judge error", "", "", Text(error, style="red"))
    return table


def expect_view(result: ExpectResult, scenario_id: str) -> FitTable:
    """The scenario's expected outcome: each check with whether it held and why."""
    if result.not_exercised is not None:
        verdict = "not exercised"
    else:
        verdict = "met" if result.met else "NOT met"
    source = "expect:" if result.source == "expect" else "the case's expected axes"
    title = f"Expected outcome of {scenario_id} ({source}): {verdict}"
    table = FitTable(title, ("check", "", "why"))
    if result.not_exercised is not None:
        table.add_row("not exercised", Text("—"), Text(result.not_exercised))
    for check in result.checks:
        mark = Text("✓", style="green") if check.passed else Text("✗", style="bold red")
        table.add_row(check.name, mark, Text(check.why))
    return table
