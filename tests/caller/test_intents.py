# ruff: noqa: RUF001
"""What the persona caller recognises in an agent's turn, per language, and the goal."""

from __future__ import annotations

import random

import pytest

from polygon_voice.caller.goal import first_person, guess_language, topic_of, usable_goal
from polygon_voice.caller.intents import Heard, hear, vocabulary

KEYS = ["order_id", "quantity", "delivery_date"]


def heard(text: str, language: str = "en", keys: list[str] = KEYS) -> Heard:
    return hear(text, vocabulary(language, keys))


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Could you tell me your order number?"),
        ("en", "I still need your order number."),
        ("de", "Können Sie mir Ihre Bestellnummer nennen?"),
        ("de", "Wie lautet Ihre Auftragsnummer?"),
        ("hr", "Možete li mi reći broj narudžbe?"),
        ("hr", "Koji je broj vase narudzbe?"),  # a recogniser that dropped the diacritics
        ("ru", "Назовите, пожалуйста, номер заказа."),
        ("ru", "Какой номер вашего заказа?"),
    ],
)
def test_a_question_about_the_order_number_is_recognised(language: str, text: str) -> None:
    result = heard(text, language)
    assert result.asked == ("order_id",)
    assert not result.proposal


@pytest.mark.parametrize(
    ("language", "text", "asked"),
    [
        (
            "en",
            "What would you like to change: the quantity or the delivery date?",
            ("quantity", "delivery_date"),
        ),
        ("de", "Wann sollen wir liefern?", ("delivery_date",)),
        ("hr", "Koju količinu želite?", ("quantity",)),
        ("ru", "Когда вам удобна доставка?", ("delivery_date",)),
    ],
)
def test_synonyms_and_inflections_name_the_fact(
    language: str, text: str, asked: tuple[str, ...]
) -> None:
    assert heard(text, language).asked == asked


def test_a_choice_is_a_proposal_and_a_request_is_not() -> None:
    assert heard("What would you like to change: the quantity or the delivery date?").proposal
    assert not heard("Could you tell me your order number?").proposal


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "So that's order 5590 with 3 pieces. Shall I go ahead?"),
        ("en", "Is that correct?"),
        ("de", "Also Bestellung 5590. Soll ich das so ändern?"),
        ("de", "Ist das richtig?"),
        ("hr", "Želite li da to promijenim?"),
        ("hr", "Je li to točno?"),
        ("ru", "Итак, заказ 5590. Оформить изменение?"),
        ("ru", "Хотите изменить количество?"),
    ],
)
def test_yes_no_questions_and_offers_are_proposals(language: str, text: str) -> None:
    result = heard(text, language)
    assert result.proposal
    assert result.asked == ()


@pytest.mark.parametrize(
    ("language", "done", "not_done"),
    [
        ("en", "Done: order 5590 is updated.", "Sorry, the order was not updated."),
        ("de", "Erledigt: Bestellung 5590 ist geändert.", "Die Bestellung wurde nicht geändert."),
        ("hr", "Gotovo: narudžba 5590 je promijenjena.", "Narudžba nije promijenjena."),
        ("ru", "Готово: заказ 5590 изменён.", "Заказ не изменён."),
    ],
)
def test_done_is_recognised_and_a_negation_is_not_done(
    language: str, done: str, not_done: str
) -> None:
    assert heard(done, language).done
    assert not heard(not_done, language).done


@pytest.mark.parametrize(
    ("language", "text", "flag"),
    [
        ("en", "This is Sam from the order line.", "identified"),
        ("de", "Hier spricht Sam von der Bestellhotline.", "identified"),
        ("hr", "Ovdje je Sam iz službe za narudžbe.", "identified"),
        ("ru", "Меня зовут Сэм, я оператор.", "identified"),
        ("en", "Thank you for calling. Goodbye!", "goodbye"),
        ("de", "Danke für Ihren Anruf. Auf Wiederhören!", "goodbye"),
        ("hr", "Hvala na pozivu. Doviđenja!", "goodbye"),
        ("ru", "Спасибо за звонок. До свидания!", "goodbye"),
        ("en", "Anything else?", "anything_else"),
        ("de", "Kann ich sonst noch etwas tun?", "anything_else"),
        ("hr", "Mogu li Vam još nečim pomoći?", "anything_else"),
        ("ru", "Могу ли я ещё чем-то помочь?", "anything_else"),
        ("en", "Sorry, could you repeat that?", "repeat"),
        ("de", "Wie bitte?", "repeat"),
        ("hr", "Molim?", "repeat"),
        ("ru", "Повторите, пожалуйста.", "repeat"),
    ],
)
def test_identification_goodbye_anything_else_and_repeat(
    language: str, text: str, flag: str
) -> None:
    assert getattr(heard(text, language), flag)


