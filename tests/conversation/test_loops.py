"""LOOP-1/LOOP-2: overlap on normalised words, and which repeats are excused."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from polygon_voice.conversation import (
    IN_FLIGHT_REPEATS,
    Loop,
    Reply,
    find_loop,
    normalised_words,
    reply_overlap,
)
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    CallStatus,
    CancelToolCall,
    ConversationResult,
    EndCall,
    EndReason,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    SetTimer,
    Speaker,
    TimerFired,
    ToolResult,
)
from tests.conversation.conftest import RunCall, script


def test_normalisation_strips_case_punctuation_and_diacritics() -> None:
    assert normalised_words("Ćao, ŽELIM kavu!") == ["cao", "zelim", "kavu"]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("Yes.", "Yes!", 1.0),
        ("Yes.", "No.", 0.0),
        (
            "one two three four five six seven eight nine ten",
            "one two three four five six seven eight nine",
            0.9,
        ),
        ("a b c d e f g h i j", "a b c d e f g h x y", 0.8),
        ("yes yes no", "yes no no", 2 / 3),
        ("", "", 0.0),
    ],
)
def test_overlap_is_the_multiset_share_of_the_longer_reply(
    first: str, second: str, expected: float
) -> None:
    assert reply_overlap(first, second) == pytest.approx(expected)


# --- the rule: which repeats are excused (unit) ------------------------------------------

A = "Your order five five nine zero now has three items."
B = "Is there anything else I can help you with?"


def reply(text: str, cut_off: bool = False, in_flight: bool = False) -> Reply:
    return Reply(text, cut_off=cut_off, in_flight=in_flight)


def test_a_plain_repeat_is_a_loop() -> None:
    loop = find_loop([reply(A), reply(A)], 0.9)
    assert loop == Loop(overlap=1.0, replies=2)


def test_yes_and_yes_is_a_loop_and_89_percent_is_not() -> None:
    assert find_loop([reply("Yes."), reply("Yes!")], 0.9) is not None
    hundred = " ".join(f"w{i}" for i in range(100))
    eighty_nine = " ".join(f"w{i}" for i in range(89)) + " x" * 11
    ninety = " ".join(f"w{i}" for i in range(90)) + " x" * 10
    assert find_loop([reply(hundred), reply(eighty_nine)], 0.9) is None
    assert find_loop([reply(hundred), reply(ninety)], 0.9) is not None


def test_one_repeat_of_a_cut_off_reply_is_not_a_loop() -> None:
    assert find_loop([reply(A, cut_off=True), reply(A)], 0.9) is None


def test_a_cut_off_reply_said_a_third_time_is_a_loop() -> None:
    replies = [reply(A, cut_off=True), reply(A), reply(A)]
    assert find_loop(replies, 0.9) == Loop(overlap=1.0, replies=3)


def test_being_cut_off_again_does_not_buy_another_repeat() -> None:
    replies = [reply(A, cut_off=True), reply(A, cut_off=True), reply(A)]
    assert find_loop(replies, 0.9) is not None


def test_the_excuse_belongs_to_the_first_reply_of_the_run() -> None:
    # The reply heard in full is repeated; that the repeat was then cut off changes nothing.
    assert find_loop([reply(A), reply(A, cut_off=True)], 0.9) is not None
    # A cut-off reply earlier in the call does not excuse a later, separate run.
    assert find_loop([reply(A, cut_off=True), reply(B), reply(B)], 0.9) is not None


def test_fillers_while_a_call_is_awaited_are_not_a_loop_up_to_the_allowance() -> None:
    filler = "One moment please."
    waiting = [reply(filler)] + [reply(filler, in_flight=True)] * IN_FLIGHT_REPEATS
    assert find_loop(waiting, 0.9) is None
    stalled = find_loop([*waiting, reply(filler, in_flight=True)], 0.9)
    assert stalled == Loop(overlap=1.0, replies=IN_FLIGHT_REPEATS + 2)


def test_a_filler_repeated_with_nothing_in_flight_is_a_loop() -> None:
    assert find_loop([reply("One moment please."), reply("One moment please.")], 0.9) is not None


def test_the_excuses_add_up_but_stay_bounded() -> None:
    run = [reply(A, cut_off=True), reply(A)] + [reply(A, in_flight=True)] * IN_FLIGHT_REPEATS
    assert find_loop(run, 0.9) is None
    assert find_loop([*run, reply(A, in_flight=True)], 0.9) is not None


def test_only_consecutive_replies_count() -> None:
    assert find_loop([reply(A), reply(B), reply(A)], 0.9) is None
    assert find_loop([reply(A), reply(A, in_flight=True), reply(B)], 0.9) is None


def test_empty_replies_never_loop() -> None:
    assert find_loop([reply(""), reply("")], 0.9) is None
    assert find_loop([], 0.9) is None


def test_the_end_message_names_the_count_and_the_overlap() -> None:
    assert Loop(overlap=0.9, replies=3).message() == (
        "the agent said the same reply 3 times in a row; the last two overlap 90%"
    )


# --- the rule in real calls ----------------------------------------------------------------

GREETING = "Hello there, how can I help you today?"
SLOW_LOOKUP = {
    "lookup": {"stub": {"kind": "template", "returns": {"found": "{text}"}}, "latency": 8.0}
}


class Restarter:
    """Says its greeting again after each barge-in (up to `restarts` times), else answers."""

    def __init__(self, restarts: int) -> None:
        self.restarts = restarts

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text=GREETING)
        elif self.restarts > 0:
            self.restarts -= 1
            yield Say(text=GREETING)
        elif isinstance(event, CallerSaid):
            yield Say(text=f"Noted: {event.text}. Goodbye!")
            yield EndCall()


async def test_repeating_a_line_the_caller_cut_off_is_not_a_loop(run_call: RunCall) -> None:
    steps = script({"barge_in": {"at": "mid_speech", "say": "Sorry, what?"}}, {"say": "My order"})
    result = await run_call(Restarter(restarts=1), steps)
    agent_turns = [t for t in result.turns if t.speaker is Speaker.AGENT]
    assert [t.text for t in agent_turns[:2]] == [GREETING, GREETING]
    assert agent_turns[0].interrupted
    assert result.end.reason is EndReason.AGENT_HANGUP


async def test_a_cut_off_line_said_twice_more_is_a_loop(run_call: RunCall) -> None:
    steps = script({"barge_in": {"at": "mid_speech", "say": "Sorry, what?"}}, {"say": "Hello?"})
    result = await run_call(Restarter(restarts=2), steps)
    assert result.end.reason is EndReason.LOOP_DETECTED
    assert "3 times in a row" in result.end.message
    assert [t.text for t in result.turns if t.speaker is Speaker.AGENT] == [GREETING] * 3


class Waiter:
    """Fills every wait with the same words, every `every` seconds, until a result comes.

    It sends a slow lookup for the caller's request and, while `lookups` last, another one
    after each result: `lookups` > 1 is an agent stalling with tool calls. With `send` False
    it sends nothing and fills the silence all the same.
    """

    FILLER = "One moment please."

    def __init__(self, every: float, lookups: int = 1, send: bool = True) -> None:
        self.every, self.lookups, self.send = every, lookups, send
        self.sent = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, what can I look up?")
            return
        if isinstance(event, ToolResult) and self.sent >= self.lookups:
            yield Say(text="Found it, your order is on its way. Goodbye!")
            yield EndCall()
            return
        if self.send and not isinstance(event, TimerFired):
            self.sent += 1
            yield PrepareToolCall(call_id=f"c{self.sent}", tool="lookup", args={"text": "x"})
            yield SendToolCall(call_id=f"c{self.sent}")
        yield Say(text=self.FILLER)
        yield SetTimer(name=f"filler-{self.sent}", seconds=self.every)


def fillers(result: ConversationResult) -> int:
    return sum(t.text == Waiter.FILLER for t in result.turns)


async def test_fillers_while_a_call_is_in_flight_are_not_a_loop(run_call: RunCall) -> None:
    # Three words take 1.2 s: fillers at 0, 2.2, 4.4 and 6.6 s of the 8 s wait.
    result = await run_call(Waiter(every=1.0), script({"say": "My order"}), tools=SLOW_LOOKUP)
    assert result.end.reason is EndReason.AGENT_HANGUP
    assert fillers(result) == 4  # three repeats, all within IN_FLIGHT_REPEATS
    assert result.tool_calls[0].status is CallStatus.COMPLETED


async def test_the_same_filler_with_nothing_in_flight_is_a_loop(run_call: RunCall) -> None:
    steps = script({"say": "My order"}, {"silence": True}, {"silence": True})
    result = await run_call(Waiter(every=2.0, send=False), steps)
    assert result.end.reason is EndReason.LOOP_DETECTED
    assert fillers(result) == 2


async def test_an_agent_cannot_stall_forever_with_calls_in_flight(run_call: RunCall) -> None:
    agent = Waiter(every=2.0, lookups=100)
    result = await run_call(agent, script({"say": "My order"}), tools=SLOW_LOOKUP, max_turns=200)
    assert result.end.reason is EndReason.LOOP_DETECTED
    assert fillers(result) == IN_FLIGHT_REPEATS + 2


class Corrected:
    """Says "One moment." with each lookup; on a barge-in cancels the call and starts over."""

    def __init__(self) -> None:
        self.calls = 0

    def lookup(self) -> list[Action]:
        self.calls += 1
        call_id = f"c{self.calls}"
        send = SendToolCall(call_id=call_id)
        return [PrepareToolCall(call_id=call_id, tool="lookup", args={"text": "x"}), send]

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, what can I look up?")
        elif isinstance(event, CallerSaid):
            yield Say(text="One moment.")
            for action in self.lookup():
                yield action
        elif isinstance(event, BargeIn):
            yield CancelToolCall(call_id=f"c{self.calls}")
            yield Say(text="One moment.")
            for action in self.lookup():
                yield action
        elif isinstance(event, ToolResult):
            yield Say(text="Found it. Goodbye!")
            yield EndCall()


async def test_a_filler_after_cancelling_for_a_correction_is_not_a_loop(
    run_call: RunCall,
) -> None:
    steps = script(
        {"say": "Order five"}, {"barge_in": {"at": "after_tool_fired", "say": "No, six."}}
    )
    result = await run_call(Corrected(), steps, tools=SLOW_LOOKUP)
    assert result.end.reason is EndReason.AGENT_HANGUP
    assert [t.text for t in result.turns if t.speaker is Speaker.AGENT].count("One moment.") == 2
    assert result.tool_calls[0].status is CallStatus.CANCELLED


class Rechecker:
    """After every answer says the same line, then sends the next lookup: a real loop."""

    LINE = "Let me just double-check that, one moment."

    def __init__(self) -> None:
        self.calls = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, what can I look up?")
            return
        yield Say(text=self.LINE)
        self.calls += 1
        yield PrepareToolCall(call_id=f"c{self.calls}", tool="lookup", args={"text": "x"})
        yield SendToolCall(call_id=f"c{self.calls}")


async def test_the_same_line_before_every_call_is_a_loop_once_the_allowance_is_spent(
    run_call: RunCall,
) -> None:
    # Each line announces the call it sends, so it fills a wait; but not forever.
    result = await run_call(Rechecker(), script({"say": "My order"}), tools=SLOW_LOOKUP)
    assert result.end.reason is EndReason.LOOP_DETECTED
    assert [t.text for t in result.turns].count(Rechecker.LINE) == IN_FLIGHT_REPEATS + 2


class OneMomentPerCall:
    """Says "One moment." before each of its calls: a lookup, then the update it leads to."""

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, what can I do for you?")
        elif isinstance(event, CallerSaid):
            yield Say(text="One moment.")
            yield PrepareToolCall(call_id="read", tool="lookup", args={"text": "x"})
            yield SendToolCall(call_id="read")
        elif isinstance(event, ToolResult) and event.call_id == "read":
            yield Say(text="One moment.")
            yield PrepareToolCall(call_id="write", tool="lookup", args={"text": "y"})
            yield SendToolCall(call_id="write")
        elif isinstance(event, ToolResult):
            yield Say(text="Done, your order is changed. Goodbye!")
            yield EndCall()


async def test_one_moment_before_each_call_is_not_a_loop(run_call: RunCall) -> None:
    result = await run_call(OneMomentPerCall(), script({"say": "Change it"}), tools=SLOW_LOOKUP)
    assert result.end.reason is EndReason.AGENT_HANGUP
    assert [t.text for t in result.turns].count("One moment.") == 2


def test_one_repeat_after_the_caller_asked_for_it_is_not_a_loop() -> None:
    asked = [reply(GREETING), Reply(GREETING, asked_again=True)]
    assert find_loop(asked, 0.9) is None
    assert find_loop([*asked, Reply(GREETING, asked_again=True)], 0.9) is not None
    assert find_loop([reply(GREETING), reply(GREETING)], 0.9) is not None


class Repeater:
    """Answers every caller turn with the same line, and hangs up on "bye"."""

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallerSaid) and "bye" in event.text.lower():
            yield EndCall()
        elif isinstance(event, CallerSaid):
            yield Say(text="Your order 5590 will arrive on Friday.")


@pytest.mark.parametrize(
    "asked",
    ["Sorry, could you repeat that?", "Wie bitte?", "Ponovite, molim.", "Повторите, пожалуйста."],
)
async def test_saying_it_again_when_the_caller_asks_is_not_a_loop(
    run_call: RunCall, asked: str
) -> None:
    steps = script({"say": "When does my order come?"}, {"say": asked}, {"say": "Thanks, bye."})
    result = await run_call(Repeater(), steps)
    assert result.end.reason is EndReason.AGENT_HANGUP


async def test_the_same_line_to_a_new_question_is_still_a_loop(run_call: RunCall) -> None:
    steps = script({"say": "When does my order come?"}, {"say": "Can I change the address?"})
    result = await run_call(Repeater(), steps)
    assert result.end.reason is EndReason.LOOP_DETECTED
