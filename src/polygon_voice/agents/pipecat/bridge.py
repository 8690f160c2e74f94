"""One call with a Pipecat bot: its own pipeline, driven in text mode from Polygon's events.

The user's `run_bot(transport, runner_args)` builds and runs its pipeline on a transport
Polygon hands it (`PolygonTransport`, text only). Caller turns go in as Pipecat's eval
transport sends them in text mode (`LLMMessagesAppendFrame(run_llm=True)`, the bot's speech
skipped); a caller talking over the bot first interrupts it and drains the pipeline, exactly
as RTVI's `send-text` does. Functions named like a suite tool are answered by Polygon's
stubs: the call becomes `PrepareToolCall` + `SendToolCall`, and the stub's answer goes back
through the function's result callback. The bot's text becomes `Say`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
from collections import deque
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from loguru import logger
from pipecat.frames.frames import (
    AggregatedTextFrame,
    CancelFrame,
    EndFrame,
    ErrorFrame,
    Frame,
    FunctionCallsStartedFrame,
    InterruptionFrame,
    LLMConfigureOutputFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMMessagesAppendFrame,
    LLMTextFrame,
    StartFrame,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.runner.types import RunnerArguments
from pipecat.services.llm_service import FunctionCallParams, LLMService
from pipecat.transports.base_transport import BaseTransport

from polygon_voice.agents.base import AgentContext
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    CancelToolCall,
    EndCall,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    ToolError,
    ToolResult,
    UpdateState,
)

if TYPE_CHECKING:
    from polygon_voice.agents.pipecat.factory import PipecatAgentFactory

# Wall seconds a pipeline may take to start (imports are done by then; a VAD model loads).
START_TIMEOUT = 30.0
# Rounds of draining before the bot counts as stuck: each round is one flush of the whole
# pipeline, and a bot that keeps producing frames for this long never waits for the caller.
MAX_SETTLE_ROUNDS = 200


class PipecatBotError(Exception):
    """The bot failed: its pipeline function raised, ended early, or reported an error."""


@dataclass
class BotCall:
    """A function call the bot's LLM made to a suite tool, and how far Polygon has seen it."""

    call_id: str
    tool: str
    args: dict[str, Any]
    answer: asyncio.Future[Any]
    prepared: bool = False
    sent: bool = False
    cancelled: bool = False
    answered: bool = False


@dataclass
class _Cancelled:
    call: BotCall


@dataclass
class _Text:
    text: str


@dataclass
class _End:
    """The bot ended its pipeline (an EndFrame, e.g. from an `end_call` function)."""


@dataclass
class _Activity:
    """What the pipeline produced, in order: the actions to yield once it has settled."""

    outbox: deque[BotCall | _Cancelled | _Text | _End] = field(default_factory=deque)
    # Calls of the reply still on its way out: its text was said before them.
    held: list[BotCall] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    responses_open: int = 0
    announced: int = 0  # function calls the LLM announced (FunctionCallsStartedFrame)
    invoked: int = 0  # ... and those that reached a handler
    changes: int = 0  # anything that counts as the bot doing something
    errors: list[str] = field(default_factory=list)
    ended: bool = False  # the pipeline ended (the bot's EndFrame or CancelFrame)

    def close_text(self) -> None:
        """The reply is complete: its calls, then its words.

        Pipecat runs a reply's function calls as soon as the model's answer is complete,
        while the text is still being spoken, so the calls go out before the words (a
        barge-in over the words comes after the calls were sent).
        """
        self.outbox.extend(self.held)
        self.held.clear()
        text = "".join(self.text).strip()
        self.text.clear()
        if text:
            self.outbox.append(_Text(text))


class _Input(FrameProcessor):  # type: ignore[misc, unused-ignore]  # Any without pipecat's types
    """The transport's input: where the caller's turns enter the pipeline."""

    def __init__(self, agent: PipecatAgent) -> None:
        super().__init__(name="PolygonInput")
        self._agent = agent

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, StartFrame):
            self._agent.pipeline_starting(self)
        elif isinstance(frame, ErrorFrame):
            self._agent.activity.errors.append(str(getattr(frame, "error", frame)))
        await self.push_frame(frame, direction)

    async def send(self, frame: Frame) -> None:
        """Push a frame downstream from the top, as a transport's input does."""
        await self.push_frame(frame, FrameDirection.DOWNSTREAM)


class _Output(FrameProcessor):  # type: ignore[misc, unused-ignore]  # Any without pipecat's types
    """The transport's output: what the bot says, seen as it leaves the pipeline."""

    def __init__(self, agent: PipecatAgent) -> None:
        super().__init__(name="PolygonOutput")
        self._agent = agent

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if direction is FrameDirection.DOWNSTREAM:
            self._agent.output_frame(frame)
        await self.push_frame(frame, direction)


