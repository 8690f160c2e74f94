"""The scripted caller plays its script in order and arms barge-ins."""

from __future__ import annotations

from polygon_voice.caller import CallView, HangUp, Interrupt, ScriptedCaller, Speak, StaySilent
from polygon_voice.model import InterruptPoint, Persona, ScriptStep

VIEW = CallView(persona=Persona(), language="en", turns=[], now=0.0)


def steps(*raw: dict[str, object]) -> list[ScriptStep]:
    return [ScriptStep.model_validate(step) for step in raw]


async def test_lines_in_order_then_hang_up() -> None:
    caller = ScriptedCaller(steps({"say": "one"}, {"silence": True}, {"say": "two"}))
    moves = [await caller.reply(VIEW) for _ in range(4)]
    assert moves == [Speak("one"), StaySilent(), Speak("two"), HangUp()]


async def test_a_hangup_step_ends_the_script_early() -> None:
    caller = ScriptedCaller(steps({"hangup": True}, {"say": "never"}))
    assert await caller.reply(VIEW) == HangUp()


async def test_an_armed_barge_in_waits_for_its_point_while_lines_go_on() -> None:
    caller = ScriptedCaller(
        steps(
            {"say": "order 5590"},
            {"barge_in": {"at": "during_tool_prep", "say": "no, 5599"}},
            {"say": "yes"},
        )
    )
    assert await caller.reply(VIEW) == Speak("order 5590")
    assert caller.barge_in(InterruptPoint.MID_SPEECH, VIEW) is None
    assert await caller.reply(VIEW) == Speak("yes")  # the agent asked first; the caller answers
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW) == Interrupt("no, 5599")
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW) is None  # fires once
    assert caller.unfired() == []


def test_a_barge_in_at_the_head_fires_on_the_greeting() -> None:
    caller = ScriptedCaller(steps({"barge_in": {"at": "mid_speech"}}, {"say": "hi"}))
    assert caller.barge_in(InterruptPoint.MID_SPEECH, VIEW) == Interrupt(None)


def test_unfired_barge_ins_are_reported() -> None:
    caller = ScriptedCaller(steps({"say": "a"}, {"barge_in": {"at": "after_tool_fired"}}))
    assert [b.at for b in caller.unfired()] == [InterruptPoint.AFTER_TOOL_FIRED]


def test_a_barge_in_can_wait_for_a_call_to_one_tool() -> None:
    caller = ScriptedCaller(
        steps({"barge_in": {"at": "during_tool_prep", "tool": "update_order", "say": "wait"}})
    )
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW, "lookup_order") is None
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW, "update_order") == Interrupt(
        "wait"
    )


def test_a_barge_in_can_wait_for_the_nth_call_to_a_tool() -> None:
    caller = ScriptedCaller(
        steps({"barge_in": {"at": "during_tool_prep", "tool": "update", "on_call": 2, "say": "x"}})
    )
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW, "update") is None
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW, "lookup") is None
    assert caller.barge_in(InterruptPoint.DURING_TOOL_PREP, VIEW, "update") == Interrupt("x")
