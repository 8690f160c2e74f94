# ruff: noqa: RUF001
"""Small hand-written agents that persona callers talk to in the tests (en, de, hr, ru).

`FormAgent` is a slot-filling order line in four languages: it greets, says who it is
when asked, asks for each missing detail (in other words the second time), reads the
details back and asks to go ahead (`confirm=True`), reports the change done, and hands
over, calls back or says goodbye when the caller asks. The others each do one thing a
test needs: ask fixed questions, read back a given text, stall, repeat themselves, or
build a tool call.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
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
    ToolResult,
    Transfer,
)

LINES: dict[str, dict[str, Any]] = {
    "en": {
        "greet": "Hello, this is the order line. How can I help?",
        "identify": "This is Sam from the order line of Polygon Shop.",
        "ask": {
            "order_id": (
                "Could you tell me your order number?",
                "Sorry, what is your order number?",
            ),
            "quantity": ("What quantity would you like?", "How many would you like?"),
            "delivery_date": ("When should we deliver?", "Which delivery date would you like?"),
        },
        "confirm": "So that's order {order_id}, {values}. Shall I go ahead?",
        "done": "Done: order {order_id} is updated. Anything else?",
        "more": "Is there anything else I can do for you?",
        "bye": "Thank you for calling. Goodbye!",
        "transfer": "I am putting you through to a colleague.",
        "callback": "We will call you back. Goodbye!",
    },
    "de": {
        "greet": "Guten Tag, hier ist die Bestellhotline. Wie kann ich helfen?",
        "identify": "Hier spricht Sam von der Bestellhotline von Polygon Shop.",
        "ask": {
            "order_id": (
                "Können Sie mir Ihre Bestellnummer nennen?",
                "Wie lautet Ihre Bestellnummer, bitte?",
            ),
            "quantity": ("Welche Menge möchten Sie?", "Wie viele Stück brauchen Sie?"),
            "delivery_date": ("Wann sollen wir liefern?", "Welchen Liefertermin möchten Sie?"),
        },
        "confirm": "Also Bestellung {order_id}, {values}. Soll ich das so ändern?",
        "done": "Erledigt: Bestellung {order_id} ist geändert. Kann ich sonst noch etwas tun?",
        "more": "Gibt es sonst noch etwas?",
        "bye": "Danke für Ihren Anruf. Auf Wiederhören!",
        "transfer": "Ich verbinde Sie mit einem Kollegen.",
        "callback": "Wir rufen Sie zurück. Auf Wiederhören!",
    },
    "hr": {
        "greet": "Dobar dan, ovdje služba za narudžbe. Kako Vam mogu pomoći?",
        "identify": "Ovdje je Sam iz službe za narudžbe trgovine Polygon.",
        "ask": {
            "order_id": (
                "Možete li mi reći broj narudžbe?",
                "Oprostite, koji je Vaš broj narudžbe?",
            ),
            "quantity": ("Koju količinu želite?", "Koliko komada trebate?"),
            "delivery_date": ("Kada želite dostavu?", "Koji datum dostave Vam odgovara?"),
        },
        "confirm": "Dakle, narudžba {order_id}, {values}. Želite li da to promijenim?",
        "done": "Gotovo: narudžba {order_id} je promijenjena. Mogu li Vam još nečim pomoći?",
        "more": "Trebate li još nešto?",
        "bye": "Hvala na pozivu. Doviđenja!",
        "transfer": "Spajam Vas s kolegom.",
        "callback": "Nazvat ćemo Vas. Doviđenja!",
    },
    "ru": {
        "greet": "Здравствуйте, служба заказов. Чем могу помочь?",
        "identify": "Меня зовут Сэм, я оператор службы заказов магазина Polygon.",
        "ask": {
            "order_id": (
                "Назовите, пожалуйста, номер заказа.",
                "Простите, какой у вас номер заказа?",
            ),
            "quantity": ("Какое количество вам нужно?", "Сколько штук вам нужно?"),
            "delivery_date": ("Когда вам удобна доставка?", "На какую дату нужна доставка?"),
        },
        "confirm": "Итак, заказ {order_id}, {values}. Оформить изменение?",
        "done": "Готово: заказ {order_id} изменён. Могу ли я ещё чем-то помочь?",
        "more": "Вам нужно что-нибудь ещё?",
        "bye": "Спасибо за звонок. До свидания!",
        "transfer": "Соединяю вас с оператором.",
        "callback": "Мы вам перезвоним. До свидания!",
    },
}

# What the agent listens for in the caller's words (lower-cased).
HEARS: dict[str, dict[str, re.Pattern[str]]] = {
    "en": {
        "who": re.compile(r"\bwho\b"),
        "human": re.compile(r"person|human|representative"),
        "callback": re.compile(r"call me back|call back"),
        "bye": re.compile(r"\bbye\b|goodbye"),
    },
    "de": {
        "who": re.compile(r"\bwer\b|mit wem"),
        "human": re.compile(r"mensch|mitarbeiter|person"),
        "callback": re.compile(r"zurückrufen"),
        "bye": re.compile(r"tschüss|wiederhören"),
    },
    "hr": {
        "who": re.compile(r"\btko\b|s kim"),
        "human": re.compile(r"osob|zaposlenik|čovjek"),
        "callback": re.compile(r"nazvati"),
        "bye": re.compile(r"doviđenja|\bbok\b"),
    },
    "ru": {
        "who": re.compile(r"\bкто\b(?!-)|с кем"),
        "human": re.compile(r"человек|оператор|сотрудник"),
        "callback": re.compile(r"перезвонить"),
        "bye": re.compile(r"до свидания|всего доброго"),
    },
}

VALUES = {
    "order_id": re.compile(r"(?<![\d-])\d{4,}(?![\d-])"),
    "quantity": re.compile(r"(?<![\d-])\d{1,3}(?![\d-])"),
    "delivery_date": re.compile(r"\d{4}-\d{2}-\d{2}"),
}


def words_of(event: Event) -> str | None:
    """The caller's words in a CallerSaid or a BargeIn (None for noise or other events)."""
    if isinstance(event, CallerSaid | BargeIn):
        return event.text
    return None


