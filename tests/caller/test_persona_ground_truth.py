# ruff: noqa: RUF001
"""SIM-1: every number a persona caller says is one of its facts, whatever it is asked."""

from __future__ import annotations

import datetime as dt
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.agents import Agent
from polygon_voice.caller.intents import normalise
from polygon_voice.caller.phrases import LANGUAGES, PHRASES
from polygon_voice.model import Outcome, Persona, PersonaType
from polygon_voice.noise.languages import DIGIT_WORDS
from tests.caller.agents import FormAgent, QuestionAgent
from tests.caller.conftest import call, caller_lines

GOALS = {
    "en": "Change the quantity of order {order} to {quantity}.",
    "de": "Die Menge der Bestellung {order} auf {quantity} ändern.",
    "hr": "Promijeniti količinu narudžbe {order} na {quantity}.",
    "ru": "Изменить количество в заказе {order} на {quantity}.",
}

# Questions full of numbers the caller must not repeat, and about facts it does not have.
PROBING = {
    "en": ["So that's order 1234 with 77 pieces, right?", "What is your postcode?", "Is it 42?"],
    "de": ["Also Bestellung 1234 mit 77 Stück, richtig?", "Wie ist Ihre Postleitzahl?", "42?"],
    "hr": ["Dakle, narudžba 1234, 77 komada, točno?", "Koji je Vaš poštanski broj?", "42?"],
    "ru": ["Итак, заказ 1234, 77 штук, верно?", "Какой у вас почтовый индекс?", "42?"],
}


def number_words(language: str) -> set[str]:
    return {normalise(word) for word in DIGIT_WORDS[language]}


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(list(PersonaType)),
    outcome=st.sampled_from(list(Outcome)),
    difficulty=st.integers(1, 5),
    seed=st.integers(0, 2**32),
    language=st.sampled_from(LANGUAGES),
    order=st.integers(1000, 999_999),
    quantity=st.integers(1, 99),
    delivery=st.dates(dt.date(2025, 1, 1), dt.date(2030, 12, 31)),
    probing=st.booleans(),
)
def test_every_number_the_caller_says_is_one_of_its_facts(
    kind: PersonaType,
    outcome: Outcome,
    difficulty: int,
    seed: int,
    language: str,
    order: int,
    quantity: int,
    delivery: dt.date,
    probing: bool,
) -> None:
    facts = {"order_id": str(order), "quantity": quantity, "delivery_date": delivery.isoformat()}
    persona = Persona(
        type=kind,
        intended_outcome=outcome,
        difficulty=difficulty,
        goal=GOALS[language].format(order=order, quantity=quantity),
        facts=facts,
    )
    agent: Agent = QuestionAgent(PROBING[language]) if probing else FormAgent(language=language)
    allowed = {digits for value in facts.values() for digits in re.findall(r"\d+", str(value))}
    for line in caller_lines(call(agent, persona, language=language, seed=seed)):
        assert set(re.findall(r"\d+", line)) <= allowed, line
        assert not set(normalise(line).split()) & number_words(language), line


def test_the_phrase_tables_hold_no_numbers() -> None:
    for language, phrases in PHRASES.items():
        for field, lines in vars(phrases).items():
            for line in lines if isinstance(lines, tuple) else (lines,):
                text = line.replace("{value}", "")
                assert not re.search(r"\d", text), (language, field, line)
                assert not set(normalise(text).split()) & number_words(language), line