class PolygonTransport(BaseTransport):  # type: ignore[misc, unused-ignore]  # Any without pipecat's types
    """A text-only transport: Polygon's caller is its one client."""

    def __init__(self, agent: PipecatAgent) -> None:
        super().__init__(name="PolygonTransport")
        self._input = _Input(agent)
        self._output = _Output(agent)
        # Run in line (sync), so a greeting queued in the handler is there when it returns.
        self._register_event_handler("on_client_connected", sync=True)
        self._register_event_handler("on_client_disconnected", sync=True)

    def input(self) -> _Input:
        """The input processor (the caller's side)."""
        return self._input

    def output(self) -> _Output:
        """The output processor (the bot's side)."""
        return self._output


class _StubbedFunctions(dict[Any, Any]):
    """An LLM service's function registry in which a suite tool's handler is Polygon's stub.

    The service looks its handler up again when it runs a call, so functions registered
    at any time (also those a context's tools register on their own) are answered by the
    stub, with the options the bot gave them (cancel_on_interruption, timeout).
    """

    def __init__(self, registry: dict[Any, Any], agent: PipecatAgent) -> None:
        super().__init__(registry)
        self._agent = agent

    def __getitem__(self, name: Any) -> Any:
        item = super().__getitem__(name)
        if name in self._agent.context.tools:
            return dataclasses.replace(item, handler=self._agent.run_stub)
        return item


