"""Events the engine sends to the agent under test, and actions the agent answers with."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class InterruptPoint(StrEnum):
    """Where in the agent's action stream a scripted barge-in fires."""

    MID_SPEECH = "mid_speech"
    DURING_TOOL_PREP = "during_tool_prep"
    AFTER_TOOL_FIRED = "after_tool_fired"


class ToolErrorKind(StrEnum):
    """Why a tool call failed, as the agent sees it."""

    TIMEOUT = "timeout"
    HTTP_500 = "http_500"
    INVALID_ARGUMENTS = "invalid_arguments"
    NOT_FOUND = "not_found"


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- events: engine -> agent ------------------------------------------------


class CallStarted(_Message):
    """The call is connected; the agent usually greets."""

    kind: Literal["call_started"] = "call_started"


class CallerSaid(_Message):
    """The caller finished an utterance; `text` is what the agent heard (after noise)."""

    kind: Literal["caller_said"] = "caller_said"
    text: str


class BargeIn(_Message):
    """The caller talked over the agent. `text` is None for background noise (no words)."""

    kind: Literal["barge_in"] = "barge_in"
    point: InterruptPoint
    text: str | None = None


class Silence(_Message):
    """The caller said nothing for `seconds` after the agent's turn."""

    kind: Literal["silence"] = "silence"
    seconds: float


class ToolResult(_Message):
    """A sent tool call answered. `late` marks an answer that arrived after its timeout."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str
    result: Any = None
    late: bool = False


class ToolError(_Message):
    """A sent tool call failed."""

    kind: Literal["tool_error"] = "tool_error"
    call_id: str
    error: ToolErrorKind
    message: str = ""


class TimerFired(_Message):
    """A timer the agent set has run out."""

    kind: Literal["timer"] = "timer"
    name: str


Event = Annotated[
    CallStarted | CallerSaid | BargeIn | Silence | ToolResult | ToolError | TimerFired,
    Field(discriminator="kind"),
]


# --- actions: agent -> engine -----------------------------------------------


class Say(_Message):
    """Speak a chunk of text to the caller."""

    kind: Literal["say"] = "say"
    text: str


class PrepareToolCall(_Message):
    """Build a tool call without sending it yet (a barge-in may arrive in between)."""

    kind: Literal["prepare_tool_call"] = "prepare_tool_call"
    call_id: str
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    state_version: int | None = None
    idempotency_key: str | None = None


class SendToolCall(_Message):
    """Send a prepared tool call."""

    kind: Literal["send_tool_call"] = "send_tool_call"
    call_id: str


class CancelToolCall(_Message):
    """Cancel a prepared or sent call; a write that already landed stays landed."""

    kind: Literal["cancel_tool_call"] = "cancel_tool_call"
    call_id: str


class UpdateState(_Message):
    """Report a change of the agent's working state, tagged with its version (AX-8)."""

    kind: Literal["update_state"] = "update_state"
    field: str
    value: Any = None
    version: int


class SetTimer(_Message):
    """Ask for a TimerFired event after `seconds` of virtual time."""

    kind: Literal["set_timer"] = "set_timer"
    name: str
    seconds: float = Field(gt=0)


class EndCall(_Message):
    """Hang up."""

    kind: Literal["end_call"] = "end_call"
    reason: str = ""


class Transfer(_Message):
    """Transfer the caller to a human or another line."""

    kind: Literal["transfer"] = "transfer"
    target: str = "human"


Action = Annotated[
    Say
    | PrepareToolCall
    | SendToolCall
    | CancelToolCall
    | UpdateState
    | SetTimer
    | EndCall
    | Transfer,
    Field(discriminator="kind"),
]
