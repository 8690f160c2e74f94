"""A correct order-line agent that runs each request as a small program: when the request
is complete (or changes), it compiles a list of steps — look up, write, read back,
confirm — and an interpreter runs them one by one; a correction recompiles the program
and cancels whatever the old one had out.

Style: talks like a person on the phone — order numbers digit by digit ("five five nine
zero"), counts and amounts in words, dates as "the 22nd of December 2026", a filler
while each call runs, and a word on the fields it did not touch ("the delivery date stays
the 3rd of December 2026").
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import date
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
SPLIT = "held_out"
DESCRIPTION = "compiled step program per request; ids digit by digit, words, ordinal dates"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
SMALL = [
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
DECADES = ["-", "-", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS = "January February March April May June July August September October November December"


def in_words(n: int) -> str:
    if n < 20:
        return SMALL[n]
    if n < 100:
        return DECADES[n // 10] + ("-" + SMALL[n % 10] if n % 10 else "")
    rest = n % 100
    return f"{SMALL[n // 100]} hundred" + (f" and {in_words(rest)}" if rest else "")


def digit_by_digit(number: str) -> str:
    return " ".join(DIGITS[int(d)] for d in number)


def ordinal_date(iso: str) -> str:
    d = date.fromisoformat(iso)
    suffix = "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
    return f"the {d.day}{suffix} of {MONTHS.split()[d.month - 1]} {d.year}"


@dataclass
class Step:
    """One instruction of the request's program."""

    op: str  # read | write | verify | confirm
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class Running:
    """The call the interpreter is waiting on."""

    call_id: str
    step: Step
    program: int  # which compilation it belongs to
    key: str | None
    sent: bool = False


EXTRACT = {
    "order_id": re.compile(r"(?<![\d-])(\d{4,})(?![\d-])"),
    "delivery_date": re.compile(r"\b(\d{4}-\d{2}-\d{2})\b"),
}
QUANTITY = re.compile(r"\b(\d{1,3})\s+items?\b|\b(?:to|make it|make that)\s+(\d{1,3})\b(?![\d-])")
AMOUNT = re.compile(r"\b(\d{1,4})\s*(?:euros?|eur)\b")
ONE_MORE = re.compile(r"\b(?:one|an?) more items?\b")
RETRACT = re.compile(r"\b(?:don'?t|do not|stop|leave it|never mind|forget it)\b")
CLOSING = re.compile(r"\b(?:bye|that'?s all|no thanks|nothing else)\b")
ESCALATE = re.compile(r"\b(?:human|person|representative|operator)\b")