class FormAgent:
    """A slot-filling order line in en, de, hr or ru."""

    def __init__(
        self,
        context: AgentContext | None = None,
        *,
        language: str | None = None,
        needs: Sequence[str] = ("order_id", "quantity"),
        confirm: bool = True,
        identify: bool = True,
    ) -> None:
        self.language = language or (context.language if context else "en")
        self.lines = LINES[self.language]
        self.hears = HEARS[self.language]
        self.needs = list(needs)
        self.confirm = confirm
        self.identify = identify
        self.slots: dict[str, str] = {}
        self.asked: dict[str, int] = {}
        self.confirming = False
        self.finished = False

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Greet, then answer the caller's words."""
        if isinstance(event, CallStarted):
            yield Say(text=self.lines["greet"])
            return
        text = words_of(event)
        if text:
            for action in self.on_words(text):
                yield action

    def on_words(self, text: str) -> list[Action]:
        """What the agent does with one utterance of the caller."""
        lowered = text.lower()
        if self.hears["who"].search(lowered):
            return [Say(text=self.lines["identify"] if self.identify else self.next_question())]
        if self.hears["human"].search(lowered):
            return [Say(text=self.lines["transfer"]), Transfer(target="human")]
        if self.hears["callback"].search(lowered):
            return [Say(text=self.lines["callback"]), EndCall()]
        if self.hears["bye"].search(lowered):
            return [Say(text=self.lines["bye"]), EndCall()]
        self.capture(text)
        return [Say(text=self.next_question())]

    def capture(self, text: str) -> None:
        for slot in self.needs:
            match = VALUES[slot].search(text)
            if match and slot not in self.slots:
                self.slots[slot] = match.group(0)

    def next_question(self) -> str:
        missing = [slot for slot in self.needs if slot not in self.slots]
        if missing:
            count = self.asked.get(missing[0], 0)
            self.asked[missing[0]] = count + 1
            variants = self.lines["ask"][missing[0]]
            return str(variants[count % len(variants)])
        if self.confirm and not self.confirming and not self.finished:
            self.confirming = True
            values = ", ".join(self.slots[s] for s in self.needs if s != "order_id")
            return str(self.lines["confirm"].format(order_id=self.slots["order_id"], values=values))
        if self.finished:  # said it already; saying it again word for word would be a loop
            return str(self.lines["more"])
        self.finished = True
        return str(self.lines["done"].format(order_id=self.slots["order_id"]))


