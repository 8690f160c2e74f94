"""CMP-3 on real calls: a call sits in the turn that prepared it, and its lifecycle counts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from polygon_voice.caller import ScriptedCaller
from polygon_voice.compare.divergence import divergence
from polygon_voice.compare.lifecycle import call_slots, call_turns
from polygon_voice.conversation import CallSetup, ConversationEngine
from polygon_voice.model import (
    Action,
    CancelToolCall,
    ConversationResult,
    EndCall,
    EngineSettings,
    Event,
    Persona,
    PrepareToolCall,
    Say,
    ScriptStep,
    SendToolCall,
    Speaker,
    ToolSpec,
)
from polygon_voice.tools import Backend, ToolSet

LOOKUP: dict[str, Any] = {"stub": {"kind": "fixed", "returns": {"ok": True}}, "latency": 1.0}


class Planned:
    """Answers the n-th event it is given with the n-th list of actions, then nothing."""

    def __init__(self, responses: Sequence[Sequence[Action]]) -> None:
        self._responses = iter(responses)

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        for action in next(self._responses, ()):
            yield action


def play(
    responses: Sequence[Sequence[Action]],
    steps: Sequence[dict[str, Any]] = ({"say": "Please check order five."},),
    tool: dict[str, Any] = LOOKUP,
) -> ConversationResult:
    runtime = ToolSet({"lookup": ToolSpec.model_validate(tool)}).open(
        Backend({}), seed_parts=(1, "call")
    )
    setup = CallSetup(
        conversation_id="call",
        scenario_id="s",
        run_seed=1,
        language="en",
        persona=Persona(),
        settings=EngineSettings(),
        max_turns=40,
    )
    caller = ScriptedCaller([ScriptStep.model_validate(step) for step in steps])
    engine = ConversationEngine(setup, Planned(responses), caller, runtime)
    return asyncio.run(engine.run())


GREET = [Say(text="Hello, how can I help?")]
PREPARE = PrepareToolCall(call_id="c1", tool="lookup", args={"order": 5})
SEND = SendToolCall(call_id="c1")
CHECKING = Say(text="Let me check that for you.")


def agent_turn_of(result: ConversationResult, call_id: str) -> int:
    index = call_turns(result)[call_id]
    assert result.turns[index].speaker is Speaker.AGENT
    return index


# --- where a call belongs -------------------------------------------------------------------


def test_a_call_prepared_after_speaking_belongs_to_that_agent_turn() -> None:
    result = play([GREET, [CHECKING, PREPARE, SEND]])
    assert agent_turn_of(result, "c1") == 2  # the agent's second turn, not the turn after it
    assert result.tool_calls[0].history[0].time > result.turns[2].start


def test_a_call_prepared_before_speaking_belongs_to_the_same_turn() -> None:
    result = play([GREET, [PREPARE, SEND, CHECKING]])
    assert agent_turn_of(result, "c1") == 2


def test_a_call_prepared_without_speech_belongs_to_the_turn_it_answers() -> None:
    result = play([GREET, [PREPARE, SEND], [Say(text="Found it. Goodbye!"), EndCall()]])
    assert call_turns(result)["c1"] == 1
    assert result.turns[1].speaker is Speaker.CALLER


def test_the_trace_settles_a_tie_between_two_agent_turns() -> None:
    # Latency 0: the answer comes the instant "Let me check" ends, and the next response
    # starts then, so by time alone the call could be either turn's; the trace knows.
    instant = {**LOOKUP, "latency": 0.0}
    result = play([GREET, [CHECKING, PREPARE, SEND], [Say(text="Done.")]], tool=instant)
    assert result.turns[2].end == result.turns[3].start
    assert agent_turn_of(result, "c1") == 2


def test_without_a_trace_calls_are_placed_by_time() -> None:
    result = play([GREET, [CHECKING, PREPARE, SEND], [Say(text="Found it. Goodbye!"), EndCall()]])
    untraced = result.model_copy(update={"trace": []})
    assert call_turns(untraced) == call_turns(result) == {"c1": 2}


def test_a_trace_that_does_not_match_the_turns_is_not_trusted() -> None:
    result = play([GREET, [CHECKING, PREPARE, SEND], [Say(text="Found it. Goodbye!"), EndCall()]])
    dropped = [t for t in result.turns if t.index != 0]
    renumbered = [t.model_copy(update={"index": i}) for i, t in enumerate(dropped)]
    broken = result.model_copy(update={"turns": renumbered})
    assert call_turns(broken) == {"c1": 1}  # by time: the agent turn now at index 1


# --- what of a call must agree ---------------------------------------------------------------


def parting(a: ConversationResult, b: ConversationResult) -> tuple[int | None, str | None]:
    point = divergence(a, b)
    return point.turn, point.rule


STOP: list[dict[str, Any]] = [
    {"say": "Please check order five."},
    {"barge_in": {"at": "after_tool_fired", "say": "No, stop."}},
]


def test_runs_that_differ_only_in_a_cancellation_part_where_the_call_was_prepared() -> None:
    kept = play([GREET, [CHECKING, PREPARE, SEND], [Say(text="All right.")]], STOP)
    cancelled = play(
        [GREET, [CHECKING, PREPARE, SEND], [CancelToolCall(call_id="c1"), Say(text="All right.")]],
        STOP,
    )
    assert [t.text for t in kept.turns] == [t.text for t in cancelled.turns]
    assert parting(kept, cancelled) == (2, "tool_calls")


def keyed(key: str | None) -> PrepareToolCall:
    return PREPARE.model_copy(update={"idempotency_key": key})


def test_a_key_present_in_one_run_only_parts_them() -> None:
    with_key = play([GREET, [CHECKING, keyed("k-91"), SEND]])
    without = play([GREET, [CHECKING, keyed(None), SEND]])
    assert parting(with_key, without) == (2, "tool_calls")


def test_keys_are_compared_by_role_not_by_text() -> None:
    a = play([GREET, [CHECKING, keyed("3f9c"), SEND]])
    b = play([GREET, [CHECKING, keyed("a77e"), SEND]])
    assert parting(a, b) == (None, None)


FAILS_ONCE: dict[str, Any] = {**LOOKUP, "faults": [{"kind": "http_500", "on_call": 1}]}


def retried(second_key: str) -> ConversationResult:
    """The first call fails; the agent retries in the next response with `second_key`."""
    retry = PrepareToolCall(
        call_id="c2", tool="lookup", args={"order": 5}, idempotency_key=second_key
    )
    return play(
        [
            GREET,
            [CHECKING, keyed("first"), SEND],
            [Say(text="Trying again."), retry, SendToolCall(call_id="c2")],
            [Say(text="Done. Goodbye!"), EndCall()],
        ],
        tool=FAILS_ONCE,
    )


def test_reusing_a_key_on_a_retry_is_not_the_same_as_a_fresh_key() -> None:
    same, fresh = retried("first"), retried("second")
    assert agent_turn_of(same, "c2") == 3
    assert parting(same, fresh) == (3, "tool_calls")
    assert parting(same, retried("first")) == (None, None)


def test_a_call_sent_in_one_run_and_never_sent_in_the_other() -> None:
    sent = play([GREET, [CHECKING, PREPARE, SEND]])
    held = play([GREET, [CHECKING, PREPARE]])
    assert [t.text for t in sent.turns] == [t.text for t in held.turns]
    assert parting(sent, held) == (2, "tool_calls")


def test_slots_name_the_lifecycle_of_each_call() -> None:
    result = play(
        [GREET, [CHECKING, keyed("x"), SEND], [CancelToolCall(call_id="c1"), Say(text="OK.")]],
        STOP,
    )
    (slot,) = call_slots(result)[2]
    assert (slot.tool, slot.args, slot.sent, slot.cancelled, slot.key) == (
        "lookup",
        '{"order": 5}',
        True,
        True,
        1,
    )
