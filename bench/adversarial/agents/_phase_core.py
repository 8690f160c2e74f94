"""A second, independently written careful agent: a phase machine that speaks in words.

The held-out flawed agents build on this one, so the rules are checked on agents whose
wording, pacing and structure they were not tuned on: quantities are spoken as words
("three items"), dates as "December 20, 2026", each response comes in short chunks, and
idempotency keys are derived from a request's content instead of a version counter.

It follows the public agent protocol only (docs/agents.md): every change of the working
state is reported with a new version under the tool arguments' names, calls are built on
the current version, a correction cancels what it makes stale, background noise changes
nothing, a record that looks wrong is read again, a retry reuses its key, a write is read
back before it is confirmed, and the confirmation names what the backend holds.

Not an agent itself: the evaluation skips files starting with `_`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
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

WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
]
MONTHS = [
    *("January", "February", "March", "April", "May", "June", "July", "August"),
    *("September", "October", "November", "December"),
]


def spoken_number(value: Any) -> str:
    """Small counts in words, anything else in digits."""
    if isinstance(value, int) and 0 <= value < len(WORDS):
        return WORDS[value]
    return str(value)


def spoken_date(value: Any) -> str:
    """An ISO date as people say it: December 20, 2026."""
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        return str(value)
    return f"{MONTHS[day.month - 1]} {day.day}, {day.year}"


class Phase(Enum):
    LISTENING = "listening"
    CHECKING = "checking"  # reading the order before the write
    WRITING = "writing"
    VERIFYING = "verifying"  # reading the write back
    FINISHED = "finished"
    STOPPED = "stopped"  # the caller called it off


@dataclass
class Patch:
    """What one utterance changes or asks for."""

    fields: dict[str, Any]
    refund: bool
    plus: int | None
    stop: bool
    bye: bool
    person: bool


_TOKEN = re.compile(r"\d{4}-\d{2}-\d{2}|\d+|[a-z']+")
_STOP_WORDS = ("don't", "dont", "stop", "leave it", "never mind", "do not")


def read_patch(text: str) -> Patch:
    """Walk the tokens; a number's meaning comes from its neighbours. Later mentions win."""
    lowered = text.lower()
    tokens = _TOKEN.findall(lowered)
    fields: dict[str, Any] = {}
    plus = None
    for index, token in enumerate(tokens):
        after = tokens[index + 1] if index + 1 < len(tokens) else ""
        before = tokens[index - 1] if index else ""
        value = int(token) if token.isdigit() else WORDS.index(token) if token in WORDS else None
        if "-" in token:
            fields["delivery_date"] = token
        elif token.isdigit() and len(token) >= 4:
            fields["order_id"] = token
        elif value is None:
            continue
        elif after == "more":
            plus = value
        elif after.startswith("euro"):
            fields["amount"] = value
        elif after.startswith("item") or (token.isdigit() and before in ("to", "it", "that")):
            fields["quantity"] = value  # "make it 3"; a bare "that one" is no quantity
    refund = "refund" in lowered
    if refund:
        fields.pop("quantity", None)
    return Patch(
        fields=fields,
        refund=refund,
        plus=plus,
        stop=any(word in lowered for word in _STOP_WORDS),
        bye=any(word in lowered for word in ("bye", "that's all", "no thanks", "no, thanks")),
        person=any(word in lowered for word in ("human", "person", "operator")),
    )


@dataclass
class Outgoing:
    """A call this agent made."""

    call_id: str
    tool: str
    args: dict[str, Any]
    phase: Phase
    key: str | None
    attempt: int = 1
    reads: int = 1
    sent: bool = False
    live: bool = True


