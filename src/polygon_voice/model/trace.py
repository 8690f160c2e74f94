"""What a conversation leaves behind: turns, tool calls, state updates, backend writes, trace."""

from __future__ import annotations

import operator
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polygon_voice.model.events import ToolErrorKind
from polygon_voice.model.tools import FaultKind


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Speaker(StrEnum):
    """Who spoke a turn."""

    CALLER = "caller"
    AGENT = "agent"


class Turn(_Record):
    """One stretch of speech. `heard` is what the other side received (noise, interruption)."""

    index: int
    speaker: Speaker
    text: str
    heard: str
    start: float
    end: float
    interrupted: bool = False
    barge_in: bool = False


class CallStatus(StrEnum):
    """The lifecycle of a tool call."""

    PREPARED = "prepared"
    SENT = "sent"
    COMPLETED = "completed"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"


class StatusChange(_Record):
    """A step in a tool call's lifecycle."""

    status: CallStatus
    time: float


class ToolCall(_Record):
    """A tool call from preparation to its outcome."""

    call_id: str
    tool: str
    args: dict[str, Any]
    state_version: int | None = None
    idempotency_key: str | None = None
    status: CallStatus = CallStatus.PREPARED
    history: list[StatusChange] = Field(default_factory=list)
    args_valid: bool = True
    arg_errors: list[str] = Field(default_factory=list)
    fault: FaultKind | None = None
    result: Any = None
    error: ToolErrorKind | None = None
    error_message: str = ""
    late_result_at: float | None = None
    number: int = Field(default=0, description="1-based count of calls to this tool")


class StateUpdate(_Record):
    """A change of the agent's working state with its version tag (AX-8)."""

    field: str
    value: Any = None
    version: int
    time: float


class BackendWrite(_Record):
    """One field written in the stub backend: the ground truth for the state layer."""

    seq: int
    collection: str
    record: str
    field: str
    old: Any = None
    new: Any = None
    version: int
    idempotency_key: str | None = None
    time: float
    call_id: str
    op: Literal["update", "create", "delete"]


class EndReason(StrEnum):
    """How the call ended."""

    AGENT_HANGUP = "agent_hangup"
    CALLER_HANGUP = "caller_hangup"
    TRANSFERRED = "transferred"
    LOOP_DETECTED = "loop_detected"
    TURN_LIMIT = "turn_limit"
    ERROR = "error"


class CallEnd(_Record):
    """The end of the call: why, when, and a message for `error` and `transferred`."""

    reason: EndReason
    time: float
    message: str = ""


class TraceEntry(_Record):
    """An event or action in order, with its virtual time and the agent's stable state version."""

    seq: int
    time: float
    source: Literal["engine", "caller", "agent", "tools"]
    kind: str
    data: dict[str, Any] = Field(default_factory=dict)
    state_version: int | None = None


class ConversationResult(_Record):
    """The full record of one simulated call (stage: conversation)."""

    stage: Literal["conversation"] = "conversation"
    id: str
    scenario_id: str
    seed: int
    language: str
    end: CallEnd
    turns: list[Turn]
    tool_calls: list[ToolCall]
    state_updates: list[StateUpdate]
    backend_writes: list[BackendWrite]
    backend_final: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="final state of every record the call wrote"
    )
    trace: list[TraceEntry]


def _value_read_in_c(*kinds: type[StrEnum]) -> None:
    """Each member's `.value` read by a C property of the same attribute (`_value_`).

    pydantic reads `.value` of every enum member it writes as JSON (a stored call's turns,
    tool calls and their history: dozens a call), and Enum's own `value` is a Python
    property calling a Python function. The value read is the same object."""
    read = property(operator.attrgetter("_value_"), doc="The member's value.")
    for kind in kinds:
        setattr(kind, "value", read)  # noqa: B010 (mypy keeps the enum's own typing)


_value_read_in_c(Speaker, CallStatus, EndReason, ToolErrorKind, FaultKind)