class PipecatAgent:
    """A Polygon agent whose answers come from the user's Pipecat pipeline."""

    def __init__(self, factory: PipecatAgentFactory, context: AgentContext) -> None:
        self._factory = factory
        self.context = context
        self.activity = _Activity()
        self._transport: PolygonTransport | None = None
        self._bot: asyncio.Task[None] | None = None
        self._started = asyncio.Event()
        self._ended = asyncio.Event()
        self._input: _Input | None = None
        self._calls: dict[str, BotCall] = {}
        self._state: dict[str, Any] = {}
        self._version = 0
        self._ids = itertools.count(1)
        self._closing = False
        self._registries: list[_StubbedFunctions] = []

    # --- Polygon's side ------------------------------------------------------

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Hand the event to the bot, wait until it has nothing more to do, yield its actions."""
        if isinstance(event, CallStarted):
            await self._start()
        elif isinstance(event, CallerSaid):
            await self._caller_turn(event.text)
        elif isinstance(event, BargeIn) and event.text:
            await self._interrupt()
            await self._caller_turn(event.text)
        elif isinstance(event, ToolResult | ToolError):
            self._answer(event)
        # Silence, timers and a barge-in without words (noise) reach no text-mode pipeline.
        await self._settle()
        for action in self._actions():
            yield action

    async def aclose(self) -> None:
        """Stop the bot's pipeline (the call is over)."""
        bot, self._bot = self._bot, None
        self._closing = True
        if bot is None or bot.done():
            return
        if self._transport is not None:
            with contextlib.suppress(Exception):
                await self._transport._call_event_handler("on_client_disconnected", {})
        with contextlib.suppress(Exception):
            await self._worker().cancel()
        try:
            await asyncio.wait_for(bot, 5)
        except (Exception, asyncio.CancelledError):
            bot.cancel()

    async def _start(self) -> None:
        self._transport = PolygonTransport(self)
        runner_args = RunnerArguments(session_id=self.context.conversation_id)
        args = (
            (self._transport, runner_args)
            if self._factory.takes_runner_args
            else (self._transport,)
        )
        self._bot = asyncio.create_task(self._run_bot(*args))
        started = asyncio.create_task(self._started.wait())
        done, _ = await asyncio.wait({self._bot, started}, timeout=START_TIMEOUT,
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if started not in done:
            started.cancel()
            self._check_bot()
            raise PipecatBotError(f"the pipeline did not start within {START_TIMEOUT:g}s")
        # Text mode, as Pipecat's eval transport sets it: the bot's speech is not synthesised.
        await self._send(LLMConfigureOutputFrame(skip_tts=True))
        # The client connects, then (an RTVI client, as Pipecat's web and eval clients are)
        # says it is ready: a bot greets in one handler or the other.
        await self._transport._call_event_handler(
            "on_client_connected", {"id": self.context.conversation_id}
        )
        try:
            rtvi = self._worker().rtvi
        except Exception:  # Pipecat raises a bare Exception when the bot turned RTVI off
            rtvi = None
        if rtvi is not None:
            await rtvi.set_client_ready()

    async def _run_bot(self, *args: Any) -> None:
        await self._factory.run_bot(*args)

    async def _caller_turn(self, text: str) -> None:
        message: Any = {"role": "user", "content": text}
        await self._send(LLMMessagesAppendFrame(messages=[message], run_llm=True))

    async def _interrupt(self) -> None:
        """What RTVI's send-text does before a message that runs at once: interrupt the bot,
        then drain the pipeline so the interrupted reply is committed before the new turn.

        Words of the bot's reply not yet said are dropped, as an interruption stops the
        output; calls it had made stay, for the interruption to cancel or not."""
        outbox = self.activity.outbox
        kept = [item for item in outbox if not isinstance(item, _Text)]
        outbox.clear()
        outbox.extend(kept)
        source: Any = self._source()  # its method is untyped in Pipecat
        await source.broadcast_interruption()
        await self._flush()

    def _answer(self, event: ToolResult | ToolError) -> None:
        call = self._calls.get(event.call_id)
        if call is None or call.answer.done():
            return  # a late answer after a timeout, or a call Pipecat already gave up on
        content: Any = (
            event.result
            if isinstance(event, ToolResult)
            else {"error": event.error.value, "message": event.message}
        )
        call.answered = True
        call.answer.set_result(content)

    def _actions(self) -> Iterator[Action]:
        """The bot's activity since the last event, as actions, in the order it happened.

        Each action is marked done before it is yielded: the engine has it once it is
        yielded, even if a barge-in then closes this generator. What is left stays for the
        next response, which is how a call that was prepared when the caller interrupted
        is sent afterwards, unless the interruption cancelled it.
        """
        outbox = self.activity.outbox
        while outbox:
            item = outbox[0]
            if isinstance(item, _Text):
                outbox.popleft()
                yield Say(text=item.text)
            elif isinstance(item, _Cancelled):
                outbox.popleft()
                yield from self._cancel(item.call)
            elif isinstance(item, _End):
                outbox.clear()  # nothing the bot did after it ended happens
                yield EndCall(reason="the bot ended its pipeline")
            else:
                yield from self._dispatch(item)
                outbox.popleft()

    def _dispatch(self, call: BotCall) -> Iterator[Action]:
        if call.cancelled and not call.prepared:
            return  # cancelled before Polygon saw it: it never happened
        if not call.prepared:
            yield from self._report_state(call)
            call.prepared = True
            yield PrepareToolCall(
                call_id=call.call_id, tool=call.tool, args=call.args, state_version=self._version
            )
        if not call.sent and not call.cancelled:
            call.sent = True
            yield SendToolCall(call_id=call.call_id)

    def _report_state(self, call: BotCall) -> Iterator[Action]:
        """The working state a Pipecat bot shows: the arguments of the calls its LLM builds,
        and `execute` false while the last call it was making was cancelled."""
        changes = dict(call.args)
        if self._state.get("execute") is False:
            changes["execute"] = True
        for name, value in changes.items():
            if name in self._state and self._state[name] == value:
                continue
            self._state[name] = value
            self._version += 1
            yield UpdateState(field=name, value=value, version=self._version)

    def _cancel(self, call: BotCall) -> Iterator[Action]:
        if not call.prepared or call.answered:
            return
        yield CancelToolCall(call_id=call.call_id)
        live = [c for c in self._calls.values() if c.prepared and not (c.cancelled or c.answered)]
        if not live and self._state.get("execute") is not False:
            self._state["execute"] = False
            self._version += 1
            yield UpdateState(field="execute", value=False, version=self._version)

    # --- the pipeline's side -------------------------------------------------

    def pipeline_starting(self, source: _Input) -> None:
        """The StartFrame reached the input: the pipeline is linked; stub the functions.

        The registry is the LLM service's own (`_functions`): Pipecat has no public hook to
        answer a registered function in its place, and this one is where it looks a
        handler up each time it runs a call.
        """
        self._input = source
        for llm in _processors(self._worker().pipeline, LLMService):
            if not isinstance(llm._functions, _StubbedFunctions):
                llm._functions = _StubbedFunctions(llm._functions, self)
                self._registries.append(llm._functions)

    def output_frame(self, frame: Frame) -> None:
        """A frame reached the output: collect the bot's text and what it is busy with."""
        activity = self.activity
        if isinstance(frame, StartFrame):
            self._started.set()
        elif isinstance(frame, LLMFullResponseStartFrame):
            activity.responses_open += 1
        elif isinstance(frame, LLMTextFrame):
            activity.text.append(frame.text)  # tokens: joined as they come
        elif isinstance(frame, AggregatedTextFrame):
            # Sentences, when a TTS service in the pipeline aggregated the tokens (text mode
            # skips the synthesis, not the aggregation).
            if activity.text and not activity.text[-1][-1:].isspace():
                activity.text.append(" ")
            activity.text.append(frame.text)
        elif isinstance(frame, LLMFullResponseEndFrame):
            activity.responses_open = max(0, activity.responses_open - 1)
            activity.close_text()
        elif isinstance(frame, FunctionCallsStartedFrame):
            # Only calls that reach a stub: a suite tool the bot registered by its name.
            activity.announced += sum(1 for c in frame.function_calls if self._stubbed(c))
        elif isinstance(frame, InterruptionFrame):
            # The interrupted reply's words are not said; its calls were made all the same.
            activity.text.clear()
            activity.responses_open = 0
            activity.close_text()
        elif isinstance(frame, EndFrame | CancelFrame):
            activity.close_text()
            if not activity.ended and not self._closing:
                activity.outbox.append(_End())
            activity.ended = True
            self._ended.set()
        else:
            return
        activity.changes += 1

    def _stubbed(self, call: Any) -> bool:
        name = call.function_name
        return name in self.context.tools and any(name in r for r in self._registries)

    async def run_stub(self, params: FunctionCallParams) -> None:
        """The handler of every suite tool: Polygon's stub answers, through the engine."""
        call = self._new_call(params)
        try:
            content = await call.answer
        except asyncio.CancelledError:
            call.cancelled = True
            self.activity.outbox.append(_Cancelled(call))
            self.activity.changes += 1
            raise
        await params.result_callback(content)

    def _new_call(self, params: FunctionCallParams) -> BotCall:
        call_id = str(params.tool_call_id or "") or f"pipecat-{next(self._ids)}"
        if call_id in self._calls:  # a model that reuses ids: Polygon needs them unique
            call_id = f"{call_id}-{next(self._ids)}"
        args = _plain(params.arguments)
        loop = asyncio.get_running_loop()
        call = BotCall(call_id, params.function_name, args, loop.create_future())
        self._calls[call_id] = call
        # The model said its text before it called, but the text may still be on its way to
        # the output (a TTS service aggregates it into sentences). The LLM service runs the
        # calls before it ends its reply, so a call waits for the end of the reply it is in.
        self.activity.held.append(call)
        self.activity.invoked += 1
        self.activity.changes += 1
        return call

    async def _settle(self) -> None:
        """Wait until the bot has done everything the last event set off.

        One flush sends a probe down the pipeline, up and down again, so every frame queued
        before it (and what a processor started by pushing upstream) has been handled. The
        bot has settled when a flush passes during which nothing happened, no reply is open
        and every function call the LLM announced has reached its handler.
        """
        activity = self.activity
        for _ in range(MAX_SETTLE_ROUNDS):
            if activity.ended:
                return  # a pipeline that ended has nothing more to do
            self._check_bot()
            before = activity.changes
            await self._flush()
            await asyncio.sleep(0)  # function call tasks created meanwhile get to start
            busy = activity.responses_open or activity.announced > activity.invoked
            if busy:
                await asyncio.sleep(0.005)
            elif activity.changes == before:
                activity.close_text()
                self._check_errors()
                return
        raise PipecatBotError(
            f"the bot never settled: still busy after {MAX_SETTLE_ROUNDS} pipeline flushes"
        )

    async def _flush(self) -> None:
        """One flush of the pipeline, or less if the pipeline ends meanwhile (a flush of an
        ending pipeline would wait for its probe until it gives up)."""
        flush = asyncio.ensure_future(self._worker().flush_pipeline())
        ended = asyncio.ensure_future(self._ended.wait())
        waits: set[asyncio.Future[Any]] = {flush, ended}
        if self._bot is not None:
            waits.add(self._bot)
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for waiting in (flush, ended):
            waiting.cancel()

    def _check_bot(self) -> None:
        bot = self._bot
        if bot is None or not bot.done():
            return
        exc = None if bot.cancelled() else bot.exception()
        if exc is not None:
            raise PipecatBotError(f"the bot's pipeline function raised {_describe(exc)}") from exc
        raise PipecatBotError("the bot's pipeline ended while the call was still going")

    def _check_errors(self) -> None:
        errors, self.activity.errors[:] = list(self.activity.errors), []
        if errors and not self.activity.outbox:
            raise PipecatBotError("the bot reported an error: " + "; ".join(errors))
        for error in errors:
            logger.warning("pipecat bot error (the bot answered anyway): {}", error)

    async def _send(self, frame: Frame) -> None:
        await self._source().send(frame)

    def _source(self) -> _Input:
        if self._input is None:
            raise PipecatBotError("the bot's pipeline has no Polygon transport input")
        return self._input

    def _worker(self) -> Any:
        return self._source().pipeline_worker


def _processors(processor: Any, kind: type) -> Iterator[Any]:
    """Every processor of `kind` in a pipeline, nested pipelines included."""
    if isinstance(processor, kind):
        yield processor
    for child in getattr(processor, "processors", None) or ():
        yield from _processors(child, kind)


def _plain(arguments: Any) -> dict[str, Any]:
    """The call's arguments as plain JSON values (the model's own parse, kept exactly)."""
    value = json.loads(json.dumps(dict(arguments or {}), default=str))
    return value if isinstance(value, dict) else {}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
