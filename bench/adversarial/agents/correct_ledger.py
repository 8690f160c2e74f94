"""A correct order-line agent built on an append-only event log: every event is written to
the ledger, and the job's state (the wanted values, the open call, what is verified) is
folded from it before each decision.

Style: short acknowledgements that name a value ("Got it, 5599.") before the final
confirmation, a "One moment." filler spoken while each call runs, dates as "20 December
2026", digits for quantities and amounts.
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
SPLIT = "tuning"
DESCRIPTION = "event ledger folded per decision; value acknowledgements; fillers while calls run"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

MONTH_NAMES = [
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
PATTERNS = {
    "order_id": re.compile(r"(?<![\d-])(\d{4,})(?![\d-])"),
    "delivery_date": re.compile(r"(\d{4}-\d{2}-\d{2})"),
    "amount": re.compile(r"(\d{1,4})\s*(?:euros?|eur|€)", re.IGNORECASE),
}
QUANTITY_PATTERNS = (
    re.compile(r"(\d{1,3})\s+items?", re.IGNORECASE),
    re.compile(r"\b(?:to|make it|make that)\s+(\d{1,3})\b(?![\d-])", re.IGNORECASE),
)
ADD_ONE = re.compile(r"\b(?:one|an?) (?:more|extra) item", re.IGNORECASE)
STOP = re.compile(r"\b(?:don'?t|do not|stop|leave it|never mind)\b", re.IGNORECASE)
BYE = re.compile(r"\b(?:bye|that'?s all|no thanks|nothing else)\b", re.IGNORECASE)
AGENT_PLEASE = re.compile(r"\b(?:human|person|representative|operator)\b", re.IGNORECASE)
ATTEMPTS = 2


def day_month_year(iso: str) -> str:
    day = date.fromisoformat(iso)
    return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"


@dataclass(frozen=True)
class Entry:
    """One line of the ledger."""

    what: str  # wanted | called_off | sent | cancelled | answered | failed | confirmed
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Folded:
    """The job as the ledger says it is now."""

    kind: str | None = None
    wanted: dict[str, Any] = field(default_factory=dict)
    plus: int = 0
    called_off: bool = False
    prepared: dict[str, Any] | None = None  # built, not sent (a barge-in came in between)
    open_call: dict[str, Any] | None = None  # the sent call nobody answered or cancelled
    record: dict[str, Any] | None = None  # lookup answer that matched the order
    written: dict[str, Any] | None = None
    verified: dict[str, Any] | None = None
    confirmed: bool = False
    odd_reads: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    last_failed: dict[str, Any] | None = None


class Agent:
    """Writes everything down, decides from the fold."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.available = set(context.tools)
        self.ledger: list[Entry] = []
        self.version = 0
        self.ids = 0

    def fold(self) -> Folded:
        job = Folded()
        for entry in self.ledger:
            self._apply(job, entry)
        return job

    def _apply(self, job: Folded, entry: Entry) -> None:
        data = entry.data
        if entry.what == "kind":
            job.kind = job.kind or data["kind"]
        elif entry.what == "wanted":
            job.wanted[data["field"]] = data["value"]
            if data["field"] == "order_id":
                job.record = None
            job.written = job.verified = None
            job.confirmed = False
        elif entry.what == "plus":
            job.plus = data["n"]
        elif entry.what == "called_off":
            job.called_off = True
        elif entry.what == "prepared":
            job.prepared = data
        elif entry.what == "sent":
            job.open_call, job.prepared = job.prepared, None
        elif entry.what in ("cancelled", "answered", "failed"):
            if job.open_call is not None and job.open_call["call_id"] == data["call_id"]:
                job.open_call = None
            if job.prepared is not None and job.prepared["call_id"] == data["call_id"]:
                job.prepared = None
            if entry.what == "answered":
                self._apply_answer(job, data)
            elif entry.what == "failed":
                job.failures[data["step"]] = job.failures.get(data["step"], 0) + 1
                job.last_failed = data
        elif entry.what == "confirmed":
            job.confirmed = True
        elif entry.what == "forget_order":
            job.wanted.pop("order_id", None)
            job.record = None

    def _apply_answer(self, job: Folded, data: dict[str, Any]) -> None:
        step, result = data["step"], data["result"]
        if step == "lookup":
            matches = isinstance(result, dict) and result.get("order_id") == data["order_id"]
            if matches and data["order_id"] == job.wanted.get("order_id"):
                job.record = result
            elif not matches:
                job.odd_reads += 1
        elif step == "write":
            job.written = result if isinstance(result, dict) else {}
        elif step == "verify":
            job.verified = result if isinstance(result, dict) else {}

    # -- events ----------------------------------------------------------------------------

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hi, you've reached orders. What can I do for you?")
        elif isinstance(event, Silence):
            yield Say(text="I'm still here. Take your time, or we can ring you back later.")
        elif isinstance(event, BargeIn) and event.text is None:
            async for action in self.resume("Sorry, I didn't catch that, there was noise."):
                yield action
        elif isinstance(event, CallerSaid | BargeIn):
            async for action in self.hear(event.text or ""):
                yield action
        elif isinstance(event, ToolResult):
            async for action in self.result(event.call_id, event.result, event.late):
                yield action
        elif isinstance(event, ToolError):
            async for action in self.error(event):
                yield action

    async def hear(self, text: str) -> AsyncIterator[Action]:
        if AGENT_PLEASE.search(text):
            yield Say(text="Sure, transferring you to a colleague now.")
            yield Transfer(target="human")
            return
        job = self.fold()
        updates = self.note_request(text, job)
        for update in updates:
            yield update
        job = self.fold()
        if STOP.search(text) and job.kind is not None and not job.called_off:
            self.version += 1
            self.ledger.append(Entry("called_off"))
            yield UpdateState(field="execute", value=False, version=self.version)
        if BYE.search(text) and job.open_call is None:
            yield Say(text="Thanks for calling, bye!")
            yield EndCall(reason="caller finished")
            return
        ack = ""
        if updates and job.wanted.get("order_id"):
            ack = f"Got it, {self.ack_text(updates)}."
        async for action in self.resume(ack):
            yield action

    def ack_text(self, updates: list[UpdateState]) -> str:
        spoken = []
        for update in updates:
            if update.field == "delivery_date":
                spoken.append(day_month_year(update.value))
            elif update.field == "amount":
                spoken.append(f"{update.value} euros")
            elif update.field == "quantity":
                spoken.append(f"{update.value} items")
            else:
                spoken.append(str(update.value))
        return ", ".join(spoken)

    def note_request(self, text: str, job: Folded) -> list[UpdateState]:
        found: dict[str, Any] = {}
        for name, pattern in PATTERNS.items():
            if matches := pattern.findall(text):
                found[name] = matches[-1]
        refund = "refund" in text.lower() or "amount" in found or job.kind == "refund"
        if "amount" in found:
            found["amount"] = int(found["amount"])
        if not refund:
            for pattern in QUANTITY_PATTERNS:
                if quantities := pattern.findall(text):
                    found["quantity"] = int(quantities[-1])
                    break
            if ADD_ONE.search(text):
                self.ledger.append(Entry("plus", {"n": 1}))
        if found or "order" in text.lower() or "deliver" in text.lower():
            self.ledger.append(Entry("kind", {"kind": "refund" if refund else "update"}))
        updates = []
        for name, value in found.items():
            if job.wanted.get(name) == value:
                continue
            self.version += 1
            self.ledger.append(Entry("wanted", {"field": name, "value": value}))
            updates.append(UpdateState(field=name, value=value, version=self.version))
        return updates

    async def result(self, call_id: str, result: Any, late: bool) -> AsyncIterator[Action]:
        job = self.fold()
        if late or job.open_call is None or job.open_call["call_id"] != call_id:
            return  # not the call we wait for: cancelled, or superseded by a retry
        call = job.open_call
        self.ledger.append(Entry("answered", {**call, "result": result}))
        if call["version"] != self.version and call["step"] in ("lookup", "write"):
            async for action in self.resume():
                yield action
            return
        job = self.fold()
        if call["step"] == "lookup" and job.record is not None and job.plus:
            quantity = int(job.record["quantity"]) + job.plus
            self.version += 1
            self.ledger.append(Entry("wanted", {"field": "quantity", "value": quantity}))
            self.ledger.append(Entry("plus", {"n": 0}))
            yield UpdateState(field="quantity", value=quantity, version=self.version)
        async for action in self.resume():
            yield action

    async def error(self, event: ToolError) -> AsyncIterator[Action]:
        job = self.fold()
        if job.open_call is None or job.open_call["call_id"] != event.call_id:
            return
        call = job.open_call
        self.ledger.append(Entry("failed", dict(call)))
        if event.error == "not_found":
            self.ledger.append(Entry("forget_order"))
            yield Say(text="That order number isn't in our system. Could you check it?")
            return
        if self.fold().failures[call["step"]] >= ATTEMPTS or event.error == "invalid_arguments":
            yield Say(text="Our system keeps failing, sorry. A colleague will take over now.")
            yield Transfer(target="human")
            return
        async for action in self.resume("That didn't go through, trying once more."):
            yield action

    # -- deciding --------------------------------------------------------------------------

    async def resume(self, opening: str = "") -> AsyncIterator[Action]:
        """Cancel what the fold says is stale, then take the next step."""
        job = self.fold()
        if job.prepared is not None:
            if self.is_stale(job, job.prepared):
                self.ledger.append(Entry("cancelled", {"call_id": job.prepared["call_id"]}))
                yield CancelToolCall(call_id=job.prepared["call_id"])
            else:  # nothing changed since it was built: send it as it is
                self.ledger.append(Entry("sent", {"call_id": job.prepared["call_id"]}))
                yield SendToolCall(call_id=job.prepared["call_id"])
            job = self.fold()
        if job.open_call is not None and self.is_stale(job, job.open_call):
            self.ledger.append(Entry("cancelled", {"call_id": job.open_call["call_id"]}))
            yield CancelToolCall(call_id=job.open_call["call_id"])
            job = self.fold()
        if job.open_call is not None:
            if opening:
                yield Say(text=f"{opening} Still waiting on the system.")
            return
        step = self.next_step(job)
        if step is None:
            if opening:
                yield Say(text=opening)
            return
        if isinstance(step, str):
            yield Say(text=f"{opening} {step}".strip())
            if job.confirmed or job.called_off:
                self.ledger.append(Entry("confirmed"))
            return
        name, tool, args, words = step
        async for action in self.fire(name, tool, args, f"{opening} {words}".strip()):
            yield action

    def is_stale(self, job: Folded, call: dict[str, Any]) -> bool:
        if job.called_off:
            return True
        return call["step"] in ("lookup", "write") and call["version"] != self.version

    def next_step(self, job: Folded) -> str | tuple[str, str, dict[str, Any], str] | None:
        if job.kind is None:
            return "Do you want to change an order or get a refund?"
        if job.called_off:
            return None if job.confirmed else "Okay, I've stopped it. Nothing was changed."
        order = job.wanted.get("order_id")
        if order is None:
            return "What's the order number?"
        if job.confirmed:
            return "Anything else I can help with?"
        if job.kind == "update" and job.record is None and "lookup_order" in self.available:
            words = "Let me read the order again." if job.odd_reads else "Checking your order."
            if job.odd_reads > ATTEMPTS:
                self.ledger.append(Entry("forget_order"))
                return "I can't find that order. Could you repeat the number?"
            return ("lookup", "lookup_order", {"order_id": order}, words)
        if job.written is None:
            return self.write_step(job, order)
        if job.verified is None:
            verify = self.verify_step(job)
            if verify is not None:
                return verify
        self.ledger.append(Entry("confirmed"))
        return self.confirmation(job, job.verified or job.written)

    def write_step(self, job: Folded, order: str) -> str | tuple[str, str, dict[str, Any], str]:
        if job.kind == "refund":
            if "amount" not in job.wanted:
                return "How much should the refund be?"
            args = {"order_id": order, "amount": job.wanted["amount"]}
            return ("write", "issue_refund", args, "Booking the refund.")
        changes: dict[str, Any] = {
            k: job.wanted[k] for k in ("quantity", "delivery_date") if k in job.wanted
        }
        if not changes:
            return "What would you like to change, the quantity or the delivery date?"
        return ("write", "update_order", {"order_id": order, **changes}, "Making the change.")

    def verify_step(self, job: Folded) -> tuple[str, str, dict[str, Any], str] | None:
        assert job.written is not None
        if job.kind == "refund" and "get_refund" in self.available and job.written.get("refund_id"):
            args = {"refund_id": job.written["refund_id"]}
            return ("verify", "get_refund", args, "Checking the booking.")
        if job.kind == "update" and "lookup_order" in self.available:
            return ("verify", "lookup_order", {"order_id": job.wanted["order_id"]}, "Verifying.")
        return None

    def confirmation(self, job: Folded, stored: dict[str, Any]) -> str:
        order = stored.get("order_id", job.wanted.get("order_id"))
        if job.kind == "refund":
            return f"Confirmed: {stored.get('amount')} euros refunded on order {order}."
        said = []
        if "quantity" in job.wanted:
            said.append(f"quantity {stored.get('quantity')}")
        if "delivery_date" in job.wanted and stored.get("delivery_date"):
            said.append(f"delivery on {day_month_year(str(stored['delivery_date']))}")
        return f"Confirmed: order {order}, {' and '.join(said)}. Anything else?"

    async def fire(
        self, step: str, tool: str, args: dict[str, Any], words: str
    ) -> AsyncIterator[Action]:
        job = self.fold()
        repeat = job.last_failed if job.last_failed and job.last_failed["args"] == args else None
        self.ids += 1
        call = {
            "call_id": f"{tool}#{self.ids}",
            "step": step,
            "tool": tool,
            "args": args,
            "version": self.version,
            "order_id": args.get("order_id"),
            # A retry of a failed write reuses its key; any other write gets a new one.
            "key": (repeat or {}).get("key") or f"{self.context.conversation_id}/{self.ids}"
            if step == "write"
            else None,
        }
        yield Say(text=words)
        # Written down before each yield: a barge-in closes this generator right after the
        # action is taken, and nothing after that yield runs.
        self.ledger.append(Entry("prepared", call))
        yield PrepareToolCall(
            call_id=call["call_id"],
            tool=tool,
            args=args,
            state_version=self.version,
            idempotency_key=call["key"],
        )
        self.ledger.append(Entry("sent", {"call_id": call["call_id"]}))
        yield SendToolCall(call_id=call["call_id"])
        yield Say(text="One moment.")
