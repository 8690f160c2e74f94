"""A correct order-line agent: every event updates one task record, then a planner derives
the next step from it (look up, write, read back, confirm) — nothing is remembered as
"what I was doing", so a barge-in that cut the response off at any point is harmless.

Style: one `Say` per response, digits for every number, ISO dates.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
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
DESCRIPTION = "planner over one task record; one Say per response; digits and ISO dates"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

ORDER = re.compile(r"(?<![\d-])(\d{4,})(?![\d-])")
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
ITEMS = re.compile(r"\b(\d{1,3})\s+items?\b")
SET_TO = re.compile(r"\b(?:to|make it|make that)\s+(\d{1,3})\b(?![\d-])")
EUROS = re.compile(r"\b(\d{1,4})\s*(?:euros?|eur|€)")
CALL_OFF = re.compile(r"\b(?:don'?t|do not|stop|leave it|cancel that|never mind)\b")
ONE_MORE = re.compile(r"\b(?:one more|another) item\b")
FAREWELL = re.compile(r"\b(?:bye|goodbye|that'?s all|that is all|no thanks|nothing else)\b")
PERSON = re.compile(r"\b(?:human|person|representative|operator|colleague)\b")
MAX_ATTEMPTS = 2  # a step that fails twice goes to a person


@dataclass
class Call:
    """A tool call this agent prepared, and what became of it."""

    call_id: str
    step: str  # lookup | write | readback
    tool: str
    args: dict[str, Any]
    version: int
    key: str | None
    sent: bool = False
    done: bool = False


@dataclass
class Task:
    """What the caller wants and how far it got."""

    kind: str | None = None  # "update" or "refund"
    values: dict[str, Any] = field(default_factory=dict)
    add_items: int = 0
    called_off: bool = False
    found: dict[str, Any] | None = None  # the verified record
    written: dict[str, Any] | None = None  # the write's answer
    checked: dict[str, Any] | None = None  # the read-back
    confirmed: bool = False
    attempts: dict[str, int] = field(default_factory=dict)


class Agent:
    """Plans from the task record after every event."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.task = Task()
        self.version = 0
        self.calls: dict[str, Call] = {}
        self.counter = 0
        self.farewell_said = False
        self.last_said = ""

    # -- events ----------------------------------------------------------------------------

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, order line, how can I help you?")
            return
        if isinstance(event, Silence):
            yield Say(text="Are you still there? I can also arrange a call back later.")
            return
        if isinstance(event, BargeIn) and event.text is None:
            # Noise, not a caller: nothing changed, carry on where the cut left us.
            if self.last_said == "confirmation" and event.point == "mid_speech":
                self.task.confirmed = False  # the confirmation was cut: say it again
            async for action in self.plan(prefix="Sorry, there was noise on the line."):
                yield action
            return
        if isinstance(event, CallerSaid | BargeIn):
            assert event.text is not None
            async for action in self.heard(event.text):
                yield action
            return
        if isinstance(event, ToolResult):
            async for action in self.answered(event):
                yield action
            return
        if isinstance(event, ToolError):
            async for action in self.failed(event):
                yield action

    async def heard(self, text: str) -> AsyncIterator[Action]:
        lowered = text.lower()
        if PERSON.search(lowered):
            yield Say(text="Of course, I am connecting you with a colleague now.")
            yield Transfer(target="human")
            return
        had_values = bool(self.task.values)
        changes = self.take_values(text, lowered)
        for action in changes:
            yield action
        if CALL_OFF.search(lowered) and self.task.kind is not None and not self.task.called_off:
            self.task.called_off = True
            self.version += 1
            yield UpdateState(field="execute", value=False, version=self.version)
        if FAREWELL.search(lowered) and not self.open_calls():
            self.farewell_said = True
            yield Say(text="Thank you for calling, goodbye!")
            yield EndCall(reason="caller is done")
            return
        async for action in self.plan(prefix=self.acknowledge(changes) if had_values else ""):
            yield action

    def acknowledge(self, changes: list[Action]) -> str:
        """Say back what changed, so the next line is never a word-for-word repeat."""
        said = [c for c in changes if isinstance(c, UpdateState) and c.field != "execute"]
        if not said:
            return ""
        spoken = {"quantity": "{} items", "delivery_date": "delivery on {}", "amount": "{} euros"}
        parts = [spoken.get(c.field, "order {}").format(c.value) for c in said]
        return f"Understood, {' and '.join(parts)}."

    def take_values(self, text: str, lowered: str) -> list[Action]:
        """The caller's values; the last one of each kind wins (a correction in passing)."""
        found: dict[str, Any] = {}
        if orders := ORDER.findall(text):
            found["order_id"] = orders[-1]
        if dates := DATE.findall(text):
            found["delivery_date"] = dates[-1]
        if "refund" in lowered or EUROS.search(lowered):
            if self.task.kind is None:
                self.task.kind = "refund"
            if euros := EUROS.findall(lowered):
                found["amount"] = int(euros[-1])
        else:
            quantities = ITEMS.findall(lowered) or SET_TO.findall(lowered)
            if quantities:
                found["quantity"] = int(quantities[-1])
            if ONE_MORE.search(lowered):
                self.task.add_items = 1
        if self.task.kind is None and (found or "order" in lowered or "deliver" in lowered):
            self.task.kind = "update"
        actions: list[Action] = []
        for name, value in found.items():
            if self.task.values.get(name) != value:
                self.task.values[name] = value
                self.version += 1
                actions.append(UpdateState(field=name, value=value, version=self.version))
                self.forget_progress(name)
        return actions

    def forget_progress(self, changed: str) -> None:
        # A new order number needs a new lookup; any change needs a new write and read-back.
        if changed == "order_id":
            self.task.found = None
        self.task.written = None
        self.task.checked = None
        self.task.confirmed = False

    async def answered(self, event: ToolResult) -> AsyncIterator[Action]:
        call = self.calls.get(event.call_id)
        if call is None or call.done or event.late:
            return  # a late answer of a call we already retried or cancelled
        call.done = True
        if call.version != self.version and call.step != "readback":
            async for action in self.plan():
                yield action
            return
        record = event.result if isinstance(event.result, dict) else None
        if call.step == "lookup":
            if not self.is_record_of(record, call.args):
                async for action in self.suspicious(call):
                    yield action
                return
            self.task.found = record
            async for action in self.apply_increment(record or {}):
                yield action
        elif call.step == "write":
            self.task.written = record or {}
        elif call.step == "readback":
            self.task.checked = record or {}
        async for action in self.plan():
            yield action

    def is_record_of(self, record: dict[str, Any] | None, args: dict[str, Any]) -> bool:
        if not record:
            return False
        return all(str(record.get(k)) == str(v) for k, v in args.items())

    async def suspicious(self, call: Call) -> AsyncIterator[Action]:
        """A lookup answered with another or an empty record: read it again."""
        tries = self.task.attempts.get("lookup-suspicious", 0) + 1
        self.task.attempts["lookup-suspicious"] = tries
        if tries > MAX_ATTEMPTS:
            self.task.values.pop("order_id", None)
            yield Say(text="I cannot find that order. Could you give me the order number again?")
            return
        async for action in self.send(
            "lookup", call.tool, call.args, "Let me check that record again."
        ):
            yield action

    async def apply_increment(self, record: dict[str, Any]) -> AsyncIterator[Action]:
        if self.task.add_items and isinstance(record.get("quantity"), int):
            quantity = record["quantity"] + self.task.add_items
            self.task.add_items = 0
            self.task.values["quantity"] = quantity
            self.version += 1
            yield UpdateState(field="quantity", value=quantity, version=self.version)

    async def failed(self, event: ToolError) -> AsyncIterator[Action]:
        call = self.calls.get(event.call_id)
        if call is None or call.done:
            return
        call.done = True
        if event.error == "not_found":
            self.task.values.pop("order_id", None)
            self.task.found = None
            yield Say(text="I could not find that order. Which order number is it?")
            return
        tries = self.task.attempts.get(call.step, 0) + 1
        self.task.attempts[call.step] = tries
        if tries >= MAX_ATTEMPTS or event.error == "invalid_arguments":
            yield Say(text="I am sorry, our system is not working right now. I will transfer you.")
            yield Transfer(target="human")
            return
        if call.version != self.version and call.step != "readback":
            async for action in self.plan():
                yield action
            return
        # The same request again, under the same idempotency key: if the first one landed
        # after all, the backend answers without writing twice.
        async for action in self.send(
            call.step, call.tool, call.args, "Sorry, that did not go through. Trying again."
        ):
            yield action

    # -- the planner -----------------------------------------------------------------------

    def open_calls(self) -> list[Call]:
        return [c for c in self.calls.values() if c.sent and not c.done]

    async def plan(self, prefix: str = "") -> AsyncIterator[Action]:
        """The next step from the task record; stale calls are cancelled first."""
        for action in self.cancel_stale():
            yield action
        for call in self.calls.values():
            if not call.sent and not call.done:  # built before a barge-in that changed nothing
                call.sent = True
                yield SendToolCall(call_id=call.call_id)
        if self.open_calls():
            if prefix:
                yield Say(text=f"{prefix} I am still waiting for the system.")
            return
        step = self.next_step()
        if step is None:
            return
        kind, text = step
        if kind != "say" or not self.task.confirmed:
            self.last_said = kind
        speech = f"{prefix} {text}".strip()
        if kind == "say":
            yield Say(text=speech)
            return
        tool, args = self.request_for(kind)
        async for action in self.send(kind, tool, args, speech):
            yield action

    def cancel_stale(self) -> list[Action]:
        actions: list[Action] = []
        for call in self.calls.values():
            stale = self.task.called_off or (
                call.step != "readback" and call.version != self.version
            )
            if not call.done and stale:
                call.done = True
                actions.append(CancelToolCall(call_id=call.call_id))
        return actions

    def next_step(self) -> tuple[str, str] | None:
        task, values = self.task, self.task.values
        if task.kind is None:
            return ("say", "What can I do for you: change an order or book a refund?")
        if task.called_off:
            if task.confirmed:
                return None
            task.confirmed = True
            return ("say", "All right, I will leave it as it is; nothing was changed.")
        if "order_id" not in values:
            return ("say", "Which order number is it?")
        if task.confirmed:
            return ("say", "Is there anything else I can do for you?")
        if task.kind == "refund":
            return self.refund_step()
        return self.update_step()

    def update_step(self) -> tuple[str, str] | None:
        task, values = self.task, self.task.values
        can_read = "lookup_order" in self.tools
        if can_read and task.found is None:
            return ("lookup", f"One moment, I am pulling up order {values['order_id']}.")
        if not ({"quantity", "delivery_date"} & set(values)):
            return ("say", "What should I change: the quantity or the delivery date?")
        if task.written is None:
            return ("write", "I am making the change now.")
        if can_read and task.checked is None:
            return ("readback", "Let me make sure it was saved.")
        task.confirmed = True
        self.last_said = "confirmation"
        return ("say", self.confirmation(task.checked or task.written))

    def refund_step(self) -> tuple[str, str] | None:
        task, values = self.task, self.task.values
        if "amount" not in values:
            return ("say", "How much should I refund?")
        if task.written is None:
            return ("write", "I am booking the refund now.")
        if "get_refund" in self.tools and task.checked is None and task.written.get("refund_id"):
            return ("readback", "Let me check that the refund is booked.")
        task.confirmed = True
        self.last_said = "confirmation"
        return ("say", self.confirmation(task.checked or task.written))

    def confirmation(self, record: dict[str, Any]) -> str:
        order = record.get("order_id", self.task.values.get("order_id"))
        if self.task.kind == "refund":
            return f"Done: a refund of {record.get('amount')} euros on order {order} is booked."
        parts = []
        if "quantity" in self.task.values:
            parts.append(f"{record.get('quantity')} items")
        if "delivery_date" in self.task.values:
            parts.append(f"delivery on {record.get('delivery_date')}")
        return f"Done: order {order} now has {' and '.join(parts)}. Anything else?"

    def request_for(self, step: str) -> tuple[str, dict[str, Any]]:
        values = self.task.values
        if step == "lookup":
            return "lookup_order", {"order_id": values["order_id"]}
        if step == "readback":
            if self.task.kind == "refund":
                assert self.task.written is not None
                return "get_refund", {"refund_id": self.task.written["refund_id"]}
            return "lookup_order", {"order_id": values["order_id"]}
        if self.task.kind == "refund":
            return "issue_refund", {"order_id": values["order_id"], "amount": values["amount"]}
        fields = ("order_id", "quantity", "delivery_date")
        return "update_order", {k: values[k] for k in fields if k in values}

    async def send(
        self, step: str, tool: str, args: dict[str, Any], speech: str
    ) -> AsyncIterator[Action]:
        self.counter += 1
        call = Call(
            call_id=f"{step}-{self.counter}",
            step=step,
            tool=tool,
            args=args,
            version=self.version,
            key=self.key_for(tool, args) if step == "write" else None,
        )
        yield Say(text=speech)
        # Recorded before each yield: a barge-in closes this generator right after the
        # action is taken, and the code after the yield never runs.
        self.calls[call.call_id] = call
        yield PrepareToolCall(
            call_id=call.call_id,
            tool=tool,
            args=args,
            state_version=call.version,
            idempotency_key=call.key,
        )
        call.sent = True
        yield SendToolCall(call_id=call.call_id)

    def key_for(self, tool: str, args: dict[str, Any]) -> str:
        # The same request always gets the same key; a changed request a new one.
        digest = hashlib.sha256(json.dumps([tool, args], sort_keys=True).encode()).hexdigest()
        return f"{self.context.conversation_id}:{digest[:16]}"