@pytest.mark.parametrize(
    ("language", "text", "unknown"),
    [
        ("en", "What is your postcode?", "postcode"),
        ("de", "Wie ist Ihre Postleitzahl?", "postcode"),
        ("hr", "Koji je Vaš poštanski broj?", "postcode"),
        ("ru", "Какой у вас почтовый индекс?", "postcode"),
        ("en", "And what's your favourite colour?", "?"),
        ("de", "Wie ist Ihre Lieblingsfarbe?", "?"),
    ],
)
def test_a_question_about_something_the_caller_does_not_have(
    language: str, text: str, unknown: str
) -> None:
    result = heard(text, language)
    assert result.unknown == unknown
    assert result.asked == ()


def test_an_open_question_asks_for_nothing_in_particular() -> None:
    for language, text in [
        ("en", "How can I help you today?"),
        ("de", "Wie kann ich Ihnen helfen?"),
        ("hr", "Kako Vam mogu pomoći?"),
        ("ru", "Чем могу помочь?"),
    ]:
        result = heard(text, language)
        assert (result.asked, result.unknown, result.proposal) == ((), None, False)


# --- the goal in the caller's words ---------------------------------------------------


@pytest.mark.parametrize(
    ("language", "goal", "said"),
    [
        (
            "en",
            "Change the quantity of order 5590 to 3.",
            "I'd like to change the quantity of order 5590 to 3.",
        ),
        (
            "de",
            "Die Menge der Bestellung 5590 auf 3 ändern.",
            "Ich möchte die Menge der Bestellung 5590 auf 3 ändern.",
        ),
        (
            "hr",
            "Promijeniti količinu narudžbe 5590 na 3.",
            "Želim promijeniti količinu narudžbe 5590 na 3.",
        ),
        (
            "ru",
            "Изменить количество в заказе 5590 на 3.",
            "Я хочу изменить количество в заказе 5590 на 3.",
        ),
    ],
)
def test_the_goal_is_said_in_the_first_person(language: str, goal: str, said: str) -> None:
    assert guess_language(goal) == language
    assert first_person(goal, language) == said


def test_a_goal_is_used_only_in_its_own_language_and_with_facts_the_caller_gives() -> None:
    facts = {"order_id": "5590", "quantity": 3}
    goal = "Change the quantity of order 5590 to 3."
    assert usable_goal(goal, facts, "en", {"order_id", "quantity"}) is not None
    assert usable_goal(goal, facts, "en", {"order_id"}) is None  # it holds the quantity back
    assert usable_goal(goal, facts, "de", {"order_id", "quantity"}) is None
    assert usable_goal("Change order 5590 to 7.", facts, "en", {"order_id", "quantity"}) is None


@pytest.mark.parametrize(
    ("goal", "keys", "topic"),
    [
        ("Move the delivery of order 5599 to 2026-12-20.", [], "change_delivery"),
        ("Die Bestellung 5590 stornieren.", [], "cancel_order"),
        ("Pomaknuti termin kod frizera.", [], "reschedule_appointment"),
        ("Поговорить с оператором.", [], "person"),
        ("", ["order_id", "quantity"], "change_order"),
        ("", ["name"], "general"),
    ],
)
def test_the_topic_comes_from_the_goal_or_the_facts(goal: str, keys: list[str], topic: str) -> None:
    assert topic_of(goal, keys) == topic


def test_random_is_not_needed_to_recognise() -> None:
    state = random.getstate()
    heard("Could you tell me your order number?")
    assert random.getstate() == state
