"""A correct order-line agent written as production rules over a blackboard: after every
event the rules are tried in priority order, and the first whose condition holds acts.

Style: while a call runs it sets a timer and, each time the timer fires with the call
still out, says the same filler again as a turn of its own ("Still on it, one moment.");
dates as ordinal words ("the twentieth of December 2026"); amounts and counts in digits.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
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
    SetTimer,
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
SPLIT = "tuning"
DESCRIPTION = "production rules on a blackboard; timer fillers as their own turns; ordinal dates"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

FILLER_EVERY = 1.5  # seconds of silence before the next filler
FILLER = "Still on it, one moment."
ORDINALS = [
    "zeroth",
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
    "twentieth",
    "twenty-first",
    "twenty-second",
    "twenty-third",
    "twenty-fourth",
    "twenty-fifth",
    "twenty-sixth",
    "twenty-seventh",
    "twenty-eighth",
    "twenty-ninth",
    "thirtieth",
    "thirty-first",
]
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

R_ORDER = re.compile(r"(?<![\d-])(\d{4,})(?![\d-])")
R_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
R_COUNT = re.compile(r"\b(\d{1,3})\s+items?\b")
R_TARGET = re.compile(r"\b(?:to|make it|make that)\s+(\d{1,3})\b(?![\d-])")
R_MONEY = re.compile(r"\b(\d{1,4})\s*(?:euros?|eur)\b")
R_MORE = re.compile(r"\b(?:one|an?) more items?\b")
R_NO = re.compile(r"\b(?:don'?t|do not|stop|leave it|never mind)\b")
R_BYE = re.compile(r"\b(?:bye|that'?s all|no thanks|nothing else)\b")
R_HUMAN = re.compile(r"\b(?:human|person|representative|operator)\b")


def spoken_date(iso: str) -> str:
    day = date.fromisoformat(iso)
    return f"the {ORDINALS[day.day]} of {MONTHS[day.month - 1]} {day.year}"


@dataclass
class Board:
    """Everything the rules can see."""

    intent: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    more: int = 0
    cancelled_by_caller: bool = False
    out: dict[str, Any] | None = None  # the call in progress: id, goal, args, version, key, sent
    record: dict[str, Any] | None = None
    write_answer: dict[str, Any] | None = None
    read_back: dict[str, Any] | None = None
    closing: str | None = None  # said once the job is over
    told: bool = False
    strange_reads: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    heard_change: str = ""  # what the caller just changed, to say back


# A rule's output: actions to take, and notes to the board made just before the next action.
Step = Action | Callable[[], None]
Rule = tuple[str, Callable[[Board], bool], Callable[[Board], list[Step]]]


class Agent:
    """Rules in priority order; the first that applies acts."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context
        self.tools = set(context.tools)
        self.board = Board()
        self.version = 0
        self.count = 0
        self.pending_state: UpdateState | None = None
        self.retry_of: dict[str, Any] | None = None
        self.rules: list[Rule] = [
            ("stale call", self.has_stale_call, self.cancel_stale),
            ("unsent call", self.has_unsent_call, self.send_unsent),
            ("busy", lambda b: b.out is not None, lambda b: []),
            ("called off", lambda b: b.cancelled_by_caller and not b.told, self.say_stopped),
            ("finished", lambda b: b.told or b.cancelled_by_caller, self.offer_more),
            (
                "no intent",
                lambda b: b.intent is None,
                self.ask("Is it about an order change or a refund?"),
            ),
            (
                "no order",
                lambda b: "order_id" not in b.facts,
                self.ask("Which order number, please?"),
            ),
            ("look up", self.needs_lookup, self.look_up),
            (
                "no change",
                self.lacks_change,
                self.ask("What would you like changed: quantity or date?"),
            ),
            ("no amount", self.lacks_amount, self.ask("What amount should I refund?")),
            ("write", lambda b: b.write_answer is None, self.write),
            ("read back", self.needs_read_back, self.read),
            ("confirm", lambda b: not b.told, self.confirm),
        ]

    # -- events ----------------------------------------------------------------------------

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        board = self.board
        if isinstance(event, CallStarted):
            yield Say(text="Hello, order line here. What can I do for you?")
            return
        if isinstance(event, Silence):
            yield Say(text="Are you still with me? We can also call you back another time.")
            return
        if isinstance(event, TimerFired):
            if board.out is not None and board.out["sent"] and event.name == board.out["id"]:
                yield Say(text=FILLER)
                yield SetTimer(name=board.out["id"], seconds=FILLER_EVERY)
            return
        lead: list[Action] = []
        if isinstance(event, BargeIn) and event.text is None:
            lead = [Say(text="Sorry, some noise on the line there.")]
        elif isinstance(event, CallerSaid | BargeIn):
            text = event.text or ""
            if R_HUMAN.search(text.lower()):
                yield Say(text="Certainly, I'm transferring you to a colleague.")
                yield Transfer(target="human")
                return
            for action in self.learn(text):
                yield action
            if R_BYE.search(text.lower()) and board.out is None:
                yield Say(text="Thanks for calling. Goodbye!")
                yield EndCall(reason="caller finished")
                return
        elif isinstance(event, ToolResult):
            self.take_result(event)
        elif isinstance(event, ToolError):
            lead = self.take_error(event)
            if lead and isinstance(lead[-1], Transfer):
                for action in lead:
                    yield action
                return
        for action in lead:
            yield action
        async for action in self.fire_rules():
            yield action

    async def fire_rules(self) -> AsyncIterator[Action]:
        # Rules that only tidy up (cancel, send) let the next rule act in the same response.
        for _name, condition, act in self.rules:
            if not condition(self.board):
                continue
            for step in act(self.board):
                if callable(step):
                    step()
                else:
                    yield step
            if _name != "stale call":
                return

    # -- learning from the caller ------------------------------------------------------------

    def learn(self, text: str) -> list[Action]:
        board, low = self.board, text.lower()
        new: dict[str, Any] = {}
        if hits := R_ORDER.findall(text):
            new["order_id"] = hits[-1]
        if hits := R_DATE.findall(text):
            new["delivery_date"] = hits[-1]
        if "refund" in low or R_MONEY.search(low) or board.intent == "refund":
            board.intent = "refund"
            if hits := R_MONEY.findall(low):
                new["amount"] = int(hits[-1])
        else:
            if hits := (R_COUNT.findall(low) or R_TARGET.findall(low)):
                new["quantity"] = int(hits[-1])
            if R_MORE.search(low):
                board.more = 1
            if new or board.more or "order" in low or "deliver" in low:
                board.intent = board.intent or "update"
        actions: list[Action] = []
        changed = []
        had_facts = bool(board.facts)
        for name, value in new.items():
            if board.facts.get(name) == value:
                continue
            board.facts[name] = value
            self.version += 1
            actions.append(UpdateState(field=name, value=value, version=self.version))
            changed.append(name)
            if name == "order_id":
                board.record = None
            board.write_answer = board.read_back = None
            board.told = False
        board.heard_change = self.describe(changed) if changed and had_facts else ""
        if R_NO.search(low) and board.intent is not None and not board.cancelled_by_caller:
            board.cancelled_by_caller = True
            self.version += 1
            actions.append(UpdateState(field="execute", value=False, version=self.version))
        return actions

    def describe(self, names: list[str]) -> str:
        facts, parts = self.board.facts, []
        for name in names:
            if name == "delivery_date":
                parts.append(f"delivery on {spoken_date(facts[name])}")
            elif name == "quantity":
                parts.append(f"{facts[name]} items")
            elif name == "amount":
                parts.append(f"{facts[name]} euros")
            else:
                parts.append(f"order {facts[name]}")
        return ", ".join(parts)

    # -- tool answers --------------------------------------------------------------------------

    def current(self, call_id: str) -> dict[str, Any] | None:
        out = self.board.out
        return out if out is not None and out["id"] == call_id else None

    def take_result(self, event: ToolResult) -> None:
        board, out = self.board, self.current(event.call_id)
        if out is None or event.late:
            return  # cancelled, or superseded by a retry
        board.out = None
        answer = event.result if isinstance(event.result, dict) else None
        if out["goal"] == "lookup":
            if not answer or answer.get("order_id") != out["args"]["order_id"]:
                board.strange_reads += 1
                if board.strange_reads > 2:  # three odd answers: ask for the number again
                    board.strange_reads = 0
                    board.facts.pop("order_id", None)
                return  # else "look up" applies again: read it afresh
            board.record = answer
            if board.more and isinstance(answer.get("quantity"), int):
                board.facts["quantity"] = answer["quantity"] + board.more
                board.more = 0
                self.version += 1
                self.pending_state = UpdateState(
                    field="quantity", value=board.facts["quantity"], version=self.version
                )
        elif out["goal"] == "write":
            board.write_answer = answer or {}
        else:
            board.read_back = answer or {}

    def take_error(self, event: ToolError) -> list[Action]:
        board, out = self.board, self.current(event.call_id)
        if out is None:
            return []
        board.out = None
        if event.error == "not_found":
            board.facts.pop("order_id", None)
            board.record = None
            return [Say(text="I can't find that order number. Could you check it for me?")]
        board.errors[out["goal"]] = board.errors.get(out["goal"], 0) + 1
        if board.errors[out["goal"]] > 1 or event.error == "invalid_arguments":
            return [
                Say(text="Sorry, the system keeps failing. I'll pass you to a colleague."),
                Transfer(target="human"),
            ]
        self.retry_of = out  # the next call of this goal repeats it, under the same key
        return [Say(text="That didn't work, I'll try it again.")]

    # -- rule conditions -------------------------------------------------------------------------

    def has_stale_call(self, board: Board) -> bool:
        out = board.out
        if out is None:
            return False
        return board.cancelled_by_caller or (
            out["goal"] != "read" and out["version"] != self.version
        )

    def has_unsent_call(self, board: Board) -> bool:
        return board.out is not None and not board.out["sent"]

    def needs_lookup(self, board: Board) -> bool:
        return board.intent == "update" and board.record is None and "lookup_order" in self.tools

    def lacks_change(self, board: Board) -> bool:
        return board.intent == "update" and not {"quantity", "delivery_date"} & set(board.facts)

    def lacks_amount(self, board: Board) -> bool:
        return board.intent == "refund" and "amount" not in board.facts

    def needs_read_back(self, board: Board) -> bool:
        if board.read_back is not None or board.write_answer is None:
            return False
        if board.intent == "refund":
            return "get_refund" in self.tools and "refund_id" in board.write_answer
        return "lookup_order" in self.tools

    # -- rule actions ------------------------------------------------------------------------------

    def cancel_stale(self, board: Board) -> list[Step]:
        assert board.out is not None
        call_id, board.out = board.out["id"], None
        return [CancelToolCall(call_id=call_id)]

    def send_unsent(self, board: Board) -> list[Step]:
        assert board.out is not None
        board.out["sent"] = True  # built before a barge-in that changed nothing
        return [
            SendToolCall(call_id=board.out["id"]),
            SetTimer(name=board.out["id"], seconds=FILLER_EVERY),
        ]

    def ask(self, question: str) -> Callable[[Board], list[Step]]:
        return lambda board: self.speak(question)

    def speak(self, text: str) -> list[Step]:
        said, self.board.heard_change = self.board.heard_change, ""
        state = self.take_pending_state()
        return [*state, Say(text=f"Okay, {said}. {text}" if said else text)]

    def take_pending_state(self) -> list[Action]:
        pending, self.pending_state = self.pending_state, None
        return [pending] if pending is not None else []

    def say_stopped(self, board: Board) -> list[Step]:
        board.told = True
        return [Say(text="Alright, I've stopped that. Nothing was changed.")]

    def offer_more(self, board: Board) -> list[Step]:
        return [Say(text="Can I help with anything else?")]

    def look_up(self, board: Board) -> list[Step]:
        again = board.strange_reads > 0
        words = "That record doesn't match, reading it again." if again else "Let me find it."
        return self.call("lookup", "lookup_order", {"order_id": board.facts["order_id"]}, words)

    def write(self, board: Board) -> list[Step]:
        facts = board.facts
        if board.intent == "refund":
            args = {"order_id": facts["order_id"], "amount": facts["amount"]}
            return self.call("write", "issue_refund", args, "I'm booking the refund now.")
        changes: dict[str, Any] = {k: facts[k] for k in ("quantity", "delivery_date") if k in facts}
        args = {"order_id": facts["order_id"], **changes}
        return self.call("write", "update_order", args, "I'm updating the order now.")

    def read(self, board: Board) -> list[Step]:
        assert board.write_answer is not None
        if board.intent == "refund":
            args = {"refund_id": board.write_answer["refund_id"]}
            return self.call("read", "get_refund", args, "Checking the booking.")
        return self.call("read", "lookup_order", {"order_id": board.facts["order_id"]}, "Checking.")

    def confirm(self, board: Board) -> list[Step]:
        board.told = True
        stored = board.read_back or board.write_answer or {}
        order = stored.get("order_id", board.facts["order_id"])
        if board.intent == "refund":
            return self.speak(f"Done: {stored.get('amount')} euros refunded on order {order}.")
        parts = []
        if "quantity" in board.facts:
            parts.append(f"{stored.get('quantity')} items")
        if "delivery_date" in board.facts and stored.get("delivery_date"):
            parts.append(f"delivery on {spoken_date(str(stored['delivery_date']))}")
        return self.speak(f"Done: order {order} now has {' and '.join(parts)}. Anything else?")

    def call(self, goal: str, tool: str, args: dict[str, Any], words: str) -> list[Step]:
        self.count += 1
        retry, self.retry_of = self.retry_of, None
        key = None
        if goal == "write":
            same = retry is not None and retry["goal"] == "write" and retry["args"] == args
            key = (
                retry["key"]
                if retry is not None and same
                else f"{self.context.conversation_id}:{self.count}"
            )
        out = {
            "id": f"{goal}-{self.count}",
            "goal": goal,
            "args": args,
            "version": self.version,
            "key": key,
            "sent": False,
        }
        board = self.board
        prepare = PrepareToolCall(
            call_id=out["id"],
            tool=tool,
            args=args,
            state_version=self.version,
            idempotency_key=key,
        )
        # The board notes each step just before the engine takes it: a barge-in closes the
        # stream right after an action, and what comes after it never happens.
        return [
            *self.speak(words),
            lambda: setattr(board, "out", out),
            prepare,
            lambda: out.__setitem__("sent", True),
            SendToolCall(call_id=out["id"]),
            SetTimer(name=out["id"], seconds=FILLER_EVERY),
        ]
