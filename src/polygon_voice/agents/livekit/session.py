"""One call of a LiveKit `Agent`, driven in an `AgentSession` in text mode.

Polygon's events become what LiveKit's own text input does with a user's line: the first
line of a turn starts a run (`session.run(user_input=…)`, the framework's testing entry), a
line that talks over the agent interrupts it (`session.interrupt()`) and asks for a reply
(`session.generate_reply(user_input=…)`). What the session does comes back through the
bridge: each assistant message is a `Say`, each call of a suite tool a `PrepareToolCall` +
`SendToolCall` (with the call's arguments reported as the working state first), a call
LiveKit cancels a `CancelToolCall`, a session that closes an `EndCall`.

A response ends when the session has nothing left to do until Polygon answers: its run is
over, or every speech has finished generating and waits on a served call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from polygon_voice.agents.base import AgentContext
from polygon_voice.agents.livekit.bridge import (
    CallStage,
    Happening,
    Happenings,
    ServedCall,
    SessionClosed,
    Spoke,
    ToolBridge,
    ToolCancelled,
    ToolStarted,
    tool_output,
)
from polygon_voice.api.errors import InfrastructureError
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    CancelToolCall,
    EndCall,
    Event,
    InterruptPoint,
    PrepareToolCall,
    Say,
    SendToolCall,
    ToolError,
    ToolResult,
    UpdateState,
)

log = logging.getLogger("polygon_voice.agents.livekit")

# Loop turns the session gets, once it looks idle, to finish what needs no I/O (forwarding
# the text of a reply whose tool call already started) before the response ends.
SETTLE_TURNS = 20
# Seconds between looks at a session that is busy, beside the wake-ups it gives.
POLL = 0.05
# Seconds a session may take to close when the run ends.
CLOSE_SECONDS = 10.0


class LiveKitModelError(InfrastructureError):
    """The LiveKit session's model failed (LiveKit's retries spent): not the agent's doing."""


