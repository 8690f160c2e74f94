"""What the LiveKit session does, as the adapter sees it: speech, tool calls and their fate.

The user's function tools that the suite declares are served by Polygon: LiveKit's own
`mock_tools` puts a stand-in of the same signature in the tool's place for one session (the
model still sees the real name, description and schema), and the stand-in waits for Polygon's
answer. Everything the session does is put on one queue, in the order it happened, for the
adapter to turn into actions.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from polygon_voice.model import ToolError, ToolResult


class CallStage(Enum):
    """Where a served call is, on Polygon's side."""

    STARTED = "started"  # LiveKit runs it; not yet given to Polygon
    PREPARED = "prepared"  # PrepareToolCall yielded; the caller cut in before the send
    SENT = "sent"
    ANSWERED = "answered"
    CANCELLED = "cancelled"


@dataclass
class ServedCall:
    """One call of a suite tool made by the LiveKit session, answered by Polygon's stub."""

    call_id: str
    tool: str
    args: dict[str, Any]
    answer: asyncio.Future[ToolResult | ToolError]
    stage: CallStage = CallStage.STARTED
    dropped: bool = False  # LiveKit cancelled it (Polygon is told when it knew of the call)

    @property
    def awaited(self) -> bool:
        """Whether LiveKit still waits for Polygon's answer to this call."""
        return self.stage in (CallStage.STARTED, CallStage.PREPARED, CallStage.SENT)


@dataclass(frozen=True)
class Spoke:
    """The session added an assistant message (its text, whole: text mode has no playout)."""

    text: str
    message: Any = None  # LiveKit's ChatMessage, cut to what was heard if the caller cuts in


@dataclass(frozen=True)
class ToolStarted:
    call: ServedCall


@dataclass(frozen=True)
class ToolCancelled:
    """LiveKit cancelled a served call (a `replace` duplicate, the session closing)."""

    call: ServedCall


@dataclass(frozen=True)
class SessionClosed:
    reason: str


Happening = Spoke | ToolStarted | ToolCancelled | SessionClosed


@dataclass
class Happenings:
    """The queue of what the session did, and a wake-up for whoever waits on it."""

    items: list[Happening] = field(default_factory=list)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def put(self, item: Happening) -> None:
        self.items.append(item)
        self.wake.set()

    def take(self) -> Happening | None:
        return self.items.pop(0) if self.items else None


class ToolBridge:
    """The stand-ins for one session's suite tools, and the calls they made."""

    def __init__(self, happenings: Happenings, tool_result: Callable[[ToolResult], str]) -> None:
        self._happenings = happenings
        self._render = tool_result
        self.calls: dict[str, ServedCall] = {}

    def stand_ins(self, agent_tools: list[Any], served: Mapping[str, object]) -> dict[str, Any]:
        """A stand-in for each of the agent's function tools whose name the suite declares."""
        from livekit.agents import llm

        mocks: dict[str, Any] = {}
        for tool in agent_tools:
            if isinstance(tool, llm.FunctionTool | llm.RawFunctionTool):
                name = tool.info.name
                if name in served:
                    mocks[name] = self._stand_in(name, tool)
        return mocks

    def _stand_in(self, name: str, tool: Any) -> Callable[..., Any]:
        from livekit.agents import RunContext
        from livekit.agents.llm import RawFunctionTool

        signature = inspect.signature(tool)
        raw = isinstance(tool, RawFunctionTool)

        async def serve(*args: Any, **kwargs: Any) -> str:
            bound = signature.bind_partial(*args, **kwargs)
            if raw:  # a raw tool takes the model's arguments as one dict
                values = next((v for v in bound.arguments.values() if isinstance(v, dict)), {})
            else:
                values = {
                    key: value
                    for key, value in bound.arguments.items()
                    if not isinstance(value, RunContext)
                }
            return await self._serve(name, _plain(values))

        # LiveKit passes a stand-in the arguments its signature names: the real tool's.
        serve.__signature__ = signature  # type: ignore[attr-defined]
        return serve

    async def _serve(self, tool: str, args: dict[str, Any]) -> str:
        from livekit.agents.llm import ToolError as LiveKitToolError

        call_id = f"lk-{len(self.calls) + 1}"
        answer: asyncio.Future[ToolResult | ToolError] = asyncio.get_running_loop().create_future()
        call = ServedCall(call_id=call_id, tool=tool, args=args, answer=answer)
        self.calls[call_id] = call
        self._happenings.put(ToolStarted(call))
        try:
            outcome = await answer
        except asyncio.CancelledError:
            if call.awaited:
                call.dropped = True
                self._happenings.put(ToolCancelled(call))
            raise
        if isinstance(outcome, ToolError):
            # What the model is told; the error kind is how Polygon names the fault.
            raise LiveKitToolError(f"{outcome.error.value}: {outcome.message}")
        return self._render(outcome)

    def answer(self, event: ToolResult | ToolError) -> bool:
        """Hand Polygon's answer to the waiting stand-in; False when no call waits for it
        (a late result after a timeout, or a call LiveKit already cancelled)."""
        call = self.calls.get(event.call_id)
        if call is None or not call.awaited or call.answer.done():
            return False
        call.stage = CallStage.ANSWERED
        call.answer.set_result(event)
        return True

    def awaited(self) -> list[ServedCall]:
        """The calls LiveKit still waits on, in the order they were made."""
        return [call for call in self.calls.values() if call.awaited]


def tool_output(result: ToolResult) -> str:
    """A stub's result as the model reads it: JSON text (LiveKit would send `str(dict)`)."""
    return json.dumps(result.result, ensure_ascii=False, default=str)


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """Arguments as JSON data: LiveKit may have parsed them into pydantic models or enums.
    An argument left at None (an optional one the model did not give) is left out."""
    return {
        key: json.loads(json.dumps(value, default=_jsonable))
        for key, value in values.items()
        if value is not None
    }


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, Enum):
        return value.value
    return str(value)
