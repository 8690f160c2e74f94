"""Terminal views: tables never cut an id, a timeline keeps the order things happened, and
`--json` writes no raw control character."""

from __future__ import annotations

import io
import json

import pytest

from polygon_voice.cli.common import print_json
from polygon_voice.cli.console import PIPED_WIDTH, SafeConsole
from polygon_voice.model import (
    CallEnd,
    CallStatus,
    ConversationResult,
    EndReason,
    Speaker,
    StateUpdate,
    StatusChange,
    ToolCall,
    TraceEntry,
    Turn,
)
from polygon_voice.report.layout import Column, FitTable
from polygon_voice.report.terminal import conversation_view

LONG_ID = "correction-during-tool-prep-with-a-long-name-0042"


def rendered(renderable: object, width: int | None, terminal: bool = True) -> str:
    console = SafeConsole(
        file=io.StringIO(), width=width, force_terminal=terminal, color_system=None
    )
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def calls_table() -> FitTable:
    table = FitTable("Run 0123456789ab: a suite with a.py:Agent", [
        Column("conversation", whole=True), "end", Column("turns", right=True), "verdict",
        "message",
    ])  # fmt: skip
    table.add_row(LONG_ID, "agent_hangup", "12", "pass", "the caller was done [bold]talking")
    table.add_row("short", "error", "3", "fail", "")
    return table


@pytest.mark.parametrize("width", [30, 60, 80, 200])
def test_a_table_keeps_every_id_whole_at_any_width(width: int) -> None:
    out = rendered(calls_table(), width)
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= width
    lines = out.splitlines()
    if width > len(LONG_ID) + 4:
        assert any(LONG_ID in line for line in lines)
    else:  # narrower than the id itself: it continues on the next line, nothing dropped
        assert LONG_ID in "".join(line.rstrip() for line in lines)
    assert "[bold]talking" in out  # a cell is text, never markup


def test_the_table_is_drawn_when_it_fits_and_stacked_when_not() -> None:
    table = calls_table()
    wide = rendered(table, table.narrowest())
    assert "┃ conversation" in wide
    narrow = rendered(table, table.narrowest() - 1)
    assert "┃" not in narrow
    assert f"• {LONG_ID}" in narrow
    assert "end: agent_hangup" in narrow


def test_a_console_that_is_not_a_terminal_is_as_wide_as_its_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    piped = SafeConsole(file=io.StringIO())
    assert not piped.is_terminal
    assert piped.width == PIPED_WIDTH
    piped.print(calls_table())
    out = piped.file.getvalue()  # type: ignore[attr-defined]
    assert f"│ {LONG_ID} │" in out  # the table, unfolded, on one line per row
    assert SafeConsole(file=io.StringIO(), width=70).width == 70  # a width given in code holds
    on_terminal = SafeConsole(file=io.StringIO(), force_terminal=True)
    assert on_terminal.width == 40  # a terminal's COLUMNS is respected


def _call() -> ConversationResult:
    # The tool answer lands at 2.0000004 s; the trace rounds it to 2.0 and records the answer
    # before the agent's reply at the same instant, and the reply before its state update.
    answer_time = 2.0000004
    trace = [
        TraceEntry(seq=0, time=0.0, source="engine", kind="call_started"),
        TraceEntry(seq=1, time=0.0, source="agent", kind="say", data={"text": "Hello."}),
        TraceEntry(seq=2, time=1.0, source="agent", kind="prepare_tool_call",
                   data={"call_id": "c1"}),
        TraceEntry(seq=3, time=1.0, source="agent", kind="send_tool_call", data={"call_id": "c1"}),
        TraceEntry(seq=4, time=2.0, source="tools", kind="tool_result", data={"call_id": "c1"}),
        TraceEntry(seq=5, time=2.0, source="agent", kind="say", data={"text": "Done."}),
        TraceEntry(seq=6, time=2.0, source="agent", kind="update_state",
                   data={"field": "done", "value": True, "version": 1}),
    ]  # fmt: skip
    history = [
        StatusChange(status=CallStatus.PREPARED, time=1.0),
        StatusChange(status=CallStatus.SENT, time=1.0),
        StatusChange(status=CallStatus.COMPLETED, time=answer_time),
    ]
    return ConversationResult(
        id="c", scenario_id="s", seed=0, language="en",
        end=CallEnd(reason=EndReason.AGENT_HANGUP, time=3.0),
        turns=[
            Turn(index=0, speaker=Speaker.AGENT, text="Hello.", heard="Hello.", start=0.0, end=0.5),
            Turn(index=1, speaker=Speaker.AGENT, text="Done.", heard="Done.", start=2.0, end=2.5),
        ],
        tool_calls=[ToolCall(call_id="c1", tool="update", args={}, status=CallStatus.COMPLETED,
                             history=history, result={"ok": True})],
        state_updates=[StateUpdate(field="done", value=True, version=1, time=2.0)],
        backend_writes=[], trace=trace,
    )  # fmt: skip


def test_events_at_one_instant_print_in_the_order_they_happened() -> None:
    out = rendered(conversation_view(_call()), 200)
    order = [
        line.split()[1:3]
        for line in out.splitlines()
        if line.strip() and line.strip()[0].isdigit() and "end" not in line.split()[1]
    ]
    assert order == [
        ["agent", "Hello."],
        ["tool", "c1"],  # prepared
        ["tool", "c1"],  # sent
        ["tool", "c1"],  # completed: the answer came before the reply it caused
        ["agent", "Done."],
        ["state", "done"],  # the agent updated its state after speaking, as recorded
    ]
    assert out.index("completed") < out.index("Done.") < out.index("state  done")


def test_json_output_escapes_what_a_terminal_would_act_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    said = "ok \x1b]52;c;aGk=\x07 \x9b2J \u202egnp.exe ю"
    print_json({"text": said, "n": 1})
    out = capsys.readouterr().out
    assert not any(ch in out for ch in ("\x1b", "\x07", "\x9b", "\u202e"))
    assert "ю" in out  # letters stay letters
    assert json.loads(out) == {"text": said, "n": 1}


@pytest.mark.parametrize("width", [20, 80])
def test_a_table_without_rows_prints_its_title_and_headers(width: int) -> None:
    out = rendered(FitTable("Runs", [Column("run", whole=True), "suite"]), width)
    assert "Runs" in out
    if width == 80:
        assert "┃ run" in out
