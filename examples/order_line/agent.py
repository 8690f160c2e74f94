"""An example agent for Polygon: a small order line that changes quantities and dates.

It is deliberately plain rule-based Python, so a newcomer sees the whole contract in one
file: Polygon sends an event (the call started, the caller said something, a tool
answered), and the agent answers with a stream of actions (say something, prepare and
send a tool call, report a state change, hang up, transfer).

Run it:  polygon run examples/order_line/suite.yaml
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from polygon_voice.agents import AgentContext
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
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

# Not part of a date: "2026-12-20" has no order number in it.
ORDER_NUMBER = re.compile(r"(?<![\d-])(\d{4,})(?![\d-])")
QUANTITY = re.compile(r"\b(?:to|make it|quantity(?: of)?)\s+(\d{1,3})\b")
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
GOODBYE = ("bye", "that's all", "that is all", "no thanks", "no, thanks", "nothing else")
HUMAN = ("human", "person", "representative", "operator")
CALLBACK = ("call me back", "call back", "callback", "ring me back")
WHO = re.compile(r"\bwho\b")
IDENTITY = (
    "This is Sam from the order line of Polygon Shop. "
    "I can change the quantity or the delivery date of your order."
)
# What the agent asks for a missing detail: the first time, and in other words after that
# (saying the same thing twice is a loop, and a caller who did not understand needs more).
ASK = {
    "order_id": (
        "Could you tell me your order number?",
        "Sorry, I still need your order number. It is on your order confirmation.",
    ),
    "change": (
        "What would you like to change: the quantity or the delivery date?",
        "I can set a new quantity or a new delivery date. Which one do you need?",
    ),
}


class OrderLineAgent:
    """Changes the quantity or delivery date of an order, confirming what the CRM stored."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.slots: dict[str, Any] = {}
        self.version = 0  # every change of the working state gets a new version (AX-8)
        self.calls = 0
        self.retried: set[str] = set()
        self.asked = {"order_id": 0, "change": 0}
        self.sent_version = 0  # the state version of the last update sent

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Answer one event with actions."""
        if isinstance(event, CallStarted):
            yield Say(text="Hello, this is the order line. How can I help you today?")
        elif isinstance(event, CallerSaid | BargeIn):
            if event.text is None:  # background noise: no words, carry on
                return
            async for action in self.on_words(event.text):
                yield action
        elif isinstance(event, ToolResult):
            async for action in self.on_result(event):
                yield action
        elif isinstance(event, ToolError):
            async for action in self.on_error(event):
                yield action
        elif isinstance(event, Silence):
            yield Say(text="Are you still there?")

    async def on_words(self, text: str) -> AsyncIterator[Action]:
        """Fill slots from what the caller said; act once the request is complete."""
        lowered = text.lower()
        if any(word in lowered for word in HUMAN):
            yield Say(text="Of course, I am putting you through to a colleague.")
            yield Transfer(target="human")
            return
        if any(phrase in lowered for phrase in CALLBACK):
            yield Say(text="Of course, a colleague will call you back. Goodbye!")
            yield EndCall(reason="caller asked for a callback")
            return
        if any(phrase in lowered for phrase in GOODBYE):
            yield Say(text="Thank you for calling. Goodbye!")
            yield EndCall(reason="caller is done")
            return
        if WHO.search(lowered):
            yield Say(text=IDENTITY)
            return
        for action in self.capture(text):
            yield action
        if "order_id" not in self.slots:
            async for action in self.ask("order_id"):
                yield action
        elif "quantity" not in self.slots and "delivery_date" not in self.slots:
            async for action in self.ask("change"):
                yield action
        elif self.version == self.sent_version:  # nothing new: don't send the same update twice
            yield Say(text=f"I have already sent that change for order {self.slots['order_id']}.")
        else:
            async for action in self.update_order():
                yield action

    async def ask(self, detail: str) -> AsyncIterator[Action]:
        """Ask for a missing detail, in other words when asking again; give up the third time."""
        count = self.asked[detail]
        self.asked[detail] += 1
        if count < len(ASK[detail]):
            yield Say(text=ASK[detail][count])
            return
        yield Say(text="I am sorry, I cannot help without that. Please call us again. Goodbye!")
        yield EndCall(reason=f"no {detail} after asking {count} times")

    def capture(self, text: str) -> list[Action]:
        """Take order number, quantity and date from the words, versioning each change."""
        found = {
            "order_id": ORDER_NUMBER.search(text),
            "quantity": QUANTITY.search(text.lower()),
            "delivery_date": DATE.search(text),
        }
        actions: list[Action] = []
        for field, match in found.items():
            if match is None:
                continue
            value: Any = int(match.group(1)) if field == "quantity" else match.group(1)
            if self.slots.get(field) != value:
                self.slots[field] = value
                self.version += 1
                actions.append(UpdateState(field=field, value=value, version=self.version))
        return actions

    async def update_order(self) -> AsyncIterator[Action]:
        """Build the update from the current state version and send it."""
        self.calls += 1
        call_id = f"update-{self.calls}"
        args = {
            k: v for k, v in self.slots.items() if k in ("order_id", "quantity", "delivery_date")
        }
        order = self.slots["order_id"]
        if self.calls == 1:
            yield Say(text=f"One moment, I am updating order {order}.")
        else:  # details changed after an earlier attempt: acknowledge, don't repeat ourselves
            yield Say(text=f"Understood, order {order}. Let me put that through.")
        yield PrepareToolCall(
            call_id=call_id,
            tool="update_order",
            args=args,
            state_version=self.version,
            idempotency_key=f"{self.context.conversation_id}:v{self.version}",
        )
        # Before the yield: a caller who talks over the send stops this generator right there.
        self.sent_version = self.version
        yield SendToolCall(call_id=call_id)

    async def on_result(self, event: ToolResult) -> AsyncIterator[Action]:
        """Confirm what the CRM reports as stored."""
        record = event.result or {}
        if event.late:
            return  # we already told the caller about the timeout and retried
        changes = []
        if "quantity" in self.slots:
            changes.append(f"quantity {record.get('quantity')}")
        if "delivery_date" in self.slots:
            changes.append(f"delivery date {record.get('delivery_date')}")
        order = record.get("order_id", self.slots.get("order_id"))
        yield Say(text=f"Done: order {order} now has {' and '.join(changes)}. Anything else?")

    async def on_error(self, event: ToolError) -> AsyncIterator[Action]:
        """Retry once with the same idempotency key; then hand over to a person."""
        if event.error == "not_found":
            self.slots.pop("order_id", None)
            yield Say(text="I could not find that order. Could you repeat the order number?")
            return
        if event.call_id in self.retried or event.error == "invalid_arguments":
            yield Say(text="I am sorry, our system is not responding. Let me transfer you.")
            yield Transfer(target="human")
            return
        self.retried.add(event.call_id)
        retry_id = f"{event.call_id}-retry"
        self.retried.add(retry_id)
        yield Say(text="Sorry, that took too long. Let me try again.")
        yield PrepareToolCall(
            call_id=retry_id,
            tool="update_order",
            args=dict(self.slots.items()),
            state_version=self.version,
            idempotency_key=f"{self.context.conversation_id}:v{self.version}",
        )
        yield SendToolCall(call_id=retry_id)
