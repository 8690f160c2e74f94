"""Hand-made conversations for the judge: turns, tool calls and writes, one second apart."""

from __future__ import annotations

from typing import Any

from polygon_voice.model import (
    BackendWrite,
    CallEnd,
    CallStatus,
    ConversationResult,
    EndReason,
    Persona,
    Speaker,
    StatusChange,
    ToolCall,
    Turn,
)
from polygon_voice.model.judgement import ConversationChecks


def turns(*lines: tuple[str, str], start: float = 0.0) -> list[Turn]:
    """("caller"|"agent", text) pairs as back-to-back two-second turns."""
    out = []
    for i, (who, text) in enumerate(lines):
        at = start + 2.5 * i
        out.append(Turn(index=i, speaker=Speaker(who), text=text, heard=text, start=at, end=at + 2))
    return out


def call(
    call_id: str,
    args: dict[str, Any],
    *,
    at: float,
    status: CallStatus = CallStatus.COMPLETED,
    valid: bool = True,
    result: Any = None,
) -> ToolCall:
    """A tool call prepared and sent at `at`, reaching `status` half a second later."""
    history = [
        StatusChange(status=CallStatus.PREPARED, time=at),
        StatusChange(status=CallStatus.SENT, time=at),
        StatusChange(status=status, time=at + 0.5),
    ]
    return ToolCall(
        call_id=call_id,
        tool="update_order",
        args=args,
        status=status,
        history=history,
        args_valid=valid,
        arg_errors=[] if valid else ["quantity: -1 is less than the minimum of 1"],
        result=result,
    )


def write(record: str, field: str, new: Any, *, at: float, call_id: str = "c1") -> BackendWrite:
    """One field written in the `orders` collection."""
    return BackendWrite(
        seq=1, collection="orders", record=record, field=field, old=None, new=new,
        version=2, time=at, call_id=call_id, op="update",
    )  # fmt: skip


def conversation(
    lines: list[Turn],
    *,
    calls: list[ToolCall] | None = None,
    writes: list[BackendWrite] | None = None,
    end: EndReason = EndReason.AGENT_HANGUP,
) -> ConversationResult:
    """A finished conversation from its parts."""
    last = lines[-1].end if lines else 0.0
    return ConversationResult(
        id="c-1", scenario_id="s-1", seed=1, language="en",
        end=CallEnd(reason=end, time=last), turns=lines, tool_calls=calls or [],
        state_updates=[], backend_writes=writes or [], trace=[],
    )  # fmt: skip


PERSONA = Persona(goal="Change order 5590 to 3.", facts={"order_id": "5590", "quantity": 3})


def good_call() -> ConversationResult:
    """A clean call: the caller asks, the agent updates, confirms and says goodbye."""
    lines = turns(
        ("agent", "Hello, how can I help?"),
        ("caller", "Please change order 5590 to 3."),
        ("agent", "One moment, I am updating order 5590."),
        ("agent", "Done: order 5590 now has 3 items."),
        ("caller", "Thanks, bye."),
        ("agent", "Goodbye!"),
    )
    c1 = call("c1", {"order_id": "5590", "quantity": 3}, at=7.0, result={"ok": True})
    return conversation(lines, calls=[c1], writes=[write("5590", "quantity", 3, at=7.5)])


NO_CHECKS = ConversationChecks()
