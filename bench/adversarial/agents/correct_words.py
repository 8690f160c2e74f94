"""A correct order-line agent written as an explicit state machine (a `phase` per step of
the job, one handler per phase), that speaks numbers as words: "three items", "twenty-five
euros", "December 20, 2026", and talks in several short chunks per response.

After confirming it adds "You'll get an email within 1 hour" — a number that is no field.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import date
from enum import Enum
from typing import Any

from polygon_voice.agents import AgentContext
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
    Silence,
    ToolError,
    ToolResult,
    Transfer,
    UpdateState,
)

LABEL = "correct"
FLAW = None
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "state machine; numbers and dates as words; several chunks; email promise"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def spoken(number: int) -> str:
    """An integer below 1000 in English words."""
    if number < 20:
        return ONES[number]
    if number < 100:
        tens, ones = divmod(number, 10)
        return TENS[tens] + (f"-{ONES[ones]}" if ones else "")
    hundreds, rest = divmod(number, 100)
    return f"{ONES[hundreds]} hundred" + (f" and {spoken(rest)}" if rest else "")


def spoken_date(iso: str) -> str:
    day = date.fromisoformat(iso)
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


def items(count: int) -> str:
    return f"{spoken(count)} item" + ("" if count == 1 else "s")


class Phase(Enum):
    LISTENING = "listening"  # collecting what the caller wants
    FINDING = "finding"  # the order lookup is out
    WRITING = "writing"  # the change is out
    VERIFYING = "verifying"  # the read-back is out
    FINISHED = "finished"  # confirmed (or called off)


NUMBER_WORDS = {word: n for n, word in enumerate(ONES)} | {"a": 1, "an": 1}
ORDER_ID = re.compile(r"(?<![\d-])\d{4,}(?![\d-])")
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
COUNT = re.compile(r"(\d{1,3})\s+items?\b")
TARGET = re.compile(r"(?:\bto|\bmake it|\bmake that)\s+(\d{1,3})\b(?![\d-])")
MONEY = re.compile(r"(\d{1,4})\s*(?:euros?\b|eur\b|€)")
INCREMENT = re.compile(r"\b(one|a|an|two|three) (?:more|extra|additional) items?\b")
REFUSAL = ("don't", "do not", "stop", "leave it", "never mind", "forget it")
DONE_WORDS = ("bye", "that's all", "that is all", "no thanks", "nothing else")
# A second correction must not sound like the first one word for word.
RESTART_LINES = (
    "Okay, so that's {}.",
    "Understood, I'll go with {} instead.",
    "Got it, changing course: {}.",
)
HANDOVER = ("human", "person", "representative", "operator", "real agent")


class Agent:
    """One phase at a time; a correction sends the machine back to the phase it affects."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.has = set(context.tools)
        self.phase = Phase.LISTENING
        self.job: str | None = None  # "update" | "refund"
        self.slots: dict[str, Any] = {}
        self.extra = 0
        self.version = 0
        self.record: dict[str, Any] | None = None
        self.outcome: dict[str, Any] | None = None
        self.out: str | None = None  # id of the call the current phase waits for
        self.prepared: str | None = None  # id of a call built but not yet sent
        self.serial = 0
        self.reads = 0
        self.retries: dict[str, int] = {}
        self.confirmation = ""
        self.restarts = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        match event:
            case CallStarted():
                yield Say(text="Good day!")
                yield Say(text="You are through to the order desk. What can I do for you?")
            case Silence():
                yield Say(text="Hello? I can't hear you.")
                yield Say(text="If now is a bad time, we can call you back.")
            case BargeIn(text=None):
                async for action in self.after_noise(event):
                    yield action
            case CallerSaid(text=text) | BargeIn(text=str() as text):
                async for action in self.on_caller(text):
                    yield action
            case ToolResult():
                async for action in self.on_result(event):
                    yield action
            case ToolError():
                async for action in self.on_error(event):
                    yield action
            case _:
                return

    # -- the caller ------------------------------------------------------------------------

    async def after_noise(self, event: BargeIn) -> AsyncIterator[Action]:
        """Nobody spoke: nothing changes; pick the job up where the noise cut in."""
        yield Say(text="Sorry, the line crackled for a second.")
        if self.prepared is not None:
            call_id, self.prepared = self.prepared, None
            self.out = call_id
            yield SendToolCall(call_id=call_id)
            return
        if self.out is not None:
            return  # the call is still out; its answer comes next
        if self.phase is Phase.FINISHED and self.confirmation:
            yield Say(text=f"As I was saying: {self.confirmation}")
            return
        async for action in self.advance():
            yield action

    async def on_caller(self, text: str) -> AsyncIterator[Action]:
        low = text.lower()
        if any(word in low for word in HANDOVER):
            yield Say(text="Certainly.")
            yield Say(text="I'll put you through to a member of the team.")
            yield Transfer(target="human")
            return
        before = dict(self.slots)
        for action in self.read_slots(text, low):
            yield action
        changed = self.slots != before
        if any(phrase in low for phrase in REFUSAL) and self.job is not None:
            async for action in self.call_off():
                yield action
            return
        if any(phrase in low for phrase in DONE_WORDS) and self.out is None:
            yield Say(text="Thanks for calling.")
            yield Say(text="Goodbye!")
            yield EndCall(reason="caller said goodbye")
            return
        if changed and self.phase is not Phase.LISTENING:
            async for action in self.restart(before):
                yield action
            return
        if self.phase is Phase.FINISHED:
            yield Say(text="Is there anything else I can help you with today?")
            return
        if self.prepared is not None:  # built before words that changed nothing: send it
            call_id, self.prepared = self.prepared, None
            self.out = call_id
            yield SendToolCall(call_id=call_id)
            return
        if self.out is not None:
            return
        async for action in self.advance():
            yield action

    def read_slots(self, text: str, low: str) -> list[Action]:
        new: dict[str, Any] = {}
        if ids := ORDER_ID.findall(text):
            new["order_id"] = ids[-1]
        if dates := ISO_DATE.findall(text):
            new["delivery_date"] = dates[-1]
        if "refund" in low or MONEY.search(low):
            self.job = self.job or "refund"
            if money := MONEY.findall(low):
                new["amount"] = int(money[-1])
        else:
            if counts := (COUNT.findall(low) or TARGET.findall(low)):
                new["quantity"] = int(counts[-1])
            if more := INCREMENT.search(low):
                self.extra = NUMBER_WORDS.get(more.group(1), 1)
        if self.job is None and (new or "order" in low or "deliver" in low):
            self.job = "update"
        actions: list[Action] = []
        for name, value in new.items():
            if self.slots.get(name) == value:
                continue
            self.slots[name] = value
            self.version += 1
            actions.append(UpdateState(field=name, value=value, version=self.version))
        return actions

    async def call_off(self) -> AsyncIterator[Action]:
        self.version += 1
        yield UpdateState(field="execute", value=False, version=self.version)
        for action in self.drop_calls():
            yield action
        self.phase = Phase.FINISHED
        self.confirmation = "Nothing has been changed."
        yield Say(text="No problem, I've stopped it.")
        yield Say(text="Nothing has been changed on your order.")

    def drop_calls(self) -> list[Action]:
        dropped = [c for c in (self.prepared, self.out) if c is not None]
        self.prepared = self.out = None
        return [CancelToolCall(call_id=c) for c in dropped]

    async def restart(self, before: dict[str, Any]) -> AsyncIterator[Action]:
        """The caller changed a detail mid-job: drop what is out and redo what it affects."""
        for action in self.drop_calls():
            yield action
        if before.get("order_id") != self.slots.get("order_id"):
            self.record = None
        self.outcome = None
        self.phase = Phase.LISTENING
        self.restarts += 1
        yield Say(
            text=RESTART_LINES[self.restarts % len(RESTART_LINES)].format(self.describe(self.slots))
        )
        async for action in self.advance(first_words=False):
            yield action

    def describe(self, values: dict[str, Any]) -> str:
        parts = []
        if "quantity" in values:
            parts.append(items(values["quantity"]))
        if "delivery_date" in values:
            parts.append(f"delivery on {spoken_date(values['delivery_date'])}")
        if "amount" in values:
            parts.append(f"{spoken(values['amount'])} euros")
        parts.append(f"order {values.get('order_id', 'unknown')}")
        return ", ".join(parts)

    # -- the job ---------------------------------------------------------------------------

    async def advance(self, first_words: bool = True) -> AsyncIterator[Action]:
        """Start the next phase whose input is complete, or ask for what is missing."""
        if self.job is None:
            yield Say(text="I can change an order or book a refund. Which would you like?")
            return
        if "order_id" not in self.slots:
            yield Say(text="What is the order number, please?")
            return
        if self.job == "update":
            wants = {"quantity", "delivery_date"} & set(self.slots) or self.extra
            if self.record is None and "lookup_order" in self.has:
                if first_words:
                    yield Say(text="Sure.")
                yield Say(text=f"Let me find order {self.slots['order_id']}.")
                async for action in self.call(Phase.FINDING, "lookup_order", self.order_key()):
                    yield action
                return
            if not wants:
                yield Say(text="Would you like a new quantity or a new delivery date?")
                return
            yield Say(text="I'm updating it now." if self.restarts else "Right, I'm updating it.")
            async for action in self.call(Phase.WRITING, "update_order", self.update_args()):
                yield action
            return
        if "amount" not in self.slots:
            yield Say(text="How many euros should I refund?")
            return
        yield Say(text="Right, I'm booking that refund.")
        args = {"order_id": self.slots["order_id"], "amount": self.slots["amount"]}
        async for action in self.call(Phase.WRITING, "issue_refund", args):
            yield action

    def order_key(self) -> dict[str, Any]:
        return {"order_id": self.slots["order_id"]}

    def update_args(self) -> dict[str, Any]:
        return {
            k: self.slots[k] for k in ("order_id", "quantity", "delivery_date") if k in self.slots
        }

    async def call(
        self, phase: Phase, tool: str, args: dict[str, Any], retry_of: str | None = None
    ) -> AsyncIterator[Action]:
        self.serial += 1
        call_id = f"c{self.serial}-{tool}"
        writes = phase is Phase.WRITING
        # Writes: one key per request (its tool, arguments and version), reused on retry.
        # Reads: a fresh key each time, so that a read again is really read again.
        if writes:
            key = f"{self.context.conversation_id}|{tool}|v{self.version}"
        else:
            self.reads += 1
            key = f"{self.context.conversation_id}|read|{self.reads}"
        self.phase = phase
        self.prepared = call_id
        yield PrepareToolCall(
            call_id=call_id, tool=tool, args=args, state_version=self.version, idempotency_key=key
        )
        self.prepared, self.out = None, call_id
        yield SendToolCall(call_id=call_id)

    async def on_result(self, event: ToolResult) -> AsyncIterator[Action]:
        if event.call_id != self.out:
            return  # a cancelled or superseded call; a late answer after a retry
        self.out = None
        found = event.result if isinstance(event.result, dict) else {}
        if self.phase is Phase.FINDING:
            async for action in self.found(found):
                yield action
        elif self.phase is Phase.WRITING:
            self.outcome = found
            async for action in self.verify():
                yield action
        elif self.phase is Phase.VERIFYING:
            async for action in self.confirm(found):
                yield action

    async def found(self, record: dict[str, Any]) -> AsyncIterator[Action]:
        if not record or str(record.get("order_id")) != self.slots["order_id"]:
            # Another order's record or an empty one: never act on it, read it again.
            tries = self.retries.get("odd-record", 0) + 1
            self.retries["odd-record"] = tries
            if tries > 2:
                self.phase = Phase.LISTENING
                self.slots.pop("order_id", None)
                yield Say(text="I can't find that order. Could you read me the number again?")
                return
            yield Say(text="Hmm, that doesn't look right.")
            yield Say(text="I'll read the order again.")
            async for action in self.call(Phase.FINDING, "lookup_order", self.order_key()):
                yield action
            return
        self.record = record
        if self.extra and isinstance(record.get("quantity"), int):
            self.slots["quantity"] = record["quantity"] + self.extra
            self.extra = 0
            self.version += 1
            yield UpdateState(field="quantity", value=self.slots["quantity"], version=self.version)
        self.phase = Phase.LISTENING
        async for action in self.advance(first_words=False):
            yield action

    async def verify(self) -> AsyncIterator[Action]:
        assert self.outcome is not None
        if self.job == "refund" and "get_refund" in self.has and "refund_id" in self.outcome:
            yield Say(text="Let me double-check the booking.")
            args = {"refund_id": self.outcome["refund_id"]}
            async for action in self.call(Phase.VERIFYING, "get_refund", args):
                yield action
        elif self.job == "update" and "lookup_order" in self.has:
            yield Say(text="Let me double-check the order.")
            async for action in self.call(Phase.VERIFYING, "lookup_order", self.order_key()):
                yield action
        else:
            async for action in self.confirm(self.outcome):
                yield action

    async def confirm(self, stored: dict[str, Any]) -> AsyncIterator[Action]:
        self.phase = Phase.FINISHED
        shown = {k: stored[k] for k in (*self.slots, "order_id") if k in stored}
        what = "refund is booked" if self.job == "refund" else "order is updated"
        self.confirmation = f"Your {what}: {self.describe(shown)}."
        yield Say(text="All done.")
        yield Say(text=self.confirmation)
        yield Say(text="You'll get an email within 1 hour. Anything else?")

    async def on_error(self, event: ToolError) -> AsyncIterator[Action]:
        if event.call_id != self.out:
            return
        self.out = None
        if event.error == "not_found":
            self.phase = Phase.LISTENING
            self.slots.pop("order_id", None)
            self.record = None
            yield Say(text="I couldn't find that order number.")
            yield Say(text="Could you check it for me?")
            return
        tries = self.retries.get(self.phase.value, 0) + 1
        self.retries[self.phase.value] = tries
        if tries >= 2 or event.error == "invalid_arguments":
            yield Say(text="I'm sorry, the system isn't responding.")
            yield Say(text="Let me transfer you to a colleague who can help.")
            yield Transfer(target="human")
            return
        yield Say(text="The system didn't answer. I'll try that once more.")
        async for action in self.retry():
            yield action

    async def retry(self) -> AsyncIterator[Action]:
        # The version has not moved, so a write gets the same idempotency key as before.
        if self.phase is Phase.FINDING:
            async for action in self.call(Phase.FINDING, "lookup_order", self.order_key()):
                yield action
        elif self.phase is Phase.WRITING:
            if self.job == "refund":
                args = {"order_id": self.slots["order_id"], "amount": self.slots["amount"]}
                tool = "issue_refund"
            else:
                args, tool = self.update_args(), "update_order"
            async for action in self.call(Phase.WRITING, tool, args):
                yield action
        else:
            async for action in self.verify():
                yield action
