"""The loop rule on labelled calls it was not written against (held out), in four languages.

Each case is a whole call: an agent that answers each kind of event with its next planned
response, a scripted caller, a slow lookup tool. The label says what a person would call
it; the engine's end reason must agree.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from polygon_voice.model import (
    Action,
    EndCall,
    EndReason,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    SetTimer,
)
from tests.conversation.conftest import RunCall, script

LOOKUP = {"lookup": {"stub": {"kind": "fixed", "returns": {"ok": True}}, "latency": 7.0}}


class Planned:
    """Answers the n-th event of a kind with the n-th response planned for that kind; the
    last response of a kind is used again once the plan runs out. Call ids are numbered."""

    def __init__(self, plan: dict[str, Sequence[Sequence[Action | str]]]) -> None:
        self._plan = plan
        self._seen: dict[str, int] = {}
        self._calls = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        responses = self._plan.get(event.kind, ())
        if not responses:
            return
        n = self._seen.get(event.kind, 0)
        self._seen[event.kind] = n + 1
        for step in responses[min(n, len(responses) - 1)]:
            for action in self._expand(step):
                yield action

    def _expand(self, step: Action | str) -> list[Action]:
        if step != "CALL":
            return [step] if not isinstance(step, str) else [Say(text=step)]
        self._calls += 1
        call_id = f"c{self._calls}"
        prepare = PrepareToolCall(call_id=call_id, tool="lookup", args={"n": self._calls})
        return [prepare, SendToolCall(call_id=call_id)]


@dataclass(frozen=True)
class Case:
    name: str
    loop: bool
    plan: dict[str, Sequence[Sequence[Action | str]]]
    steps: list[dict[str, Any]] = field(default_factory=list)


BYE = EndCall()
TICK = SetTimer(name="tick", seconds=1.5)
CUT = {"barge_in": {"at": "mid_speech", "say": "Moment, bitte"}}

HELD_OUT = [
    Case(
        "de: the greeting, cut off, said once more",
        False,
        {
            "call_started": [["Guten Tag, hier ist der Bestellservice, wie kann ich helfen?"]],
            "barge_in": [["Guten Tag, hier ist der Bestellservice, wie kann ich helfen?"]],
            "caller_said": [["Gern, das erledige ich. Auf Wiederhören!", BYE]],
        },
        [CUT, {"say": "Ich möchte meine Bestellung ändern."}],
    ),
    Case(
        "ru: the same filler on a timer while a 7 s lookup runs",
        False,
        {
            "call_started": [["Здравствуйте, чем могу помочь?"]],
            "caller_said": [["CALL", "Одну минуту, пожалуйста.", TICK]],
            "timer": [["Одну минуту, пожалуйста.", TICK]],
            "tool_result": [["Нашла ваш заказ, всё в порядке. До свидания!", BYE]],
        },
        [{"say": "Где мой заказ?"}],
    ),
    Case(
        "hr: 'Samo trenutak.' after each of three chained calls",
        False,
        {
            "call_started": [["Dobar dan, izvolite?"]],
            "caller_said": [["CALL", "Samo trenutak."]],
            "tool_result": [
                ["CALL", "Samo trenutak."],
                ["CALL", "Samo trenutak."],
                ["Gotovo, narudžba je promijenjena. Doviđenja!", BYE],
            ],
        },
        [{"say": "Promijenite narudžbu, molim."}],
    ),
    Case(
        "en: a confirmation cut off and said once more",
        False,
        {
            "call_started": [["Hello, order line, how can I help?"]],
            "caller_said": [
                ["Your order 5590 now has three items, and it ships tomorrow."],
                ["Thank you for calling, goodbye!", BYE],
            ],
            "barge_in": [["Your order 5590 now has three items, and it ships tomorrow."]],
        },
        [
            {"say": "Make it three items."},
            {"barge_in": {"at": "mid_speech", "say": "Sorry?"}},
            {"say": "Great, thanks."},
        ],
    ),
    Case(
        "en: the same short answer with another turn between",
        False,
        {
            "call_started": [["Hi, what can I do for you?"]],
            "caller_said": [["Okay."], ["Which order do you mean?"], ["Okay."], ["Bye!", BYE]],
        },
        [{"say": "a"}, {"say": "b"}, {"say": "c"}, {"say": "d"}],
    ),
    Case(
        "en: cut off, a short reply to the barge-in, then the line again",
        False,
        {
            "call_started": [["Welcome to the order line, how may I help you today?"]],
            "barge_in": [["Sure."]],
            "caller_said": [
                ["Welcome to the order line, how may I help you today?"],
                ["Done, goodbye!", BYE],
            ],
        },
        [CUT, {"say": "Go on."}, {"say": "Change my order."}],
    ),
    Case(
        "de: 'Wie bitte?' to everything the caller says",
        True,
        {"call_started": [["Hallo?"]], "caller_said": [["Wie bitte?"]]},
        [{"say": "Meine Bestellung."}, {"say": "Die Nummer ist 5590."}, {"say": "Hallo?"}],
    ),
    Case(
        "en: a cut-off line said twice more",
        True,
        {
            "call_started": [["Please tell me your order number and what to change."]],
            "barge_in": [["Please tell me your order number and what to change."]],
            "caller_said": [["Please tell me your order number and what to change."]],
        },
        [CUT, {"say": "It is 5590."}, {"say": "Three items."}],
    ),
    Case(
        "ru: the same confirmation twice, nothing cut off, nothing running",
        True,
        {
            "call_started": [["Здравствуйте!"]],
            "caller_said": [["Ваш заказ 5590 изменён, теперь три товара."]],
        },
        [{"say": "Три товара, пожалуйста."}, {"say": "Спасибо."}],
    ),
    Case(
        "en: a timer filler with no call sent, the caller silent",
        True,
        {
            "call_started": [["Hello, how can I help?"]],
            "caller_said": [["One moment please.", TICK]],
            "timer": [["One moment please.", TICK]],
        },
        [{"say": "My order."}, {"silence": True}, {"silence": True}, {"silence": True}],
    ),
    Case(
        "hr: the same filler with every call, calls chained without end",
        True,
        {
            "call_started": [["Dobar dan!"]],
            "caller_said": [["CALL", "Samo trenutak, provjeravam."]],
            "tool_result": [["CALL", "Samo trenutak, provjeravam."]],
        },
        [{"say": "Gdje je moja narudžba?"}],
    ),
    Case(
        "en: 'Yes.' then 'Yes!'",
        True,
        {"call_started": [["Hello?"]], "caller_said": [["Yes."], ["Yes!"]]},
        [{"say": "Is this the order line?"}, {"say": "Can you change an order?"}],
    ),
]


@pytest.mark.parametrize("case", HELD_OUT, ids=[case.name for case in HELD_OUT])
async def test_held_out_calls_end_as_labelled(run_call: RunCall, case: Case) -> None:
    result = await run_call(Planned(case.plan), script(*case.steps), tools=LOOKUP, max_turns=60)
    assert (result.end.reason is EndReason.LOOP_DETECTED) is case.loop, result.end


def test_the_held_out_set_has_both_labels() -> None:
    labels = [case.loop for case in HELD_OUT]
    assert labels.count(True) >= 5
    assert labels.count(False) >= 5