class PhaseAgent:
    """Order changes and refunds, one phase at a time."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.request: dict[str, Any] = {}
        self.refund = False
        self.plus: int | None = None
        self.version = 0
        self.phase = Phase.LISTENING
        self.checked_order: str | None = None
        self.record: dict[str, Any] = {}
        self.outgoing: dict[str, Outgoing] = {}
        self.serial = 0
        self.turns_said = 0
        self.quiet = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Dispatch on the event's kind to the handler of that name."""
        handler = getattr(self, f"on_{event.kind}", None)
        if handler is not None:
            async for action in handler(event):
                yield action

    # --- talking -------------------------------------------------------------------

    def vary(self, *options: str) -> str:
        """Rotate wordings: two replies in a row must not read as a loop."""
        self.turns_said += 1
        return options[self.turns_said % len(options)]

    def describe(self, values: dict[str, Any]) -> str:
        parts = []
        if "quantity" in values:
            parts.append(f"{spoken_number(values['quantity'])} items")
        if "delivery_date" in values:
            parts.append(f"delivery on {spoken_date(values['delivery_date'])}")
        if "amount" in values:
            parts.append(f"a refund of {values['amount']} euros")
        return " and ".join(parts) or "no change"

    async def on_call_started(self, event: CallStarted) -> AsyncIterator[Action]:
        yield Say(text="Hi, order line, Robin speaking.")
        yield Say(text="What can I do for you?")

    async def on_silence(self, event: Silence) -> AsyncIterator[Action]:
        self.quiet += 1
        if self.quiet >= 3:
            yield Say(text="I can't hear anything, so I'll hang up now. Bye.")
            yield EndCall(reason="silence")
            return
        yield Say(text=self.vary("Hello? Are you there?", "Sorry, I can't hear you."))

    async def on_barge_in(self, event: BargeIn) -> AsyncIterator[Action]:
        if event.text is None:
            async for action in self.on_noise():
                yield action
            return
        async for action in self.on_caller_said(CallerSaid(text=event.text)):
            yield action

    async def on_noise(self) -> AsyncIterator[Action]:
        """Noise is nobody talking: pick the thread up again if it was cut."""
        if self.phase is Phase.LISTENING and self.complete() and not self.live_calls():
            yield Say(text="Sorry, the line crackled there.")
            async for action in self.advance():
                yield action

    async def on_caller_said(self, event: CallerSaid) -> AsyncIterator[Action]:
        patch = read_patch(event.text)
        if patch.person:
            yield Say(text="Sure, I'll connect you with a colleague.")
            yield Transfer(target="human")
            return
        if patch.stop:
            async for action in self.stop():
                yield action
            return
        changes = self.absorb(patch)
        if not changes and patch.bye:
            yield Say(text="Bye now, take care.")
            yield EndCall(reason="caller finished")
            return
        for change in changes:
            yield change
        if changes:
            async for action in self.invalidate({c.field for c in changes}):
                yield action
        if self.phase is Phase.FINISHED and not changes:
            yield Say(text=self.vary("That's all sorted already.", "Yes, that one is done."))
            return
        async for action in self.advance():
            yield action

    def absorb(self, patch: Patch) -> list[UpdateState]:
        """New values become the working state, each with its own version."""
        self.refund = self.refund or patch.refund
        if patch.plus is not None:
            self.plus = patch.plus
        updates = []
        for name, value in patch.fields.items():
            if self.request.get(name) != value:
                updates.append(self.set_field(name, value))
        return updates

    def set_field(self, name: str, value: Any) -> UpdateState:
        self.request[name] = value
        self.version += 1
        return UpdateState(field=name, value=value, version=self.version)

    async def invalidate(self, changed: set[str]) -> AsyncIterator[Action]:
        """Everything in flight was built on the old request: cancel it and start over."""
        for out in self.live_calls():
            if out.phase is Phase.CHECKING and "order_id" not in changed:
                continue
            async for action in self.abandon(out):
                yield action
        if "order_id" in changed:
            self.checked_order = None
        if self.phase is not Phase.STOPPED:
            self.phase = Phase.LISTENING

    async def abandon(self, out: Outgoing) -> AsyncIterator[Action]:
        out.live = False
        yield CancelToolCall(call_id=out.call_id)

    async def stop(self) -> AsyncIterator[Action]:
        for out in self.live_calls():
            if out.phase is Phase.WRITING:
                async for action in self.abandon(out):
                    yield action
        self.phase = Phase.STOPPED
        self.version += 1
        yield UpdateState(field="execute", value=False, version=self.version)
        yield Say(text="Okay, stopped.")
        yield Say(text=f"Nothing changes on order {self.request.get('order_id', '')}.")

    # --- the job ---------------------------------------------------------------------

    def complete(self) -> bool:
        if "order_id" not in self.request:
            return False
        if self.refund:
            return "amount" in self.request
        return self.plus is not None or bool({"quantity", "delivery_date"} & set(self.request))

    def live_calls(self) -> list[Outgoing]:
        return [out for out in self.outgoing.values() if out.live]

    async def advance(self) -> AsyncIterator[Action]:
        if self.phase is Phase.STOPPED or self.live_calls():
            return
        if "order_id" not in self.request:
            yield Say(text=self.vary("What's the order number?", "Could I have the order number?"))
            return
        if not self.complete():
            yield Say(text=self.vary("And what should change?", "What would you like changed?"))
            return
        order = self.request["order_id"]
        if "lookup_order" in self.tools and not self.refund and self.checked_order != order:
            self.phase = Phase.CHECKING
            yield Say(text="One moment.")
            yield Say(text=self.vary(f"Looking up order {order}.", f"Finding order {order}."))
            async for action in self.send("lookup_order", {"order_id": order}, Phase.CHECKING):
                yield action
            return
        async for action in self.start_write():
            yield action

    def write_tool(self) -> str:
        return "issue_refund" if self.refund else "update_order"

    def write_args(self) -> dict[str, Any]:
        names = ("order_id", "amount") if self.refund else ("order_id", "quantity", "delivery_date")
        return {name: self.request[name] for name in names if name in self.request}

    def key(self, tool: str, args: dict[str, Any]) -> str | None:
        """Same request, same key: a retry can never land twice."""
        content = json.dumps([self.context.conversation_id, tool, args], sort_keys=True)
        return "req-" + hashlib.sha256(content.encode()).hexdigest()[:16]

    async def start_write(self) -> AsyncIterator[Action]:
        tool = self.write_tool()
        if tool not in self.tools:
            yield Say(text="I can't do that on this line; let me pass you on.")
            yield Transfer(target="human")
            return
        self.phase = Phase.WRITING
        args = self.write_args()
        yield Say(text=f"Okay: order {args['order_id']}, {self.describe(args)}.")
        async for action in self.send(tool, args, Phase.WRITING, self.key(tool, args)):
            yield action

    async def send(
        self,
        tool: str,
        args: dict[str, Any],
        phase: Phase,
        key: str | None = None,
        attempt: int = 1,
        reads: int = 1,
    ) -> AsyncIterator[Action]:
        self.serial += 1
        out = Outgoing(f"c{self.serial}-{tool}", tool, dict(args), phase, key, attempt, reads)
        self.outgoing[out.call_id] = out
        yield PrepareToolCall(
            call_id=out.call_id,
            tool=tool,
            args=out.args,
            state_version=self.version,
            idempotency_key=key,
        )
        out.sent = True
        yield SendToolCall(call_id=out.call_id)
        async for action in self.while_waiting(out):
            yield action

    async def while_waiting(self, out: Outgoing) -> AsyncIterator[Action]:
        """Nothing: the answer is the next event."""
        return
        yield  # an async generator that yields nothing

    # --- answers -----------------------------------------------------------------------

    async def on_tool_result(self, event: ToolResult) -> AsyncIterator[Action]:
        out = self.outgoing.get(event.call_id)
        if out is None or not out.live or event.late:
            return
        out.live = False
        record = event.result if isinstance(event.result, dict) else {}
        if out.phase is Phase.CHECKING:
            handler = self.after_check
        elif out.phase is Phase.WRITING:
            handler = self.after_write
        else:
            handler = self.after_verify
        async for action in handler(out, record):
            yield action

    def looks_wrong(self, out: Outgoing, record: dict[str, Any]) -> bool:
        return not record or str(record.get("order_id", out.args.get("order_id"))) != str(
            out.args.get("order_id", record.get("order_id"))
        )

    async def read_again(self, out: Outgoing) -> AsyncIterator[Action]:
        if out.reads > 2:
            yield Say(text="The system keeps giving me odd answers; I'll pass you to a colleague.")
            yield Transfer(target="human")
            return
        yield Say(text="Hmm, that doesn't look right.")
        yield Say(text="Reading it once more.")
        async for action in self.send(out.tool, out.args, out.phase, reads=out.reads + 1):
            yield action

    async def after_check(self, out: Outgoing, record: dict[str, Any]) -> AsyncIterator[Action]:
        if self.looks_wrong(out, record):
            async for action in self.read_again(out):
                yield action
            return
        self.record = record
        self.checked_order = str(out.args["order_id"])
        if self.plus is not None:
            yield self.set_field("quantity", int(record.get("quantity", 0)) + self.plus)
            self.plus = None
        async for action in self.start_write():
            yield action

    async def after_write(self, out: Outgoing, record: dict[str, Any]) -> AsyncIterator[Action]:
        read = self.read_back_call(out, record)
        if read is None:
            async for action in self.finish(record):
                yield action
            return
        self.phase = Phase.VERIFYING
        yield Say(text="Saved. Let me double-check it.")
        async for action in self.send(read[0], read[1], Phase.VERIFYING):
            yield action

    def read_back_call(
        self, out: Outgoing, record: dict[str, Any]
    ) -> tuple[str, dict[str, Any]] | None:
        if out.tool == "update_order" and "lookup_order" in self.tools:
            return "lookup_order", {"order_id": out.args["order_id"]}
        if out.tool == "issue_refund" and "get_refund" in self.tools and "refund_id" in record:
            return "get_refund", {"refund_id": str(record["refund_id"])}
        return None

    async def after_verify(self, out: Outgoing, record: dict[str, Any]) -> AsyncIterator[Action]:
        if not record:
            async for action in self.read_again(out):
                yield action
            return
        if out.tool == "lookup_order" and self.looks_wrong(out, record):
            async for action in self.read_again(out):
                yield action
            return
        async for action in self.finish(record):
            yield action

    async def finish(self, record: dict[str, Any]) -> AsyncIterator[Action]:
        """Confirm from the backend's record."""
        self.phase = Phase.FINISHED
        wanted = {name: record.get(name) for name in self.write_args() if name != "order_id"}
        order = record.get("order_id", self.request.get("order_id"))
        yield Say(text=f"That's done: order {order} now has {self.describe(wanted)}.")
        yield Say(text="Anything else?")

    async def on_tool_error(self, event: ToolError) -> AsyncIterator[Action]:
        out = self.outgoing.get(event.call_id)
        if out is None or not out.live:
            return
        out.live = False
        async for action in self.failed(out, event):
            yield action

    async def failed(self, out: Outgoing, event: ToolError) -> AsyncIterator[Action]:
        if event.error == "not_found":
            self.request.pop("order_id", None)
            self.checked_order = None
            self.phase = Phase.LISTENING
            yield Say(text=f"I can't find order {out.args.get('order_id')}. Which number was it?")
            return
        if event.error == "invalid_arguments" or out.attempt >= 2:
            yield Say(text="Our system is having trouble, so I'll put you through to a colleague.")
            yield Transfer(target="human")
            return
        yield Say(text="That didn't go through. Trying again.")
        key = self.retry_key(out)
        async for action in self.send(out.tool, out.args, out.phase, key, attempt=2):
            yield action

    def retry_key(self, out: Outgoing) -> str | None:
        return out.key
