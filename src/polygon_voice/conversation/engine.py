"""The conversation engine: one simulated call on a virtual clock.

The agent sees events and answers with actions (see `polygon_voice.model.events`).
The engine asks the caller at three points of the agent's action stream whether it
talks over the agent: while the agent speaks (`mid_speech`), between preparing and
sending a tool call (`during_tool_prep`), and after a call was sent but before its
result (`after_tool_fired`). A barge-in stops the agent's current response: actions
it has not yielded yet never happen.

Time is virtual. Speech lasts words / rate; tool latency and timeouts run on the
same clock, so a 30-second timeout costs no wall time. Only the agent's own work is
measured in wall time, against `agent_turn_timeout`, so a hanging agent ends its own
conversation (reason `error`) and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from polygon_voice.agents.base import Agent
from polygon_voice.api.errors import AGENT_INFRASTRUCTURE_ERRORS
from polygon_voice.caller.base import Caller, CallView, HangUp, Interrupt, Speak
from polygon_voice.conversation.clock import EventQueue, Timers, speech_seconds
from polygon_voice.conversation.loops import Reply, find_loop
from polygon_voice.conversation.repeats import is_repeat_request
from polygon_voice.model import (
    Action,
    BargeIn,
    CallEnd,
    CallerSaid,
    CallStarted,
    CancelToolCall,
    ConversationResult,
    EndCall,
    EndReason,
    EngineSettings,
    Event,
    InterruptPoint,
    Persona,
    PrepareToolCall,
    Say,
    SendToolCall,
    SetTimer,
    Silence,
    Speaker,
    StateUpdate,
    TimerFired,
    ToolError,
    ToolResult,
    TraceEntry,
    Transfer,
    Turn,
    UpdateState,
)
from polygon_voice.seeding import derive_seed
from polygon_voice.textsafe import storable, storable_text
from polygon_voice.tools import ToolRuntime, ToolUsageError

Hearing = Callable[[str, str, int], str]
"""What the agent hears of the caller: (said text, language, seed) -> heard text."""

Source = Literal["engine", "caller", "agent", "tools"]
_Message = TypeVar("_Message", bound=Event | Action)


def clear_line(text: str, language: str, seed: int) -> str:
    """A perfect line: the agent hears exactly what was said (no recognition noise)."""
    return text


@dataclass(frozen=True)
class CallSetup:
    """Everything one conversation is run with."""

    conversation_id: str
    scenario_id: str
    run_seed: int
    language: str
    persona: Persona
    settings: EngineSettings
    max_turns: int


class _Ended(Exception):
    """Raised inside the engine when the call is over."""


class ConversationEngine:
    """Runs one call between an agent and a caller over stub tools."""

    def __init__(
        self,
        setup: CallSetup,
        agent: Agent,
        caller: Caller,
        tools: ToolRuntime,
        hearing: Hearing = clear_line,
    ) -> None:
        self.setup = setup
        self._agent = agent
        self._caller = caller
        self._tools = tools
        self._hearing = hearing
        self._settings = setup.settings
        self.now = 0.0
        self.turns: list[Turn] = []
        self.trace: list[TraceEntry] = []
        self.state_updates: list[StateUpdate] = []
        self.state_version: int | None = None
        self.end: CallEnd | None = None
        self._inbox = EventQueue()
        self._timers = Timers()
        self._deliveries = 0
        self._caller_turns = 0
        self._direct: set[str] = set()
        self._replies: list[Reply] = []

    async def run(self) -> ConversationResult:
        """Play the call to its end and return its full record."""
        event: Event | None = CallStarted()
        try:
            while True:
                if event is None:
                    event = await self._next_event()
                event = await self._agent_turn(event)
        except _Ended:
            pass
        return self._result()

    def abort(self, message: str) -> ConversationResult:
        """End the call with an error from outside the agent; keep what happened so far."""
        self._stop(EndReason.ERROR, message)
        return self._result()

    def direct_tool_call(self, tool: str, args: dict[str, Any]) -> ToolResult | ToolError:
        """A call the agent makes itself (the tool server): prepared and sent now, answered
        at its outcome's virtual time, to which the clock moves. It is traced and counted like
        any other call, but its outcome is the answer here, never an event to the agent.
        ToolUsageError for an unknown tool."""
        call_id = f"direct-{len(self._tools.calls) + 1}"
        prepare = self._storable(PrepareToolCall(call_id=call_id, tool=tool, args=args), "agent")
        self._tools.prepare(prepare, self.now)
        self._direct.add(call_id)
        self._record("agent", prepare)
        send = SendToolCall(call_id=call_id)
        self._record("agent", send)
        self._tools.send(call_id, self.now)
        answer: ToolResult | ToolError | None = None
        while answer is None:
            due = self._tools.next_due()
            if due is None:  # every sent call has an outcome; a guard against a tools bug
                raise RuntimeError(f"direct call {call_id!r} has no outcome")
            self.now = max(self.now, due)
            for time, event in self._tools.advance(self.now):
                if isinstance(event, ToolResult | ToolError) and event.call_id == call_id:
                    answer = answer or event
                elif not _is_direct(event, self._direct):
                    self._inbox.push(time, event)
        self._record("tools", answer)
        self._collect()  # timers due by now
        return answer

    # --- the agent's side -----------------------------------------------------

    async def _agent_turn(self, event: Event) -> Event | None:
        """Deliver `event`; return a barge-in event if the caller interrupted."""
        if self.end is not None:
            raise _Ended
        self._count_delivery()
        source = _EVENT_SOURCE.get(event.kind, "engine")
        event = self._storable(event, source)
        self._record(source, event)
        # Speech of a response begun, or spoken, or ended while a sent call is awaited fills
        # a wait: the loop rule excuses a few repeats of it (conversation.loops).
        speech = _Speech(in_flight=self._tools.awaiting())
        pending: _PendingBargeIn | None = None
        actions: AsyncIterator[Action] | None = None
        limit = self._settings.agent_turn_timeout
        try:
            async with asyncio.timeout(limit):
                actions = _start_response(self._agent, event)
                while pending is None and self.end is None:
                    action = await _next_action(actions)
                    if action is None:
                        break
                    pending = self._apply(action, speech)
        except TimeoutError:
            self._stop_after(speech, f"agent gave no answer to {event.kind} within {limit:g}s")
        except _AgentFailed as failure:
            self._stop_after(speech, str(failure))
        except ToolUsageError as exc:
            self._stop_after(speech, f"agent misused a tool: {exc}")
        finally:
            if actions is not None:
                await _close(actions)
        self._finish_speech(speech)
        if self.end is not None:
            raise _Ended
        return None if pending is None else self._caller_barges_in(pending)

    def _stop_after(self, speech: _Speech, message: str) -> None:
        self._finish_speech(speech)
        self._stop(EndReason.ERROR, message)

    def _apply(self, action: Action, speech: _Speech) -> _PendingBargeIn | None:
        """Carry out one action; return a pending barge-in when the caller interrupts."""
        self._check_limits(action, speech)  # first: an oversized Say is never copied or stored
        action = self._storable(action, "agent")
        self._record("agent", action)
        if isinstance(action, Say):
            return self._say(action, speech)
        if isinstance(action, PrepareToolCall):
            self._tools.prepare(action, self.now)
            return self._ask_caller(InterruptPoint.DURING_TOOL_PREP, action.tool)
        if isinstance(action, SendToolCall):
            self._tools.send(action.call_id, self.now)
            tool = self._tools.call(action.call_id).tool
            return self._ask_caller(InterruptPoint.AFTER_TOOL_FIRED, tool)
        if isinstance(action, CancelToolCall):
            self._tools.cancel(action.call_id, self.now)
        elif isinstance(action, UpdateState):
            self._update_state(action)
        elif isinstance(action, SetTimer):
            self._timers.set(self.now + action.seconds, action.name)
        elif isinstance(action, EndCall):
            self._finish_speech(speech)
            self._stop(EndReason.AGENT_HANGUP, action.reason)
        elif isinstance(action, Transfer):
            self._finish_speech(speech)
            self._stop(EndReason.TRANSFERRED, action.target)
        return None

    def _check_limits(self, action: Action, speech: _Speech) -> None:
        """Refuse a response over `max_actions_per_turn` actions or `max_say_chars` spoken
        characters: every later stage (loops, claims, judge, store) costs time in the size of
        what was said, on the loop all calls share. The call ends with reason `error`."""
        speech.actions += 1
        limit = self._settings.max_actions_per_turn
        if speech.actions > limit:
            self._note_over_limit("max_actions_per_turn", speech.actions, limit)
            raise _AgentFailed(
                f"agent yielded more than {limit:,} actions in one response"
                " (settings.max_actions_per_turn)"
            )
        if not isinstance(action, Say):
            return
        speech.chars += len(action.text)
        limit = self._settings.max_say_chars
        if speech.chars > limit:
            self._note_over_limit("max_say_chars", speech.chars, limit, action.text[:200])
            raise _AgentFailed(
                f"agent said {speech.chars:,} characters in one response; the limit is"
                f" {limit:,} (settings.max_say_chars)"
            )

    def _note_over_limit(self, setting: str, value: int, limit: int, start: str = "") -> None:
        data: dict[str, Any] = {"setting": setting, "value": value, "limit": limit}
        if start:
            data["start"] = self._storable_text(start, "agent", "over_limit")
        self._record_note("agent", "over_limit", data)

    def _say(self, action: Say, speech: _Speech) -> _PendingBargeIn | None:
        words = action.text.split()
        if speech.start is None:
            speech.start = self.now
        speech.in_flight = speech.in_flight or self._tools.awaiting()
        interrupt = self._ask_caller(InterruptPoint.MID_SPEECH)
        # A barge-in mid-speech cuts the chunk at half its words: the caller heard those.
        spoken = words if interrupt is None else words[: len(words) // 2]
        speech.said.append(action.text)
        speech.heard.append(" ".join(spoken))
        speech.interrupted = interrupt is not None
        self._advance_to(self.now + len(spoken) / self._settings.words_per_second)
        return interrupt

    def _update_state(self, action: UpdateState) -> None:
        update = StateUpdate(
            field=action.field, value=action.value, version=action.version, time=round(self.now, 6)
        )
        self.state_updates.append(update)
        self.state_version = action.version

    def _finish_speech(self, speech: _Speech) -> None:
        """Turn the agent's spoken chunks of this response into one agent turn."""
        if speech.start is None or speech.done:
            return
        speech.done = True
        text, heard = " ".join(speech.said), " ".join(s for s in speech.heard if s)
        self._add_turn(Speaker.AGENT, text, heard, speech.start, speech.interrupted)
        # "One moment." then the call it announces fills the wait too.
        in_flight = speech.in_flight or self._tools.awaiting()
        asked = self._caller_asked_again()
        self._replies.append(
            Reply(text, cut_off=speech.interrupted, asked_again=asked, in_flight=in_flight)
        )
        self._check_loop()

    def _caller_asked_again(self) -> bool:
        """Whether the caller's last turn before this agent turn asked to hear it again."""
        before = self.turns[-2] if len(self.turns) >= 2 else None
        return (
            before is not None
            and before.speaker is Speaker.CALLER
            and is_repeat_request(before.heard)
        )

    def _check_loop(self) -> None:
        if self.end is not None:
            return
        loop = find_loop(self._replies, self._settings.loop_overlap)
        if loop is not None:
            self._stop(EndReason.LOOP_DETECTED, loop.message())

    # --- the caller's side ----------------------------------------------------

    def _ask_caller(self, point: InterruptPoint, tool: str | None = None) -> _PendingBargeIn | None:
        move = self._caller.barge_in(point, self._view(), tool)
        return None if move is None else _PendingBargeIn(point, move)

    def _caller_barges_in(self, pending: _PendingBargeIn) -> Event:
        text = pending.words.text
        if text is None:
            self._record_note("caller", "background_noise", {"point": pending.point.value})
            return BargeIn(point=pending.point, text=None)
        heard = self._caller_speaks(text, barge_in=True)
        return BargeIn(point=pending.point, text=heard)

    async def _next_event(self) -> Event:
        """Whatever happens next: a due tool result or timer, else the caller's move."""
        self._collect()
        # Writes can land with no event to deliver (e.g. before a timeout): keep waiting.
        while not self._inbox and self._tools.awaiting():
            self._wait_for_next_due()
        if self._inbox:
            return self._take()
        self._advance_to(self.now + self._settings.response_gap)
        move = await self._caller.reply(self._view())
        if isinstance(move, Speak):
            return CallerSaid(text=self._caller_speaks(move.text, barge_in=False))
        if isinstance(move, HangUp):
            if move.failure is not None:
                # The caller could not go on (its model failed): the checks and the judge
                # read this note and treat the call as not exercised (checks.exercised).
                self._record_note("caller", "caller_failed", {"error": move.failure})
            elif self._caller_turns == 0 and (move.never_spoke or self._caller_did_nothing()):
                # Hung up before saying anything: the agent was never put to the test, so
                # the call is not exercised either (checks.exercised).
                self._record_note("caller", "caller_never_spoke", {})
            message = "" if move.failure is None else f"the caller failed: {move.failure}"
            self._stop(EndReason.CALLER_HANGUP, message)
            raise _Ended
        return self._silence()

    def _caller_did_nothing(self) -> bool:
        """Whether the caller has not kept silent or made a noise in this call yet (a
        script's silence or noise is a test of its own, even without a word)."""
        return not any(e.kind in ("silence", "background_noise") for e in self.trace)

    def _caller_speaks(self, text: str, barge_in: bool) -> str:
        text = self._storable_text(text, "caller", "speak")
        self._caller_turns += 1
        seed = derive_seed(
            self.setup.run_seed, self.setup.conversation_id, "hearing", self._caller_turns
        )
        heard = self._hearing(text, self.setup.language, seed)
        self._add_turn(Speaker.CALLER, text, heard, self.now, False, barge_in=barge_in)
        return heard

    def _silence(self) -> Event:
        seconds = self._settings.silence_seconds
        upcoming = self._next_due()
        if upcoming is not None and upcoming <= self.now + seconds:
            self._advance_to(upcoming)
            return self._take()
        self._advance_to(self.now + seconds)
        return Silence(seconds=seconds)

    # --- time and bookkeeping -------------------------------------------------

    def _advance_to(self, time: float) -> None:
        self.now = max(self.now, time)
        self._collect()

    def _collect(self) -> None:
        for time, event in self._tools.advance(self.now):
            if not _is_direct(event, self._direct):
                self._inbox.push(time, event)
        for time, name in self._timers.pop_due(self.now):
            self._inbox.push(time, TimerFired(name=name))

    def _next_due(self) -> float | None:
        times = [t for t in (self._tools.next_due(), self._timers.next_due()) if t is not None]
        return min(times) if times else None

    def _wait_for_next_due(self) -> None:
        due = self._next_due()
        if due is None:  # awaiting() with nothing scheduled would be a tools bug
            raise RuntimeError("a tool call is awaited but nothing is scheduled")
        self._advance_to(due)

    def _take(self) -> Event:
        _, event = self._inbox.pop()
        return event

    def _add_turn(
        self,
        speaker: Speaker,
        text: str,
        heard: str,
        start: float,
        interrupted: bool,
        barge_in: bool = False,
    ) -> None:
        if speaker is Speaker.CALLER:
            self._advance_to(start + speech_seconds(text, self._settings.words_per_second))
        turn = Turn(
            index=len(self.turns),
            speaker=speaker,
            text=text,
            heard=heard,
            start=round(start, 6),
            end=round(self.now, 6),
            interrupted=interrupted,
            barge_in=barge_in,
        )
        self.turns.append(turn)
        if len(self.turns) >= self.setup.max_turns and self.end is None:
            self._stop(EndReason.TURN_LIMIT, f"reached {self.setup.max_turns} turns")

    def _count_delivery(self) -> None:
        # Agents and callers that keep each other busy without speaking must still end.
        self._deliveries += 1
        if self._deliveries > self.setup.max_turns * 20 and self.end is None:
            self._stop(EndReason.TURN_LIMIT, "too many events without progress")
            raise _Ended

    def _stop(self, reason: EndReason, message: str) -> None:
        if self.end is None:
            # The message may quote an agent's exception, and it is a column of its own.
            message = self._storable_text(message, "engine", "call_ended")
            self.end = CallEnd(reason=reason, time=round(self.now, 6), message=message)
            self._record_note("engine", "call_ended", {"reason": reason.value, "message": message})

    def _record(self, source: Source, message: Event | Action) -> None:
        data = message.model_dump(mode="json", exclude={"kind"})
        self._record_note(source, message.kind, data)

    def _record_note(self, source: Source, kind: str, data: dict[str, Any]) -> None:
        entry = TraceEntry(
            seq=len(self.trace),
            time=round(self.now, 6),
            source=source,
            kind=kind,
            data=data,
            state_version=self.state_version,
        )
        self.trace.append(entry)

    def _storable(self, message: _Message, source: Source) -> _Message:
        """`message` with every unstorable code point replaced by U+FFFD (textsafe), and a
        trace note `text_sanitised` saying where: a bad string never loses the call."""
        cleaned, count = storable(message)
        if count:
            self._note_sanitised(source, message.kind, count)
        return cleaned

    def _storable_text(self, text: str, source: Source, where: str) -> str:
        cleaned, count = storable_text(text)
        if count:
            self._note_sanitised(source, where, count)
        return cleaned

    def _note_sanitised(self, source: Source, where: str, count: int) -> None:
        self._record_note(source, "text_sanitised", {"where": where, "replaced": count})

    def _view(self) -> CallView:
        return CallView(
            persona=self.setup.persona,
            language=self.setup.language,
            turns=self.turns,
            now=self.now,
        )

    def _result(self) -> ConversationResult:
        assert self.end is not None
        # The line is closed, but the backend goes on: writes already under way still land
        # (their answers reach nobody). The state layer is judged on what really landed.
        self._tools.advance(math.inf)
        self._note_unplayed_script()
        backend = self._tools.backend
        return ConversationResult(
            id=self.setup.conversation_id,
            scenario_id=self.setup.scenario_id,
            seed=self.setup.run_seed,
            language=self.setup.language,
            end=self.end,
            turns=self.turns,
            tool_calls=self._tools.calls,
            state_updates=self.state_updates,
            backend_writes=backend.writes,
            backend_final=backend.touched(),
            trace=self.trace,
        )

    def _note_unplayed_script(self) -> None:
        # A barge-in whose point never came means the script did not play as written; the
        # checks must tell that apart from an agent that failed (checks.exercised).
        unfired = getattr(self._caller, "unfired", None)
        if unfired is None or any(e.kind == "script_unplayed" for e in self.trace):
            return
        steps = unfired()
        if steps:
            data = {"barge_ins": [step.model_dump(mode="json") for step in steps]}
            self._record_note("caller", "script_unplayed", data)


