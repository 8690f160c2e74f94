"""The conversation engine: turns, virtual time, barge-ins, tool calls, endings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    CallStatus,
    EndCall,
    EndReason,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    SetTimer,
    Silence,
    Speaker,
    TimerFired,
    ToolError,
    ToolResult,
    Transfer,
    UpdateState,
)
from tests.conversation.conftest import RunCall, script

ECHO_TOOL = {"echo": {"stub": {"kind": "template", "returns": {"said": "{text}"}}, "latency": 1.0}}


class Recorder:
    """An agent that greets, echoes the caller and records every event it got."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        self.events.append(event)
        if isinstance(event, CallStarted):
            yield Say(text="Hello there, how can I help you today?")
        elif isinstance(event, CallerSaid):
            yield Say(text=f"You said {event.text}")


async def test_turns_alternate_and_take_virtual_time(run_call: RunCall) -> None:
    agent = Recorder()
    result = await run_call(agent, script({"say": "I need help"}, {"say": "Thanks a lot"}))
    speakers = [t.speaker for t in result.turns]
    assert speakers == [Speaker.AGENT, Speaker.CALLER, Speaker.AGENT, Speaker.CALLER, Speaker.AGENT]
    greeting = result.turns[0]
    assert greeting.start == 0.0
    assert greeting.end == pytest.approx(8 / 2.5)  # eight words at 2.5 words per second
    caller = result.turns[1]
    assert caller.start == pytest.approx(greeting.end + 0.3)  # the response gap
    assert caller.end - caller.start == pytest.approx(3 / 2.5)
    assert result.end.reason is EndReason.CALLER_HANGUP
    assert [type(e).__name__ for e in agent.events] == ["CallStarted", "CallerSaid", "CallerSaid"]


async def test_mid_speech_barge_in_cuts_the_agent(run_call: RunCall) -> None:
    agent = Recorder()
    steps = script({"barge_in": {"at": "mid_speech", "say": "Wait wait"}})
    result = await run_call(agent, steps)
    greeting, interruption = result.turns[0], result.turns[1]
    assert greeting.interrupted
    assert greeting.text == "Hello there, how can I help you today?"
    assert greeting.heard == "Hello there, how can"  # half of eight words
    assert interruption.barge_in
    assert interruption.speaker is Speaker.CALLER
    assert interruption.start == pytest.approx(4 / 2.5)
    barge = agent.events[1]
    assert isinstance(barge, BargeIn)
    assert barge.text == "Wait wait"
    assert barge.point == "mid_speech"


async def test_background_noise_is_a_barge_in_without_words(run_call: RunCall) -> None:
    agent = Recorder()
    result = await run_call(agent, script({"barge_in": {"at": "mid_speech"}}))
    barge = agent.events[1]
    assert isinstance(barge, BargeIn)
    assert barge.text is None
    assert [t.speaker for t in result.turns] == [Speaker.AGENT]
    assert any(entry.kind == "background_noise" for entry in result.trace)