class LiveKitAgent:
    """Polygon's agent protocol over one LiveKit `AgentSession` (one per call)."""

    def __init__(
        self,
        build: Callable[[], Any],
        context: AgentContext,
        default_llm: Callable[[], Any],
    ) -> None:
        self._build = build
        self._context = context
        self._default_llm = default_llm
        self._happenings = Happenings()
        self._bridge = ToolBridge(self._happenings, tool_output)
        self._session: Any = None
        self._run: Any = None
        self._speeches: list[Any] = []
        self._held: list[str] = []  # lines said over a speech that allows no interruption
        self._state: dict[str, Any] = {}
        self._version = 0
        self._closed = False
        self._finished: asyncio.Future[None] | None = None
        self._last_said: Spoke | None = None  # the message of the last Say, while it is the last

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Give the event to the session; yield what the session does until it waits."""
        await self._deliver(event)
        while True:
            found = await self._next_happening()
            if found is None and self._held and self._idle():
                self._start_turn(self._held.pop(0))  # heard now, after the speech ended
                continue
            happening = _Flush() if found is None else found
            try:
                for step in self._steps(happening):
                    if step.call is not None and step.stage is not None:
                        step.call.stage = step.stage
                    # The engine carries an action out before a barge-in can stop this
                    # generator here, so a call's stage is set before its action is yielded.
                    yield step.action
            finally:
                if isinstance(happening, ToolStarted) and happening.call.stage is CallStage.STARTED:
                    self._happenings.items.insert(0, happening)  # cut off before its turn came
            if self._closed or isinstance(happening, _Flush):
                return

    async def aclose(self) -> None:
        """End the session (the factory calls this when the run ends).

        A call can end with a served call still out (the agent hung up or hit its turn
        limit): its stand-in is cancelled first, as LiveKit waits for running tools that are
        not cancellable when it closes, and would wait for that one forever."""
        session, self._session = self._session, None
        if session is None:
            return
        for call in self._bridge.awaited():
            call.answer.cancel()
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await session.aclose()
        except Exception as exc:  # a failing close must not fail the run
            log.warning("closing a LiveKit session failed: %s: %s", type(exc).__name__, exc)

    # --- events in --------------------------------------------------------------

    async def _deliver(self, event: Event) -> None:
        if isinstance(event, CallStarted):
            await self._start_session()
        elif isinstance(event, CallerSaid):
            self._caller_line(event.text)
        elif isinstance(event, BargeIn) and event.text:
            # Background noise (no text) never reaches a text session: no audio to hear.
            if event.point is InterruptPoint.MID_SPEECH:
                self._cut_last_said()
            self._caller_line(event.text)
        elif isinstance(event, ToolResult | ToolError) and not self._bridge.answer(event):
            log.debug("answer to %s not used: LiveKit no longer waits for it", event.call_id)
        # Silence and timers: a text session has no way to hear either.

    async def _start_session(self) -> None:
        from livekit.agents import AgentSession

        agent = self._build()
        model = self._default_llm()  # None: the agent brings its own
        session: Any = AgentSession(llm=model) if model is not None else AgentSession()
        self._session = session
        self._serve_tools(agent)
        session.on("conversation_item_added", self._item_added)
        session.on("speech_created", self._speech_created)
        session.on("close", self._session_closed)
        # capture_run: what the agent does on entering (a greeting) is the first response.
        self._watch(await session.start(agent, capture_run=True, record=False))

    def _serve_tools(self, agent: Any) -> None:
        """Put the stand-ins in place of the agent's suite tools, for this session only."""
        from livekit.agents import mock_tools

        stand_ins = self._bridge.stand_ins(agent.tools, self._context.tools)
        mock_tools(type(agent), stand_ins, session=self._session)

    def _cut_last_said(self) -> None:
        """Keep in LiveKit's history only what the caller heard of the message they talked
        over, marked interrupted, as LiveKit records a reply cut off in a voice call. The cut
        is Polygon's (agents.md, "Barge-ins stop the response"): half the message's words."""
        said, self._last_said = self._last_said, None
        if said is None or said.message is None:
            return
        words = said.text.split()
        said.message.content = [" ".join(words[: len(words) // 2])]
        said.message.interrupted = True

    def _caller_line(self, text: str) -> None:
        if self._session is None:
            return
        if self._idle():
            self._start_turn(text)
            return
        try:
            # As LiveKit's voice pipeline does when the user speaks: stop the speech, then
            # answer the user (the interruption completes in the background).
            self._session.interrupt()
        except RuntimeError:
            # The speech allows no interruption: the line is heard once it is over.
            log.info("caller's line held until the agent's speech ends: %r", text[:80])
            self._held.append(text)
            return
        self._session.generate_reply(user_input=text)

    def _start_turn(self, text: str) -> None:
        self._watch(self._session.run(user_input=text))

    def _watch(self, run: Any) -> None:
        self._run = run
        finished = asyncio.ensure_future(_finished(run))
        finished.add_done_callback(lambda _: self._happenings.wake.set())
        self._finished = finished

    # --- the session's doings out -------------------------------------------------

    def _item_added(self, event: Any) -> None:
        item = event.item
        kind = getattr(item, "type", None)
        if kind == "agent_handoff" and self._session is not None:
            # Mocks are looked up when a tool runs, so the agent handed to is served from its
            # first step on.
            self._serve_tools(self._session.current_agent)
        if kind == "message" and item.role == "assistant":
            text = item.text_content
            if text:
                self._happenings.put(Spoke(text, item))

    def _speech_created(self, event: Any) -> None:
        self._speeches = [s for s in self._speeches if not s.done()]
        self._speeches.append(event.speech_handle)
        self._happenings.wake.set()

    def _session_closed(self, event: Any) -> None:
        reason = getattr(event, "reason", None)
        self._happenings.put(SessionClosed(str(getattr(reason, "value", reason) or "closed")))

    async def _next_happening(self) -> Happening | None:
        """The next thing the session did, or None once it waits for Polygon (or is done)."""
        while True:
            item = self._happenings.take()
            if item is not None:
                return item
            self._raise_run_failure()
            if self._quiet():
                for _ in range(SETTLE_TURNS):
                    await asyncio.sleep(0)
                if not self._happenings.items and self._quiet():
                    return None
                continue
            self._happenings.wake.clear()
            await self._changed()

    async def _changed(self) -> None:
        """Until something happens, a run ends, or a speech finishes generating; polled too,
        as a speech that starts generating completes no future."""
        woken: asyncio.Future[Any] = asyncio.ensure_future(self._happenings.wake.wait())
        steps = [g for g in (_last_generation(s) for s in self._speeches) if g is not None]
        try:
            await asyncio.wait([woken, *steps], timeout=POLL, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()

    def _quiet(self) -> bool:
        """Whether the session can do nothing more until Polygon answers one of its calls."""
        if self._closed or self._idle():
            return True
        return bool(self._bridge.awaited()) and not any(_generating(s) for s in self._speeches)

    def _idle(self) -> bool:
        return self._run is None or self._run.done()

    def _raise_run_failure(self) -> None:
        """A run that failed fails the response: the model's failure (LiveKit's retries spent)
        as infrastructure, anything else (the agent's own code) as it is."""
        from livekit.agents import APIError

        finished, self._finished = self._finished, None
        if finished is None or not finished.done() or finished.exception() is None:
            self._finished = finished
            return
        error = finished.exception()
        if isinstance(error, APIError):
            raise LiveKitModelError(f"{type(error).__name__}: {error}") from error
        raise error  # type: ignore[misc]

    def _steps(self, happening: Happening | _Flush) -> list[_Step]:
        if isinstance(happening, Spoke):
            self._last_said = happening
            return [_Step(Say(text=happening.text))]
        if isinstance(happening, ToolStarted):
            return self._call_steps(happening.call)
        if isinstance(happening, ToolCancelled):
            return self._cancel_steps(happening.call)
        if isinstance(happening, _Flush):
            return self._send_unsent()
        self._closed = True
        return [_Step(EndCall(reason=happening.reason))]

    def _call_steps(self, call: ServedCall) -> list[_Step]:
        """State updates, then the call prepared and sent (a barge-in may stop it between)."""
        steps = self._send_unsent()
        if call.dropped:  # cancelled by LiveKit before Polygon knew of it
            return steps
        changed = {k: v for k, v in call.args.items() if self._state.get(k, _UNSET) != v}
        if changed:
            # The model's arguments are what it understood: its working state, versioned.
            self._version += 1
            self._state.update(changed)
            steps += [
                _Step(UpdateState(field=name, value=value, version=self._version))
                for name, value in changed.items()
            ]
        prepare = PrepareToolCall(
            call_id=call.call_id,
            tool=call.tool,
            args=call.args,
            state_version=self._version or None,
        )
        steps.append(_Step(prepare, call, CallStage.PREPARED))
        steps.append(_Step(SendToolCall(call_id=call.call_id), call, CallStage.SENT))
        return steps

    def _cancel_steps(self, call: ServedCall) -> list[_Step]:
        known = call.stage in (CallStage.PREPARED, CallStage.SENT)
        call.stage = CallStage.CANCELLED
        return [_Step(CancelToolCall(call_id=call.call_id))] if known else []

    def _send_unsent(self) -> list[_Step]:
        """Send the calls a barge-in left prepared that LiveKit still runs: the framework
        did not stop them, so they go out now (after the caller's change was heard)."""
        return [
            _Step(SendToolCall(call_id=call.call_id), call, CallStage.SENT)
            for call in self._bridge.calls.values()
            if call.stage is CallStage.PREPARED and not call.dropped
        ]


@dataclass(frozen=True)
class _Step:
    """An action, and the stage its call reaches once the engine has carried it out."""

    action: Action
    call: ServedCall | None = None
    stage: CallStage | None = None


class _Flush:
    """The session waits: send what a barge-in left prepared, then end the response."""


_UNSET = object()


async def _finished(run: Any) -> None:
    await run


def _last_generation(speech: Any) -> asyncio.Future[None] | None:
    generations = getattr(speech, "_generations", None)
    if speech.done() or not isinstance(generations, list) or not generations:
        return None
    last: asyncio.Future[None] = generations[-1]
    return None if last.done() else last


def _generating(speech: Any) -> bool:
    """Whether a speech is still producing (its model step or its text), rather than done
    or waiting for its tools."""
    if speech.done():
        return False
    generations = getattr(speech, "_generations", None)
    if not isinstance(generations, list) or not generations:
        return True
    return not generations[-1].done()