_ACTION_TYPES = (
    Say,
    PrepareToolCall,
    SendToolCall,
    CancelToolCall,
    UpdateState,
    SetTimer,
    EndCall,
    Transfer,
)

_EVENT_SOURCE: dict[str, Source] = {
    "caller_said": "caller",
    "barge_in": "caller",
    "tool_result": "tools",
    "tool_error": "tools",
}


def _is_direct(event: Event, direct: set[str]) -> bool:
    """An outcome of a call made through the tool server: answered there, not delivered."""
    return isinstance(event, ToolResult | ToolError) and event.call_id in direct


@dataclass
class _Speech:
    """The agent's spoken chunks within one response."""

    start: float | None = None
    said: list[str] = field(default_factory=list)
    heard: list[str] = field(default_factory=list)
    interrupted: bool = False
    in_flight: bool = False
    done: bool = False
    actions: int = 0  # yielded so far, against settings.max_actions_per_turn
    chars: int = 0  # said so far, against settings.max_say_chars


@dataclass(frozen=True)
class _PendingBargeIn:
    """A barge-in decided during the agent's response, delivered when it stops."""

    point: InterruptPoint
    words: Interrupt


class _AgentFailed(Exception):
    """The agent's own code raised while answering."""


class _SyncActions:
    """Adapts a plain iterable of actions to the async protocol."""

    def __init__(self, actions: Iterable[Action]) -> None:
        self._iterator = iter(actions)

    def __aiter__(self) -> _SyncActions:
        return self

    async def __anext__(self) -> Action:
        try:
            return next(self._iterator)
        except StopIteration:
            raise StopAsyncIteration from None


