"""A careful order-line agent whose steps are methods, so one flaw can be planted per agent.

Written from the public agent protocol only (docs/agents.md, docs/three-layer.md): it
understands corrections, interruptions and "no, don't"; reports its working state with
UpdateState under the tool arguments' names and a new version per change; builds every
call on the current version; cancels stale calls, prepared or running; ignores background
noise; reads a suspicious record again; keys writes and reuses the key on a retry; reads
a write back before it confirms; and confirms what the backend holds.

Every tuning-split flawed agent (`flawed_*.py`) subclasses `CarefulAgent` and overrides
the one step that carries its flaw; the held-out ones build on `_phase_core.py`, written
apart. This module is not an agent itself: the evaluation skips files starting with `_`.

One agent on one suite, from the project's root:

    python -m polygon_voice run three-layer --agent bench.adversarial.agents.flawed_stale_args:Agent

(or `polygon run SUITE --agent /absolute/path/to/flawed_stale_args.py:Agent`: a relative
file path is read from the suite file's folder).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
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
    TimerFired,
    ToolError,
    ToolResult,
    Transfer,
    UpdateState,
)

LOOKUP, UPDATE, REFUND, GET_REFUND = "lookup_order", "update_order", "issue_refund", "get_refund"
WRITE_TOOLS = (UPDATE, REFUND)

ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
ORDER_ID = re.compile(r"(?<![\d-])(\d{4,})(?![\d-])")
ITEMS = re.compile(r"\b(\d{1,3}|[a-z]+)\s+(?:more\s+)?items?\b")
EUROS = re.compile(r"\b(\d{1,4})\s*(?:euros?|eur|€)")
TO_NUMBER = re.compile(r"\b(?:to|make it|make that|change it to)\s+(\d{1,3})\b(?!\s*(?:euro|eur))")
RELATIVE = re.compile(r"\badd\s+(\d{1,3}|[a-z]+)\s+more\b|\b(one|another)\s+more\b")
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "another": 1,
}  # fmt: skip
CALL_OFF = re.compile(r"\b(don'?t|do not|stop|leave it|never ?mind|cancel (?:it|that))\b")
GOODBYE = re.compile(r"\b(bye|goodbye|that'?s all|that is all|no,? thanks|nothing else)\b")
HUMAN = re.compile(r"\b(human|person|representative|operator|colleague)\b")
CALLBACK = re.compile(r"\bcall(?:ing)? me back\b|\bcallback\b")
MAX_REREADS = 2


def number_from(token: str) -> int | None:
    """A quantity spoken as digits or as a small number word."""
    if token.isdigit():
        return int(token)
    return NUMBER_WORDS.get(token.lower())


@dataclass
class Heard:
    """What one caller utterance asks for; the last mention of each detail wins."""

    values: dict[str, Any] = field(default_factory=dict)
    refund: bool = False
    add_items: int | None = None
    call_off: bool = False
    goodbye: bool = False
    human: bool = False
    callback: bool = False


def hear(text: str) -> Heard:
    """Read one utterance: order number, quantity, date, amount, and the caller's intent."""
    lowered = text.lower()
    heard = Heard(refund="refund" in lowered)
    dates = ISO_DATE.findall(text)
    if dates:
        heard.values["delivery_date"] = dates[-1]
    rest = ISO_DATE.sub(" ", lowered)
    ids = ORDER_ID.findall(rest)
    if ids:
        heard.values["order_id"] = ids[-1]
    amounts = EUROS.findall(rest)
    if amounts:
        heard.values["amount"] = int(amounts[-1])
    relative = RELATIVE.search(rest)
    if relative:
        heard.add_items = number_from(relative.group(1) or relative.group(2)) or 1
    else:
        quantity = _quantity(rest)
        if quantity is not None and not heard.refund:
            heard.values["quantity"] = quantity
    heard.call_off = bool(CALL_OFF.search(lowered))
    heard.goodbye = bool(GOODBYE.search(lowered))
    heard.human = bool(HUMAN.search(lowered))
    heard.callback = bool(CALLBACK.search(lowered))
    return heard


def _quantity(rest: str) -> int | None:
    found = [n for n in (number_from(m) for m in ITEMS.findall(rest)) if n is not None]
    if found:
        return found[-1]
    small = [int(m) for m in TO_NUMBER.findall(rest) if len(m) < 4]
    return small[-1] if small else None


@dataclass
class Call:
    """One tool call the agent made, and what it was for."""

    call_id: str
    tool: str
    args: dict[str, Any]
    purpose: str  # "check" (before the write), "write", "verify" (read-back after it)
    version: int
    key: str | None = None
    retries: int = 0
    rereads: int = 0
    open: bool = True  # awaited by the agent (neither answered nor given up)
    sent: bool = False  # False while only prepared (a barge-in came between the two)