class ToolAgent:
    """Prepares and sends one echo call after the caller speaks, then says what came back."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.after_send = False

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        self.events.append(event)
        if isinstance(event, CallerSaid) and not any(isinstance(e, BargeIn) for e in self.events):
            yield UpdateState(field="text", value=event.text, version=1)
            yield PrepareToolCall(
                call_id="c1", tool="echo", args={"text": event.text}, state_version=1
            )
            yield SendToolCall(call_id="c1")
            self.after_send = True
            yield Say(text="Let me check that")
        elif isinstance(event, ToolResult):
            yield Say(text=f"The answer is {event.result['said']}")
            yield EndCall()


async def test_barge_in_during_tool_prep_stops_the_send(run_call: RunCall) -> None:
    agent = ToolAgent()
    steps = script({"say": "ping"}, {"barge_in": {"at": "during_tool_prep", "say": "No stop"}})
    result = await run_call(agent, steps, tools=ECHO_TOOL)
    call = result.tool_calls[0]
    assert call.status is CallStatus.PREPARED  # never sent: the barge-in came first
    assert not agent.after_send
    assert isinstance(agent.events[-1], BargeIn)
    assert result.end.reason is EndReason.CALLER_HANGUP


async def test_barge_in_after_tool_fired_comes_before_the_result(run_call: RunCall) -> None:
    agent = ToolAgent()
    steps = script({"say": "ping"}, {"barge_in": {"at": "after_tool_fired", "say": "Hurry"}})
    result = await run_call(agent, steps, tools=ECHO_TOOL)
    kinds = [type(e).__name__ for e in agent.events]
    assert kinds == ["CallStarted", "CallerSaid", "BargeIn", "ToolResult"]
    assert result.tool_calls[0].status is CallStatus.COMPLETED
    assert result.end.reason is EndReason.AGENT_HANGUP
    assert result.turns[-1].text == "The answer is ping"


async def test_tool_result_arrives_after_its_latency(run_call: RunCall) -> None:
    agent = ToolAgent()
    result = await run_call(agent, script({"say": "ping"}), tools=ECHO_TOOL)
    call = result.tool_calls[0]
    sent = next(h.time for h in call.history if h.status is CallStatus.SENT)
    done = next(h.time for h in call.history if h.status is CallStatus.COMPLETED)
    assert done - sent == pytest.approx(1.0)
    assert result.turns[-1].start >= done
    entry = next(e for e in result.trace if e.kind == "prepare_tool_call")
    assert entry.state_version == 1


class SlowToolAgent:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield PrepareToolCall(call_id="slow", tool="slow", args={})
            yield SendToolCall(call_id="slow")
        elif isinstance(event, ToolError):
            yield Say(text=f"failed with {event.error}")
            yield EndCall()


async def test_a_30_second_timeout_costs_no_wall_time(run_call: RunCall) -> None:
    tools = {"slow": {"stub": {"kind": "fixed", "returns": 1}, "latency": 120.0, "timeout": 30}}
    began = time.perf_counter()
    result = await run_call(SlowToolAgent(), [], tools=tools)
    assert time.perf_counter() - began < 1.0
    assert result.tool_calls[0].status is CallStatus.TIMED_OUT
    assert result.turns[0].text == "failed with timeout"
    assert result.turns[0].start == pytest.approx(30.0)


class Crashing:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        yield Say(text="Hello")
        raise ValueError("boom")


class Hanging:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        await asyncio.sleep(3600)
        yield Say(text="never")


async def test_a_crashing_agent_ends_its_call_with_an_error(run_call: RunCall) -> None:
    result = await run_call(Crashing(), script({"say": "hi"}))
    assert result.end.reason is EndReason.ERROR
    assert "ValueError: boom" in result.end.message
    assert result.turns[0].text == "Hello"  # what it said before crashing is kept


async def test_a_hanging_agent_ends_its_call_with_an_error(run_call: RunCall) -> None:
    began = time.perf_counter()
    result = await run_call(Hanging(), script({"say": "hi"}), agent_turn_timeout=0.2)
    assert time.perf_counter() - began < 2.0
    assert result.end.reason is EndReason.ERROR
    assert "within 0.2s" in result.end.message


class Parrot:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        yield Say(text="Yes.")


async def test_a_repeated_one_word_reply_is_a_loop(run_call: RunCall) -> None:
    result = await run_call(Parrot(), script({"say": "a"}, {"say": "b"}, {"say": "c"}))
    assert result.end.reason is EndReason.LOOP_DETECTED
    assert len([t for t in result.turns if t.speaker is Speaker.AGENT]) == 2


async def test_the_turn_limit_ends_the_call(run_call: RunCall) -> None:
    agent = Recorder()
    steps = script(*({"say": f"line {i}"} for i in range(10)))
    result = await run_call(agent, steps, max_turns=4)
    assert result.end.reason is EndReason.TURN_LIMIT
    assert len(result.turns) == 4


class Transferring:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        yield Say(text="Putting you through")
        yield Transfer(target="billing")
        yield Say(text="never said")


async def test_transfer_ends_the_call_and_names_the_target(run_call: RunCall) -> None:
    result = await run_call(Transferring(), [])
    assert result.end.reason is EndReason.TRANSFERRED
    assert result.end.message == "billing"
    assert [t.text for t in result.turns] == ["Putting you through"]


class SilenceAware:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def respond(self, event: Event) -> list[Action]:  # a plain function works too
        self.events.append(event)
        if isinstance(event, CallStarted):
            return [Say(text="Hello?"), SetTimer(name="nudge", seconds=2.0)]
        if isinstance(event, TimerFired):
            return [Say(text="Still there?")]
        return []


async def test_silence_and_timers_on_the_virtual_clock(run_call: RunCall) -> None:
    agent = SilenceAware()
    result = await run_call(agent, script({"silence": True}, {"silence": True}))
    kinds = [type(e).__name__ for e in agent.events]
    assert kinds == ["CallStarted", "TimerFired", "Silence"]
    timer_turn = result.turns[1]
    assert timer_turn.start == pytest.approx(0.4 + 2.0)  # set when "Hello?" ended at 0.4s
    assert isinstance(agent.events[2], Silence)


class Misuser:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        yield SendToolCall(call_id="nope")


async def test_misusing_a_tool_is_an_error_of_the_agent(run_call: RunCall) -> None:
    result = await run_call(Misuser(), [])
    assert result.end.reason is EndReason.ERROR
    assert "misused a tool" in result.end.message


class WrongType:
    async def respond(self, event: Event) -> AsyncIterator[Any]:
        yield {"kind": "say", "text": "a dict is not an action"}


async def test_yielding_something_else_than_an_action_is_an_agent_error(
    run_call: RunCall,
) -> None:
    result = await run_call(WrongType(), [])
    assert result.end.reason is EndReason.ERROR
    assert "agent yielded dict, not an action" in result.end.message


async def test_the_same_inputs_give_the_same_record(run_call: RunCall) -> None:
    steps = script({"say": "ping"}, {"barge_in": {"at": "after_tool_fired", "say": "Hurry"}})
    first = await run_call(ToolAgent(), steps, tools=ECHO_TOOL)
    second = await run_call(ToolAgent(), steps, tools=ECHO_TOOL)
    assert first.model_dump_json() == second.model_dump_json()