def agent_raised(exc: Exception) -> str:
    """How a call that the agent's exception ended records it: `agent raised NAME: message`.

    A subclass of one of the infrastructure errors (a user's `class BackendDown(
    InfrastructureError)`) is named by that base, the subclass kept in the message, so that
    the run counts it as the agent's service failing rather than as a verdict."""
    name = type(exc).__name__
    base = next(
        (c.__name__ for c in type(exc).__mro__ if c.__name__ in AGENT_INFRASTRUCTURE_ERRORS), None
    )
    if base is None or base == name:
        return f"agent raised {name}: {exc}"
    return f"agent raised {base}: {name}: {exc}"


def _start_response(agent: Agent, event: Event) -> AsyncIterator[Action]:
    try:
        actions = agent.respond(event)
    except Exception as exc:
        raise _AgentFailed(agent_raised(exc)) from exc
    if hasattr(actions, "__anext__"):
        return actions  # type: ignore[return-value]
    return _SyncActions(actions)


async def _next_action(actions: AsyncIterator[Action]) -> Action | None:
    try:
        action = await anext(actions)
    except StopAsyncIteration:
        return None
    except Exception as exc:
        raise _AgentFailed(agent_raised(exc)) from exc
    if not isinstance(action, _ACTION_TYPES):
        names = ", ".join(kind.__name__ for kind in _ACTION_TYPES)
        raise _AgentFailed(f"agent yielded {type(action).__name__}, not an action ({names})")
    return action


async def _close(actions: AsyncIterator[Action]) -> None:
    aclose = getattr(actions, "aclose", None)
    if aclose is None:
        return
    with contextlib.suppress(Exception):  # the agent's failing cleanup must not stop the engine
        await aclose()