class CarefulAgent:
    """Changes an order's quantity or date, or books a refund, and confirms the backend."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.state: dict[str, Any] = {}
        self.version = 0
        self.refund = False
        self.add_items: int | None = None
        self.called_off = False
        self.done = False
        self.checked: dict[str, Any] | None = None  # the record read before the write
        self.calls: dict[str, Call] = {}
        self.counter = 0
        self.silences = 0
        self.asked = 0
        self.reports: list[Action] = []
        self.said: set[str] = set()
        self.read_backs = 0  # a corrected read-back is worded anew: repeating is a loop

    # --- the event loop -------------------------------------------------------------

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Answer one event."""
        for action in self.actions_for(event):
            yield action

    def actions_for(self, event: Event) -> Iterator[Action]:
        """The actions for one event, produced lazily so a barge-in stops them."""
        if isinstance(event, CallStarted):
            yield Say(text=self.greeting())
        elif isinstance(event, BargeIn) and event.text is None:
            yield from self.on_noise()
        elif isinstance(event, CallerSaid | BargeIn) and event.text is not None:
            yield from self.on_words(event.text)
        elif isinstance(event, ToolResult):
            yield from self.on_result(event)
        elif isinstance(event, ToolError):
            yield from self.on_error(event)
        elif isinstance(event, Silence):
            yield from self.on_silence()
        elif isinstance(event, TimerFired):
            yield from self.on_timer(event.name)

    def on_timer(self, name: str) -> Iterator[Action]:
        """This agent sets no timers."""
        return iter(())

    def greeting(self) -> str:
        return "Hello, you have reached the order desk. How can I help you today?"

    # --- the caller ----------------------------------------------------------------

    def on_noise(self) -> Iterator[Action]:
        """Background noise is not an interruption: carry on with the request as it was."""
        if self.busy() or self.done or self.called_off:
            return
        if self.ready():
            yield Say(text="Sorry, there was a noise on the line. I am carrying on now.")
            yield from self.proceed()

    def on_words(self, text: str) -> Iterator[Action]:
        heard = hear(text)
        if heard.human:
            yield Say(text="Of course, I am putting you through to a colleague now.")
            yield Transfer(target="human")
            return
        if heard.callback:
            yield Say(text="Certainly, a colleague will call you back. Goodbye.")
            yield EndCall(reason="callback requested")
            return
        if heard.call_off:
            yield from self.call_off()
            return
        changed = self.take(heard)
        if heard.goodbye and not changed:
            yield from self.goodbye()
            return
        if changed:
            yield from self.cancel_stale(changed)
            self.done = False
        yield from self.next_step(changed)

    def take(self, heard: Heard) -> list[str]:
        """Adopt what the caller said; report each change with a new version."""
        if heard.refund:
            self.refund = True
        if heard.add_items is not None:
            self.add_items = heard.add_items
        changed = []
        for name, value in heard.values.items():
            if name == "quantity" and self.refund:
                continue
            if self.state.get(name) != value:
                changed.append(name)
                self.report(name, value)
        if heard.add_items is not None:
            changed.append("quantity")
        if "order_id" in changed:
            self.checked = None
        return changed

    def report(self, name: str, value: Any) -> None:
        """Adopt a value now; its UpdateState goes out with the next `flush`."""
        self.state[name] = value
        self.version += 1
        self.reports.append(UpdateState(field=name, value=value, version=self.version))

    def flush(self) -> Iterator[Action]:
        reports, self.reports = self.reports, []
        yield from reports

    def next_step(self, changed: list[str]) -> Iterator[Action]:
        yield from self.flush()
        if self.busy():
            return
        if self.done:
            yield Say(text="That change is already in place. Is there anything else?")
            return
        if "order_id" not in self.state:
            yield from self.ask("Which order is it about? Please tell me the order number.")
        elif not self.ready():
            yield from self.ask(f"What should I change on order {self.state['order_id']}?")
        else:
            yield from self.proceed()

    def ask(self, question: str) -> Iterator[Action]:
        self.asked += 1
        if self.asked > 3:
            yield Say(text="I am sorry, I cannot help without those details. Goodbye.")
            yield EndCall(reason="details missing")
            return
        yield Say(text=question if self.asked % 2 else f"Sorry, I still need that. {question}")

    def call_off(self) -> Iterator[Action]:
        """'No, don't': stop every write still open and report that nothing will run."""
        self.called_off = True
        for call in self.open_calls():
            if call.purpose == "write":
                yield CancelToolCall(call_id=call.call_id)
                call.open = False
        self.version += 1
        yield UpdateState(field="execute", value=False, version=self.version)
        order = self.state.get("order_id", "your order")
        yield Say(text=f"All right, I have stopped it. Order {order} stays as it is.")

    def goodbye(self) -> Iterator[Action]:
        yield Say(text="Thank you for calling. Goodbye!")
        yield EndCall(reason="caller is done")

    def on_silence(self) -> Iterator[Action]:
        self.silences += 1
        if self.silences > 2:
            yield Say(text="I will end the call now. Please call again any time. Goodbye.")
            yield EndCall(reason="caller silent")
            return
        yield Say(text="Are you still there?" if self.silences == 1 else "Hello, can you hear me?")

    # --- requests -----------------------------------------------------------------

    def ready(self) -> bool:
        if "order_id" not in self.state:
            return False
        if self.refund:
            return "amount" in self.state
        return bool({"quantity", "delivery_date"} & set(self.state)) or self.add_items is not None

    def busy(self) -> bool:
        return any(call.open for call in self.calls.values())

    def open_calls(self) -> list[Call]:
        return [call for call in self.calls.values() if call.open]

    def cancel_stale(self, changed: list[str]) -> Iterator[Action]:
        """A correction makes every open call built on the old details stale: cancel it."""
        for call in self.open_calls():
            if call.purpose == "verify":
                continue
            if call.purpose == "check" and "order_id" not in changed:
                continue
            yield from self.drop_stale(call)

    def drop_stale(self, call: Call) -> Iterator[Action]:
        """Cancel a call the caller's change made stale, whether prepared or already sent."""
        yield CancelToolCall(call_id=call.call_id)
        call.open = False

    def proceed(self) -> Iterator[Action]:
        """Check the order first when the backend can be read, then write."""
        if LOOKUP in self.tools and self.needs_check():
            order = self.state["order_id"]
            yield Say(
                text=self.fresh(f"Let me pull up order {order} first.", f"Checking {order} now.")
            )
            yield from self.place(LOOKUP, {"order_id": order}, "check")
            return
        yield from self.write()

    def fresh(self, text: str, instead: str) -> str:
        """`text`, or other words if it was said before (saying it twice reads as a loop)."""
        if text in self.said:
            return instead
        self.said.add(text)
        return text

    def needs_check(self) -> bool:
        return self.checked is None and not self.refund

    def write(self) -> Iterator[Action]:
        tool = REFUND if self.refund else UPDATE
        if tool not in self.tools:
            yield Say(text="I am sorry, I cannot do that here. Let me transfer you.")
            yield Transfer(target="human")
            return
        yield Say(text=self.read_back())
        self.read_backs += 1
        yield from self.place(tool, self.write_args(), "write", key=self.key_for(tool))

    def write_args(self) -> dict[str, Any]:
        if self.refund:
            return {"order_id": self.state["order_id"], "amount": self.state["amount"]}
        args = {"order_id": self.state["order_id"]}
        for name in ("quantity", "delivery_date"):
            if name in self.state:
                args[name] = self.state[name]
        return args

    def key_for(self, tool: str) -> str | None:
        return f"{self.context.conversation_id}/{tool}/v{self.version}"

    def read_back(self) -> str:
        order = self.state["order_id"]
        if self.refund:
            what = f"a refund of {self.state['amount']} euros on order {order}"
        else:
            what = f"order {order} with {self.wanted()}"
        if self.read_backs == 0:
            return f"I am putting through {what}."
        if self.read_backs == 1:
            return f"Thanks for correcting me. The new request is {what}; sending it now."
        return f"Understood, I have changed it again: {what}."

    def wanted(self) -> str:
        parts = []
        if "quantity" in self.state:
            parts.append(f"{self.state['quantity']} items")
        if "delivery_date" in self.state:
            parts.append(f"delivery on {self.state['delivery_date']}")
        return " and ".join(parts)

    def place(
        self, tool: str, args: dict[str, Any], purpose: str, key: str | None = None
    ) -> Iterator[Action]:
        """Prepare and send one call on the current state version."""
        self.counter += 1
        call = Call(f"{tool}-{self.counter}", tool, dict(args), purpose, self.version, key)
        self.calls[call.call_id] = call
        yield PrepareToolCall(
            call_id=call.call_id,
            tool=tool,
            args=call.args,
            state_version=self.version,
            idempotency_key=key,
        )
        call.sent = True
        yield SendToolCall(call_id=call.call_id)
        yield from self.after_send(call)

    def after_send(self, call: Call) -> Iterator[Action]:
        """Nothing to say while a call runs: its answer comes as the next event."""
        return iter(())

    # --- tool answers --------------------------------------------------------------

    def on_result(self, event: ToolResult) -> Iterator[Action]:
        call = self.calls.get(event.call_id)
        if call is None or not call.open or event.late:
            return  # cancelled, unknown, or a late answer we already gave up on
        call.open = False
        record = event.result if isinstance(event.result, dict) else {}
        if call.purpose == "check":
            yield from self.on_checked(call, record)
        elif call.purpose == "write":
            yield from self.on_written(call, record)
        else:
            yield from self.on_verified(call, record)

    def suspicious(self, call: Call, record: dict[str, Any]) -> bool:
        """An empty answer, or another record than the one asked for, is read again."""
        if not record:
            return True
        for name, value in call.args.items():
            if name in record and str(record[name]) != str(value):
                return True
        return False

    def reread(self, call: Call) -> Iterator[Action]:
        if call.rereads >= MAX_REREADS:
            yield Say(text="I cannot read that record reliably. Let me transfer you.")
            yield Transfer(target="human")
            return
        yield Say(text="That answer does not look right. I am reading the record again.")
        self.counter += 1
        again = Call(
            f"{call.tool}-{self.counter}",
            call.tool,
            dict(call.args),
            call.purpose,
            self.version,
            rereads=call.rereads + 1,
        )
        self.calls[again.call_id] = again
        yield PrepareToolCall(
            call_id=again.call_id, tool=again.tool, args=again.args, state_version=self.version
        )
        again.sent = True
        yield SendToolCall(call_id=again.call_id)

    def on_checked(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        if self.suspicious(call, record):
            yield from self.reread(call)
            return
        self.checked = record
        if self.add_items is not None:
            quantity = int(record.get("quantity", 0)) + self.add_items
            self.add_items = None
            self.report("quantity", quantity)
            yield from self.flush()
        yield from self.write()

    def on_written(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        verify = self.verify_call(call, record)
        if verify is None:
            yield from self.confirm(record)
            return
        tool, args = verify
        yield Say(text="The change went through. Let me read it back to be sure.")
        yield from self.place(tool, args, "verify")

    def verify_call(self, call: Call, record: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The read-back of a write: the same record through the backend's read tool."""
        if call.tool == UPDATE and LOOKUP in self.tools:
            return LOOKUP, {"order_id": call.args["order_id"]}
        if call.tool == REFUND and GET_REFUND in self.tools and record.get("refund_id"):
            return GET_REFUND, {"refund_id": str(record["refund_id"])}
        return None

    def on_verified(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        if self.suspicious(call, record):
            yield from self.reread(call)
            return
        yield from self.confirm(record)

    def confirm(self, record: dict[str, Any]) -> Iterator[Action]:
        """Say what the backend holds, not what the caller asked for."""
        self.done = True
        yield Say(text=self.confirmation(record) + " Is there anything else I can do?")

    def confirmation(self, record: dict[str, Any]) -> str:
        order = record.get("order_id", self.state.get("order_id"))
        if self.refund:
            return f"Done: a refund of {record.get('amount')} euros on order {order} is booked."
        parts = []
        if "quantity" in self.state:
            parts.append(f"{record.get('quantity')} items")
        if "delivery_date" in self.state:
            parts.append(f"delivery on {record.get('delivery_date')}")
        return f"Done: order {order} now has {' and '.join(parts)}."

    def on_error(self, event: ToolError) -> Iterator[Action]:
        call = self.calls.get(event.call_id)
        if call is None or not call.open:
            return
        call.open = False
        if event.error == "not_found":
            yield from self.not_found(call)
        elif event.error == "invalid_arguments" or call.retries >= 1:
            yield Say(text="I am sorry, our system is not working right now. Let me transfer you.")
            yield Transfer(target="human")
        else:
            yield from self.retry(call)

    def not_found(self, call: Call) -> Iterator[Action]:
        order = self.state.pop("order_id", None)
        self.checked = None
        yield Say(text=f"I could not find order {order}. Could you check the number for me?")

    def retry(self, call: Call) -> Iterator[Action]:
        """Try once more; a write keeps its idempotency key, so it cannot land twice."""
        yield Say(text="The system did not answer properly. I am trying once more.")
        self.counter += 1
        again = Call(
            f"{call.tool}-{self.counter}",
            call.tool,
            dict(call.args),
            call.purpose,
            call.version,
            key=self.retry_key(call),
            retries=call.retries + 1,
        )
        self.calls[again.call_id] = again
        yield PrepareToolCall(
            call_id=again.call_id,
            tool=again.tool,
            args=again.args,
            state_version=self.version,
            idempotency_key=again.key,
        )
        again.sent = True
        yield SendToolCall(call_id=again.call_id)
        yield from self.after_send(again)

    def retry_key(self, call: Call) -> str | None:
        return call.key