class QuestionAgent:
    """Greets, then asks its questions one per turn, then says goodbye."""

    def __init__(self, questions: Sequence[str], greeting: str = "Hello, order line.") -> None:
        self.questions = list(questions)
        self.greeting = greeting

    def respond(self, event: Event) -> list[Action]:
        if isinstance(event, CallStarted):
            return [Say(text=self.greeting)]
        if words_of(event) is None:
            return []
        if self.questions:
            return [Say(text=self.questions.pop(0))]
        return [Say(text="Thank you. Goodbye."), EndCall()]


class ScriptAgent:
    """Says its lines in order, one per caller utterance, then hangs up."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)

    def respond(self, event: Event) -> list[Action]:
        if not isinstance(event, CallStarted) and words_of(event) is None:
            return []
        if self.lines:
            return [Say(text=self.lines.pop(0))]
        return [EndCall()]


class NoddingAgent:
    """Never asks anything and never ends the call (the caller's budget must)."""

    NODS = ("Mm-hm.", "I see.", "Right.", "Okay.", "Go on.")

    def __init__(self) -> None:
        self.turn = 0

    def respond(self, event: Event) -> list[Action]:
        if not isinstance(event, CallStarted) and words_of(event) is None:
            return []
        self.turn += 1
        return [Say(text=self.NODS[self.turn % len(self.NODS)])]


class RepeatingAgent:
    """Asks for the order number again and again, in other words each time."""

    ASKS = (
        "Could you tell me your order number?",
        "And what was the order number again?",
        "Sorry, the order number, please?",
        "Can I have your order number once more?",
        "Let me check: what is your order number?",
    )

    def __init__(self) -> None:
        self.turn = 0

    def respond(self, event: Event) -> list[Action]:
        if isinstance(event, CallStarted):
            return [Say(text="Hello, order line.")]
        if words_of(event) is None:
            return []
        self.turn += 1
        return [Say(text=self.ASKS[self.turn % len(self.ASKS)])]


LOOKUP_TOOL = {
    "lookup": {
        "parameters": {"type": "object"},
        "stub": {"kind": "fixed", "returns": {"ok": True}},
        "latency": 12.0,
        "timeout": 30,
    }
}


class SlowAgent(FormAgent):
    """A FormAgent that looks something up (12 s, see LOOKUP_TOOL) before every answer."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.pending = ""
        self.calls = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, ToolResult):
            for action in self.on_words(self.pending):
                yield action
            return
        text = words_of(event)
        if isinstance(event, CallStarted):
            yield Say(text=self.lines["greet"])
        elif text:
            self.pending = text
            self.calls += 1
            yield Say(text="One moment, please.")
            yield PrepareToolCall(call_id=f"lookup-{self.calls}", tool="lookup", args={})
            yield SendToolCall(call_id=f"lookup-{self.calls}")


UPDATE_TOOL = {
    "update_order": {
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
        "stub": {"kind": "fixed", "returns": {"ok": True}},
        "latency": 0.5,
    }
}


class UpdatingAgent:
    """Builds an update from the caller's first words, then confirms and says goodbye."""

    def __init__(self) -> None:
        self.sent = False

    def respond(self, event: Event) -> list[Action]:
        if isinstance(event, CallStarted):
            return [Say(text="Hello, order line.")]
        if isinstance(event, ToolResult):
            return [Say(text="Done: the order is updated. Anything else?")]
        if words_of(event) is None:
            return []
        if not self.sent:
            self.sent = True
            prepare = PrepareToolCall(call_id="u1", tool="update_order", args={"order_id": "1"})
            return [Say(text="One moment."), prepare, SendToolCall(call_id="u1")]
        return [Say(text="Thank you. Goodbye."), EndCall()]
