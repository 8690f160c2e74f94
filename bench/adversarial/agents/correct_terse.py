"""A correct order-line agent whose `respond` is a plain function returning a list of
actions (no generator): when a barge-in drops the rest of a list, the agent works out from
the barge-in's point which of its actions happened. Each list holds at most one `Say`,
before at most one call, so the point says it all.

Style: terse; reads the request back before acting ("Order 5590: 3 items."), confirms
after the read-back; digits and ISO dates; handler per event kind in a dispatch table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
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
    TimerFired,
    ToolError,
    ToolResult,
    Transfer,
    UpdateState,
)

LABEL = "correct"
FLAW = None
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "plain-list responses; infers dropped actions from the barge-in point; terse"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

RX_ORDER = re.compile(r"(?<![\d-])(\d{4,})(?![\d-])")
RX_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
RX_QTY = (re.compile(r"\b(\d{1,3}) items?\b"), re.compile(r"\b(?:to|it|that) (\d{1,3})\b(?![\d-])"))
RX_EUR = re.compile(r"\b(\d{1,4}) ?(?:euros?|eur)\b")
RX_PLUS = re.compile(r"\b(?:one|an?) more item\b")
RX_NO = re.compile(r"\b(?:don'?t|do not|stop|leave it|never mind)\b")
RX_BYE = re.compile(r"\b(?:bye|that'?s all|no thanks|nothing else)\b")
RX_HUMAN = re.compile(r"\b(?:human|person|representative|operator)\b")
WRITE_TOOLS = ("update_order", "issue_refund")


@dataclass
class Pending:
    """A call of the last list, and how far the engine got with it."""

    call_id: str
    purpose: str  # find | write | check
    tool: str
    args: dict[str, Any]
    version: int
    key: str | None
    state: str = "planned"  # planned | prepared | sent | over


class Agent:
    """Slots in a dict; one handler per event kind."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.slots: dict[str, Any] = {}
        self.kind: str | None = None
        self.plus = 0
        self.off = False
        self.v = 0
        self.n = 0
        self.call: Pending | None = None
        self.found: dict[str, Any] | None = None
        self.wrote: dict[str, Any] | None = None
        self.checked: dict[str, Any] | None = None
        self.finished = False
        self.odd = 0
        self.fails: dict[str, int] = {}
        self.handlers: dict[type, Callable[[Any], list[Action]]] = {
            CallStarted: lambda _: [Say(text="Orders. Go ahead.")],
            Silence: lambda _: [Say(text="Still there? We can call you back instead.")],
            CallerSaid: lambda e: self.words(e.text),
            BargeIn: self.barge,
            ToolResult: self.result,
            ToolError: self.error,
            TimerFired: lambda _: [],
        }

    def respond(self, event: Event) -> list[Action]:
        return self.handlers[type(event)](event)

    # -- barge-ins: what of the last list happened? -------------------------------------

    def barge(self, event: BargeIn) -> list[Action]:
        call = self.call
        if call is not None and call.state == "planned":
            # The list stopped at its Say, right after its Prepare, or right after its Send.
            call.state = {"mid_speech": "over", "during_tool_prep": "prepared"}.get(
                event.point, "sent"
            )
            if call.state == "over":
                self.call = None
        if event.text is None:
            return self.carry_on("Noise on the line, sorry.")
        return self.words(event.text)

    # -- the caller ------------------------------------------------------------------------

    def words(self, text: str) -> list[Action]:
        low = text.lower()
        if RX_HUMAN.search(low):
            return [Say(text="Transferring you."), Transfer(target="human")]
        had = dict(self.slots)
        out: list[Action] = self.take(text, low)
        changed = bool(out)
        # A correction is acknowledged, so the next line never repeats the cut one.
        lead = f"Noted: {self.noted(had)}." if changed and had else ""
        if RX_NO.search(low) and self.kind is not None and not self.off:
            self.off = True
            self.v += 1
            out.append(UpdateState(field="execute", value=False, version=self.v))
            out += self.drop_call()
            self.finished = True
            return [*out, Say(text="Stopped. Nothing changed.")]
        if RX_BYE.search(low) and not self.waiting():
            return [*out, Say(text="Bye."), EndCall(reason="caller done")]
        if changed:
            out += self.drop_stale()
        return out + self.carry_on(lead)

    def noted(self, had: dict[str, Any]) -> str:
        new = {k: v for k, v in self.slots.items() if had.get(k) != v}
        parts = [f"order {new.pop('order_id')}"] if "order_id" in new else []
        if "amount" in new:
            parts.append(f"{new.pop('amount')} euros")
        if new:
            parts.append(self.readback(new))
        return ", ".join(parts)

    def take(self, text: str, low: str) -> list[Action]:
        got: dict[str, Any] = {}
        if m := RX_ORDER.findall(text):
            got["order_id"] = m[-1]
        if m := RX_DATE.findall(text):
            got["delivery_date"] = m[-1]
        if "refund" in low or RX_EUR.search(low) or self.kind == "refund":
            self.kind = "refund"
            if m := RX_EUR.findall(low):
                got["amount"] = int(m[-1])
        else:
            for rx in RX_QTY:
                if m := rx.findall(low):
                    got["quantity"] = int(m[-1])
                    break
            if RX_PLUS.search(low):
                self.plus = 1
            if got or "order" in low or "deliver" in low:
                self.kind = self.kind or "update"
        out: list[Action] = []
        for k, val in got.items():
            if self.slots.get(k) != val:
                if k == "order_id":
                    self.found = None
                self.slots[k] = val
                self.wrote = self.checked = None
                self.finished = False
                self.v += 1
                out.append(UpdateState(field=k, value=val, version=self.v))
        return out

    def waiting(self) -> bool:
        # A list that ended in a Send and met no barge-in was sent whole.
        return self.call is not None and self.call.state in ("planned", "sent")

    def drop_call(self) -> list[Action]:
        call, self.call = self.call, None
        if call is None or call.state == "over":
            return []
        return [CancelToolCall(call_id=call.call_id)]

    def drop_stale(self) -> list[Action]:
        if self.call is not None and self.call.purpose != "check" and self.call.version != self.v:
            return self.drop_call()
        return []

    # -- tools -----------------------------------------------------------------------------

    def result(self, event: ToolResult) -> list[Action]:
        call = self.call
        if event.late or call is None or call.call_id != event.call_id:
            return []
        self.call = None
        data = event.result if isinstance(event.result, dict) else None
        if call.purpose == "find":
            if not data or data.get("order_id") != call.args["order_id"]:
                self.odd += 1
                return self.carry_on("That record looks wrong. Reading again.")
            self.found = data
            if self.plus and isinstance(data.get("quantity"), int):
                self.slots["quantity"] = data["quantity"] + self.plus
                self.plus = 0
                self.v += 1
                bump = UpdateState(field="quantity", value=self.slots["quantity"], version=self.v)
                return [bump, *self.carry_on("")]
        elif call.purpose == "write":
            if call.version != self.v:
                return self.carry_on("")
            self.wrote = data or {}
        else:
            self.checked = data or {}
        return self.carry_on("")

    def error(self, event: ToolError) -> list[Action]:
        call = self.call
        if call is None or call.call_id != event.call_id:
            return []
        self.call = None
        if event.error == "not_found":
            self.slots.pop("order_id", None)
            self.found = None
            return [Say(text="No such order. Number again?")]
        self.fails[call.purpose] = self.fails.get(call.purpose, 0) + 1
        if self.fails[call.purpose] > 1 or event.error == "invalid_arguments":
            return [Say(text="System down, sorry. Passing you to a colleague."), Transfer()]
        # The same request once more, under the same key.
        return self.issue(call.purpose, call.tool, call.args, "Failed. Retrying.", call.key)

    # -- the next step ---------------------------------------------------------------------

    def carry_on(self, lead: str) -> list[Action]:
        call = self.call
        if call is not None and call.state == "prepared":
            call.state = "sent"  # built before words that changed nothing
            return [*([Say(text=lead)] if lead else []), SendToolCall(call_id=call.call_id)]
        if self.waiting():
            return [Say(text=lead)] if lead else []
        step = self.step()
        if isinstance(step, str):
            return [Say(text=f"{lead} {step}".strip())]
        if step is None:
            return [Say(text=lead)] if lead else []
        purpose, tool, args, words = step
        key = None
        if tool in WRITE_TOOLS:
            key = f"{self.context.conversation_id}-w{self.v}"
        return self.issue(purpose, tool, args, f"{lead} {words}".strip(), key)

    def issue(
        self, purpose: str, tool: str, args: dict[str, Any], words: str, key: str | None
    ) -> list[Action]:
        self.n += 1
        call = Pending(f"t{self.n}", purpose, tool, args, self.v, key)
        self.call = call
        # Assume the whole list runs; a barge-in corrects `state` (see `barge`).
        actions: list[Action] = [
            Say(text=words),
            PrepareToolCall(
                call_id=call.call_id,
                tool=tool,
                args=args,
                state_version=self.v,
                idempotency_key=key,
            ),
            SendToolCall(call_id=call.call_id),
        ]
        return actions

    def step(self) -> str | tuple[str, str, dict[str, Any], str] | None:
        s = self.slots
        if self.off:
            return None
        if self.kind is None:
            return "Change an order, or a refund?"
        if "order_id" not in s:
            return "Order number?"
        if self.finished:
            return "Anything else?"
        if self.kind == "update":
            if self.found is None and "lookup_order" in self.tools:
                if self.odd > 2:
                    self.odd = 0
                    s.pop("order_id")
                    return "Can't find it. Order number again?"
                return ("find", "lookup_order", {"order_id": s["order_id"]}, "Looking it up.")
            change: dict[str, Any] = {k: s[k] for k in ("quantity", "delivery_date") if k in s}
            if not change:
                return "New quantity or new date?"
            if self.wrote is None:
                return (
                    "write",
                    "update_order",
                    {"order_id": s["order_id"], **change},
                    f"Order {s['order_id']}: {self.readback(change)}. Saving.",
                )
            if self.checked is None and "lookup_order" in self.tools:
                return ("check", "lookup_order", {"order_id": s["order_id"]}, "Checking.")
            return self.final(self.checked or self.wrote, change)
        if "amount" not in s:
            return "Amount?"
        if self.wrote is None:
            args = {"order_id": s["order_id"], "amount": s["amount"]}
            return ("write", "issue_refund", args, f"Refund {s['amount']} euros. Booking.")
        refund_id = self.wrote.get("refund_id")
        if self.checked is None and refund_id is not None and "get_refund" in self.tools:
            return ("check", "get_refund", {"refund_id": refund_id}, "Checking.")
        return self.final(self.checked or self.wrote, {"amount": s["amount"]})

    def readback(self, change: dict[str, Any]) -> str:
        parts = []
        if "quantity" in change:
            parts.append(f"{change['quantity']} items")
        if "delivery_date" in change:
            parts.append(f"delivery {change['delivery_date']}")
        return ", ".join(parts)

    def final(self, stored: dict[str, Any], change: dict[str, Any]) -> str:
        self.finished = True
        order = stored.get("order_id", self.slots["order_id"])
        if "amount" in change:
            return f"Booked: {stored.get('amount')} euros back on order {order}. Anything else?"
        held = {k: stored.get(k) for k in change}
        return f"Saved. Order {order} now shows {self.readback(held)}. Anything else?"