class Agent:
    """Compiles a program per request version and interprets it."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.request: dict[str, Any] = {}
        self.kind: str | None = None
        self.increment = 0
        self.version = 0
        self.retracted = False
        self.program: list[Step] = []
        self.pc = 0
        self.compiled = 0
        self.running: Running | None = None
        self.memory: dict[str, Any] = {}  # what the steps learned: record, written, checked
        self.calls = 0
        self.failures: dict[str, int] = {}
        self.reread = 0
        self.done = False

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, you're speaking with the order service.")
            yield Say(text="How may I help?")
        elif isinstance(event, Silence):
            yield Say(text="Hello, are you there? We could also phone you back later.")
        elif isinstance(event, BargeIn) and event.text is None:
            yield Say(text="Pardon, a bit of noise there. Let me continue.")
            async for action in self.run():
                yield action
        elif isinstance(event, CallerSaid | BargeIn):
            async for action in self.listen(event.text or ""):
                yield action
        elif isinstance(event, ToolResult):
            async for action in self.on_answer(event.call_id, event.result, event.late):
                yield action
        elif isinstance(event, ToolError):
            async for action in self.on_failure(event):
                yield action

    # -- the caller ------------------------------------------------------------------------

    async def listen(self, text: str) -> AsyncIterator[Action]:
        low = text.lower()
        if ESCALATE.search(low):
            yield Say(text="Of course. One moment, I'll transfer you to a colleague.")
            yield Transfer(target="human")
            return
        known = dict(self.request)
        for action in self.extract(text, low):
            yield action
        if RETRACT.search(low) and self.kind is not None and not self.retracted:
            self.retracted = True
            self.version += 1
            yield UpdateState(field="execute", value=False, version=self.version)
            for action in self.abandon():
                yield action
            self.done = True
            yield Say(text="Alright, I've stopped that. Nothing has been changed.")
            return
        if CLOSING.search(low) and self.running is None:
            yield Say(text="Thank you for calling. Have a good day, goodbye.")
            yield EndCall(reason="caller closed")
            return
        if self.request != known:
            for action in self.abandon():
                yield action
            if known:
                yield Say(text=f"I see, {self.spoken_request(known)}.")
            self.recompile()
        elif self.done:
            yield Say(text="Is there anything more I can do for you?")
            return
        async for action in self.run():
            yield action

    def spoken_request(self, known: dict[str, Any]) -> str:
        changed = {k: v for k, v in self.request.items() if known.get(k) != v}
        parts = []
        if "order_id" in changed:
            parts.append(f"order {digit_by_digit(changed['order_id'])}")
        if "quantity" in changed:
            parts.append(f"{in_words(changed['quantity'])} items")
        if "delivery_date" in changed:
            parts.append(ordinal_date(changed["delivery_date"]))
        if "amount" in changed:
            parts.append(f"{in_words(changed['amount'])} euros")
        return " and ".join(parts)

    def extract(self, text: str, low: str) -> list[Action]:
        seen: dict[str, Any] = {}
        for name, pattern in EXTRACT.items():
            if hits := pattern.findall(text):
                seen[name] = hits[-1]
        if self.kind == "refund" or "refund" in low or AMOUNT.search(low):
            self.kind = "refund"
            if hits := AMOUNT.findall(low):
                seen["amount"] = int(hits[-1])
        else:
            if hits := QUANTITY.findall(low):
                seen["quantity"] = int(next(g for g in hits[-1] if g))
            if ONE_MORE.search(low):
                self.increment = 1
            if seen or self.increment or "order" in low or "deliver" in low:
                self.kind = "update"
        updates: list[Action] = []
        for name, value in seen.items():
            if self.request.get(name) != value:
                self.request[name] = value
                self.version += 1
                updates.append(UpdateState(field=name, value=value, version=self.version))
        if updates and not self.program:
            self.recompile()
        return updates

    def abandon(self) -> list[Action]:
        running, self.running = self.running, None
        return [CancelToolCall(call_id=running.call_id)] if running else []

    # -- the program -----------------------------------------------------------------------

    def recompile(self) -> None:
        """The steps for the request as it is now; what earlier steps learned is kept
        only where it still holds (the order record, while the order number is the same)."""
        self.compiled += 1
        self.done = False
        order = self.request.get("order_id")
        record = self.memory.get("record")
        self.memory = {"record": record} if record and record.get("order_id") == order else {}
        self.program, self.pc = [], 0
        if order is None or self.kind is None:
            return
        if self.kind == "refund":
            if "amount" in self.request:
                args = {"order_id": order, "amount": self.request["amount"]}
                self.program = [
                    Step("write", "issue_refund", args),
                    Step("verify"),
                    Step("confirm"),
                ]
            return
        if "lookup_order" in self.tools and "record" not in self.memory:
            self.program.append(Step("read", "lookup_order", {"order_id": order}))
        self.program += [Step("write", "update_order"), Step("verify"), Step("confirm")]

    def question(self) -> str | None:
        if self.kind is None:
            return "Would you like to change an order, or is it about a refund?"
        if "order_id" not in self.request:
            return "Could you give me the order number?"
        if self.kind == "refund" and "amount" not in self.request:
            return "How much would you like refunded?"
        return None

    async def run(self) -> AsyncIterator[Action]:
        """Interpret from the program counter until a call is out or the program ends."""
        if self.running is not None:
            if not self.running.sent:  # built before a barge-in that changed nothing
                self.running.sent = True
                yield SendToolCall(call_id=self.running.call_id)
            return
        if self.retracted or self.done:
            return
        if not self.program:
            self.recompile()
        if not self.program:
            yield Say(text=self.question() or "How can I help?")
            return
        while self.pc < len(self.program):
            step = self.program[self.pc]
            if step.op == "confirm":
                self.pc += 1
                self.done = True
                for chunk in self.confirmation():
                    yield Say(text=chunk)
                return
            call = self.materialise(step)
            if call is None:
                self.pc += 1
                continue
            if isinstance(call, str):
                yield Say(text=call)
                return
            async for action in self.launch(step, *call):
                yield action
            return

    def materialise(self, step: Step) -> tuple[str, dict[str, Any], str] | str | None:
        """The tool, arguments and words of a step, now that earlier steps have run."""
        if step.op == "read":
            return (
                step.tool,
                step.args,
                f"Let me pull up order {digit_by_digit(step.args['order_id'])}.",
            )
        if step.op == "write" and step.tool == "update_order":
            change: dict[str, Any] = {
                k: self.request[k] for k in ("quantity", "delivery_date") if k in self.request
            }
            if not change:
                return "Shall we change the quantity or the delivery date?"
            return (
                step.tool,
                {"order_id": self.request["order_id"], **change},
                "I'm putting the change through.",
            )
        if step.op == "write":
            return step.tool, step.args, "I'm booking the refund for you."
        written = self.memory.get("written") or {}
        if self.kind == "refund" and "get_refund" in self.tools and written.get("refund_id"):
            return (
                "get_refund",
                {"refund_id": written["refund_id"]},
                "Just checking it went through.",
            )
        if self.kind == "update" and "lookup_order" in self.tools:
            return (
                "lookup_order",
                {"order_id": self.request["order_id"]},
                "Just checking it's saved.",
            )
        return None  # nothing to read it back with: the write's own answer must do

    async def launch(
        self, step: Step, tool: str, args: dict[str, Any], words: str, key: str | None = None
    ) -> AsyncIterator[Action]:
        self.calls += 1
        if key is None and step.op == "write":
            key = f"{self.context.conversation_id}~{self.compiled}"  # reused by a retry
        running = Running(f"{step.op}{self.calls}", step, self.compiled, key)
        yield Say(text=words)
        self.running = running
        yield PrepareToolCall(
            call_id=running.call_id,
            tool=tool,
            args=args,
            state_version=self.version,
            idempotency_key=key,
        )
        running.sent = True
        self.memory["last_args"] = (tool, args)
        yield SendToolCall(call_id=running.call_id)
        yield Say(text="One moment, please.")

    async def on_answer(self, call_id: str, result: Any, late: bool) -> AsyncIterator[Action]:
        running = self.running
        if late or running is None or running.call_id != call_id:
            return
        self.running = None
        record = result if isinstance(result, dict) else None
        step = running.step
        if step.op == "read":
            if not record or record.get("order_id") != step.args["order_id"]:
                self.reread += 1
                if self.reread > 2:
                    self.request.pop("order_id", None)
                    self.program = []
                    yield Say(text="I can't seem to find that order. What's the number again?")
                    return
                yield Say(text="That doesn't look like your order. I'll check again.")
                async for action in self.run():  # the same step, read afresh
                    yield action
                return
            self.memory["record"] = record
            if self.increment and isinstance(record.get("quantity"), int):
                self.request["quantity"] = record["quantity"] + self.increment
                self.increment = 0
                self.version += 1
                yield UpdateState(
                    field="quantity", value=self.request["quantity"], version=self.version
                )
        elif step.op == "write":
            self.memory["written"] = record or {}
        else:
            self.memory["checked"] = record or {}
        self.pc += 1
        async for action in self.run():
            yield action

    async def on_failure(self, event: ToolError) -> AsyncIterator[Action]:
        running = self.running
        if running is None or running.call_id != event.call_id:
            return
        self.running = None
        if event.error == "not_found":
            self.request.pop("order_id", None)
            self.program = []
            yield Say(
                text="I'm afraid I can't find that order. Could you read me the number again?"
            )
            return
        count = self.failures.get(running.step.op, 0) + 1
        self.failures[running.step.op] = count
        if count > 1 or event.error == "invalid_arguments":
            yield Say(text="I'm sorry, our system isn't cooperating today.")
            yield Say(text="I'll hand you over to a colleague who can finish this.")
            yield Transfer(target="human")
            return
        tool, args = self.memory["last_args"]
        # Same request, same key: if the first attempt landed after all, nothing is doubled.
        async for action in self.launch(
            running.step,
            tool,
            args,
            "Sorry, that didn't go through, let me try again.",
            running.key,
        ):
            yield action

    def confirmation(self) -> list[str]:
        stored = self.memory.get("checked") or self.memory.get("written") or {}
        order = digit_by_digit(str(stored.get("order_id", self.request.get("order_id", ""))))
        if self.kind == "refund":
            amount = stored.get("amount")
            return [
                "That's all gone through.",
                f"A refund of {in_words(amount) if isinstance(amount, int) else amount} euros "
                f"is booked on order {order}. Anything else?",
            ]
        said = []
        if "quantity" in self.request and isinstance(stored.get("quantity"), int):
            said.append(f"it now has {in_words(stored['quantity'])} items")
        if "delivery_date" in self.request and stored.get("delivery_date"):
            said.append(f"it will arrive on {ordinal_date(str(stored['delivery_date']))}")
        kept = ""
        if "delivery_date" not in self.request and stored.get("delivery_date"):
            kept = f" The delivery date stays {ordinal_date(str(stored['delivery_date']))}."
        return [
            "That's all gone through.",
            f"Order {order}: {' and '.join(said)}.{kept} Anything else?",
        ]
