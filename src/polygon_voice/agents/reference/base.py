"""The order-service flow both reference agents share; their differences are the hooks.

Domain: a CRM with `lookup_order`, `update_order`, `issue_refund` and `get_refund` (the
`three-layer` suite). The agent collects a request (change quantity or delivery date,
add one more item, refund an amount), looks the order up, reads the change back,
prepares and sends the consequential call, and confirms.

Conventions the six axes rely on: the agent reports its working state with
`UpdateState`, one new version per change, using the tool arguments' names
(`order_id`, `quantity`, `delivery_date`, `amount`) and `execute` for a request the
caller called off.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from polygon_voice.agents.base import AgentContext
from polygon_voice.agents.reference.parsing import Heard, understand
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
    TimerFired,
    ToolError,
    ToolResult,
    Transfer,
    UpdateState,
)

LOOKUP = "lookup_order"
GET_REFUND = "get_refund"
ACTION_TOOL = {"update": "update_order", "add_one": "update_order", "refund": "issue_refund"}
CHANGE_FIELDS = ("quantity", "delivery_date")
GREETING = "Hello, you are through to the order service. How can I help?"
MAX_RETRIES = 2
# Each question in other words, for when the caller did not follow it the first time.
REPHRASED = {
    "Which order is it about? Please tell me the order number.": (
        "Sorry, I mean the number of your order: four or more digits, on your confirmation."
    ),
    "What would you like to change: the quantity or the delivery date?": (
        "Should I change how many you get, or the day it arrives?"
    ),
    "How much should I refund?": "What amount, in euros, should I refund?",
}


@dataclass
class Pending:
    """A call the agent made, and what it was for."""

    call_id: str
    tool: str
    purpose: str  # "check" (look up before acting), "act", "verify"
    args: dict[str, Any]
    version: int
    key: str | None
    sent: bool = False
    cancelled: bool = False
    done: bool = False
    attempt: int = 1


class ReferenceAgent:
    """The shared flow; subclasses decide how to treat corrections, noise and tool faults."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.state: dict[str, Any] = {}
        self.heard: dict[str, Any] = {}
        self.version = 0
        self.kind: str | None = None
        self.record: dict[str, Any] | None = None
        self.record_for: str | None = None
        self.phase = "collect"
        self.pending: dict[str, Pending] = {}
        self.reading_back: dict[str, Any] | None = None
        self.last_question: str | None = None
        self._ids = itertools.count(1)

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Answer one event; see the module docstring."""
        for action in self.react(event):
            yield action

    def react(self, event: Event) -> Iterator[Action]:
        """Dispatch an event to its handler."""
        if isinstance(event, CallStarted):
            yield Say(text=GREETING)
        elif isinstance(event, CallerSaid):
            yield from self.on_words(event.text)
        elif isinstance(event, BargeIn):
            yield from self.on_noise() if event.text is None else self.on_words(event.text)
        elif isinstance(event, ToolResult | ToolError):
            pending = self.pending.get(event.call_id)
            if pending is not None and not pending.cancelled and not pending.done:
                yield from self.on_tool_event(pending, event)
        elif isinstance(event, TimerFired):
            yield from self.on_timer(event.name)
        elif isinstance(event, Silence):
            yield Say(text="Are you still there?")

    # --- the caller's words ----------------------------------------------------

    def on_words(self, text: str) -> Iterator[Action]:
        """Take what the caller said into the state, then react to it."""
        heard = understand(text)
        if heard.bye and self.phase in ("collect", "done", "cancelled"):
            yield Say(text="Thank you for calling. Goodbye!")
            yield EndCall(reason="caller is done")
            return
        self.kind = self.kind or heard.kind
        changes = self.take(heard)
        yield from changes
        if heard.negation:
            yield from self.on_negation()
        elif changes and self.busy():
            said = ", ".join(f"{c.field.replace('_', ' ')} {c.value}" for c in changes)
            yield from self.on_correction(said)
        elif self.phase in ("done", "cancelled"):
            yield Say(text="It is all taken care of. Is there anything else?")
        elif self.phase == "collect" or (heard.yes and self.phase == "waiting_go"):
            yield from self.proceed()

    def take(self, heard: Heard) -> list[UpdateState]:
        """Record the caller's values; report every change of the working state."""
        self.heard.update(heard.values)
        return [
            self.set_state(name, value)
            for name, value in heard.values.items()
            if self.state.get(name) != value
        ]

    def set_state(self, name: str, value: Any) -> UpdateState:
        """Change one field of the working state under a new version (AX-8)."""
        self.version += 1
        self.state[name] = value
        return UpdateState(field=name, value=value, version=self.version)

    def busy(self) -> bool:
        """Whether a lookup or the consequential call is under way."""
        return self.phase in ("checking", "acting", "verifying")

    # --- the flow ------------------------------------------------------------

    def proceed(self) -> Iterator[Action]:
        """Ask for what is missing, else look the order up, else act."""
        question = self.missing()
        if question is not None:
            self.phase = "collect"
            # Asked again right away (the caller did not follow): in other words, as a person would.
            again = question == self.last_question
            self.last_question = None if again else question  # a third time: as at first
            yield Say(text=REPHRASED.get(question, question) if again else question)
        elif self.record is None or self.record_for != self.state.get("order_id"):
            yield from self.check()
        else:
            yield from self.act()

    def missing(self) -> str | None:
        """The question for the next missing detail, if any."""
        if "order_id" not in self.state:
            return "Which order is it about? Please tell me the order number."
        if self.kind is None or (
            self.kind == "update" and not any(f in self.state for f in CHANGE_FIELDS)
        ):
            return "What would you like to change: the quantity or the delivery date?"
        if self.kind == "refund" and "amount" not in self.state:
            return "How much should I refund?"
        return None

    def check(self) -> Iterator[Action]:
        """Look the order up before changing it (silently: the line stays quiet briefly)."""
        self.phase = "checking"
        yield from self.call(LOOKUP, {"order_id": self.state["order_id"]}, "check")

    def act(self, prefix: str = "") -> Iterator[Action]:
        """Read the change back, then prepare and send the consequential call."""
        self.phase = "acting"
        if self.kind == "add_one":
            assert self.record is not None
            wanted = int(self.record.get("quantity", 0)) + 1
            if self.state.get("quantity") != wanted:
                yield self.set_state("quantity", wanted)
        args = self.action_args()
        self.reading_back = args
        yield Say(text=f"{prefix}{read_back(self.kind, args)}")
        self.reading_back = None
        tool = ACTION_TOOL[self.kind or "update"]
        yield from self.call(tool, args, "act", self.idempotency_key())

    def action_args(self) -> dict[str, Any]:
        """The consequential call's arguments, built from the current working state."""
        args: dict[str, Any] = {"order_id": self.state["order_id"]}
        names = ("amount",) if self.kind == "refund" else CHANGE_FIELDS
        args.update({name: self.state[name] for name in names if name in self.state})
        return args

    def call(
        self,
        tool: str,
        args: dict[str, Any],
        purpose: str,
        key: str | None = None,
        attempt: int = 1,
    ) -> Iterator[Action]:
        """Prepare and send a call, keeping track of how far it got."""
        call_id = f"{tool}-{next(self._ids)}"
        pending = Pending(call_id, tool, purpose, dict(args), self.version, key, attempt=attempt)
        self.pending[call_id] = pending
        yield PrepareToolCall(
            call_id=call_id,
            tool=tool,
            args=args,
            state_version=self.version,
            idempotency_key=key,
        )
        pending.sent = True  # set before yielding: a barge-in right after the send stops here
        yield SendToolCall(call_id=call_id)

    def restart(self, said: str) -> Iterator[Action]:
        """Start over from the current state: look the order up again if it changed, else act."""
        for pending in self.pending.values():
            if pending.purpose == "check" and not pending.done:
                pending.cancelled = True  # its answer is about the old request: ignore it
        if self.record_for != self.state.get("order_id"):
            yield Say(text=f"Understood, {said}.")
            yield from self.check()
        else:
            yield from self.act(prefix=f"Understood, {said}. ")

    def built_action(self) -> bool:
        """Whether a consequential call is prepared or under way."""
        return any(
            p.purpose == "act" and not p.done and not p.cancelled for p in self.pending.values()
        )

    def cancel_action_calls(self) -> Iterator[Action]:
        """Cancel every consequential call that is prepared or under way."""
        for pending in self.pending.values():
            if pending.purpose == "act" and not pending.done and not pending.cancelled:
                pending.cancelled = True
                yield CancelToolCall(call_id=pending.call_id)

    def unsent_action(self) -> Pending | None:
        """A consequential call that was prepared but not sent (a barge-in came between)."""
        for pending in self.pending.values():
            if pending.purpose == "act" and not pending.sent and not pending.cancelled:
                return pending
        return None

    def retry(self, pending: Pending) -> Iterator[Action]:
        """The same call again; gives up and transfers after MAX_RETRIES."""
        pending.done = True
        if pending.attempt > MAX_RETRIES:
            yield Say(text="I am sorry, our system is not answering. Let me transfer you.")
            yield Transfer(target="human")
            return
        key = self.retry_key(pending)
        yield from self.call(pending.tool, pending.args, pending.purpose, key, pending.attempt + 1)

    def confirm(self, text: str) -> Iterator[Action]:
        """Tell the caller the outcome."""
        self.phase = "done"
        yield Say(text=f"{text} Is there anything else?")

    # --- tools -----------------------------------------------------------------

    def on_tool_event(self, pending: Pending, event: ToolResult | ToolError) -> Iterator[Action]:
        """Route a tool answer by what the call was for."""
        if isinstance(event, ToolError):
            if pending.purpose == "act":
                yield from self.on_action_error(pending, event)
            else:
                yield from self.retry(pending)
            return
        if pending.purpose == "check":
            pending.done = True
            yield from self.on_lookup(pending, event.result)
        elif pending.purpose == "act":
            yield from self.on_action_result(pending, event)
        else:
            pending.done = True
            yield from self.on_verified(pending, event.result)

    def accept_record(self, record: dict[str, Any]) -> None:
        """Work from this order record from now on."""
        self.record = record
        self.record_for = self.state.get("order_id")

    # --- hooks -------------------------------------------------------------------

    def idempotency_key(self) -> str | None:
        """The key of a new consequential call."""
        raise NotImplementedError

    def retry_key(self, pending: Pending) -> str | None:
        """The key a retry of `pending` carries."""
        raise NotImplementedError

    def on_lookup(self, pending: Pending, result: Any) -> Iterator[Action]:
        """The order record arrived."""
        raise NotImplementedError

    def on_correction(self, said: str) -> Iterator[Action]:
        """The caller changed a detail while a lookup or the action was under way."""
        raise NotImplementedError

    def on_negation(self) -> Iterator[Action]:
        """The caller called the request off."""
        raise NotImplementedError

    def on_noise(self) -> Iterator[Action]:
        """A barge-in without words."""
        raise NotImplementedError

    def on_action_result(self, pending: Pending, event: ToolResult) -> Iterator[Action]:
        """The consequential call answered."""
        raise NotImplementedError

    def on_action_error(self, pending: Pending, event: ToolError) -> Iterator[Action]:
        """The consequential call failed."""
        raise NotImplementedError

    def on_verified(self, pending: Pending, result: Any) -> Iterator[Action]:
        """A verification read answered."""
        yield from ()

    def on_timer(self, name: str) -> Iterator[Action]:
        """A timer the agent set ran out."""
        yield from ()


def read_back(kind: str | None, args: dict[str, Any]) -> str:
    """The sentence that reads a change back before it is made."""
    order = args["order_id"]
    if kind == "refund":
        return f"I'll refund {args.get('amount')} euros on order {order}."
    parts = [f"{name.replace('_', ' ')} {args[name]}" for name in CHANGE_FIELDS if name in args]
    return f"I'll change order {order} to {' and '.join(parts)}."


def outcome(kind: str | None, values: dict[str, Any]) -> str:
    """The sentence that confirms a change, from the given values."""
    order = values.get("order_id")
    if kind == "refund":
        return f"Done: your refund of {values.get('amount')} euros for order {order} is booked."
    parts = [f"{name.replace('_', ' ')} {values[name]}" for name in CHANGE_FIELDS if name in values]
    return f"Done: order {order} now has {' and '.join(parts)}."
