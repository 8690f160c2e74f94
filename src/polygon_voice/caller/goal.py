# ruff: noqa: RUF001
"""The caller's goal in its own words.

When the persona's goal is written in the caller's language and names only facts the
caller is ready to give, the caller says it in the first person ("Change the quantity of
order 5590 to 3." -> "I'd like to change the quantity of order 5590 to 3."). Otherwise —
a goal in another language, a goal naming facts the caller holds back, or no goal — it
says what the call is about from a topic line ("I'd like to change my order."), the
topic read from the goal's words or, without a goal, from the fact keys.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from functools import cache

from polygon_voice.caller.facts import canonical, spoken
from polygon_voice.caller.intents import compile_phrases, fold, normalise, phrases
from polygon_voice.caller.phrases import phrases_for
from polygon_voice.model.persona import FactValue

TOPICS: dict[str, dict[str, tuple[str, ...]]] = {
    "change_delivery": {
        "en": ("I'd like to move the delivery of my order.", "I need my delivery on another day."),
        "de": (
            "Ich möchte den Liefertermin meiner Bestellung verschieben.",
            "Die Lieferung soll an einem anderen Tag kommen.",
        ),
        "hr": ("Želim pomaknuti datum dostave.", "Dostava bi mi trebala doći neki drugi dan."),
        "ru": (
            "Я хочу перенести доставку заказа.",
            "Мне нужно, чтобы заказ привезли в другой день.",
        ),
    },
    "cancel_order": {
        "en": ("I want to cancel my order.", "I'd like to cancel an order."),
        "de": ("Ich möchte meine Bestellung stornieren.", "Ich will eine Bestellung stornieren."),
        "hr": ("Želim otkazati narudžbu.", "Trebam otkazati narudžbu."),
        "ru": ("Я хочу отменить заказ.", "Мне нужно отменить заказ."),
    },
    "change_order": {
        "en": ("I'd like to change my order.", "I need to change something on my order."),
        "de": (
            "Ich möchte meine Bestellung ändern.",
            "Ich muss an meiner Bestellung etwas ändern.",
        ),
        "hr": ("Želim promijeniti svoju narudžbu.", "Trebam nešto promijeniti u narudžbi."),
        "ru": ("Я хочу изменить заказ.", "Мне нужно кое-что поменять в заказе."),
    },
    "order_status": {
        "en": (
            "I'm calling about my order. Where is it?",
            "I'd like to know what's up with my order.",
        ),
        "de": (
            "Ich rufe wegen meiner Bestellung an. Wo bleibt sie?",
            "Ich möchte wissen, was mit meiner Bestellung los ist.",
        ),
        "hr": ("Zovem zbog narudžbe. Gdje je zapela?", "Zanima me što je s mojom narudžbom."),
        "ru": ("Я звоню по поводу заказа. Где он?", "Хочу узнать, что с моим заказом."),
    },
    "reschedule_appointment": {
        "en": ("I need to move my appointment.", "Can I change my appointment?"),
        "de": ("Ich muss meinen Termin verschieben.", "Kann ich meinen Termin ändern?"),
        "hr": ("Moram pomaknuti svoj termin.", "Mogu li promijeniti termin?"),
        "ru": ("Мне нужно перенести запись.", "Можно поменять время записи?"),
    },
    "cancel_appointment": {
        "en": ("I need to cancel my appointment.",),
        "de": ("Ich muss meinen Termin absagen.",),
        "hr": ("Moram otkazati termin.",),
        "ru": ("Мне нужно отменить запись.",),
    },
    "book_appointment": {
        "en": ("I'd like to book an appointment.", "Can I make an appointment?"),
        "de": ("Ich möchte einen Termin vereinbaren.", "Kann ich einen Termin bekommen?"),
        "hr": ("Želim se naručiti na termin.", "Mogu li dobiti termin?"),
        "ru": ("Я хочу записаться на приём.", "Можно записаться?"),
    },
    "billing": {
        "en": ("I have a question about my bill.",),
        "de": ("Ich habe eine Frage zu meiner Rechnung.",),
        "hr": ("Imam pitanje u vezi računa.",),
        "ru": ("У меня вопрос по счёту.",),
    },
    "complaint": {
        "en": ("I want to make a complaint.",),
        "de": ("Ich möchte mich beschweren.",),
        "hr": ("Želim uložiti prigovor.",),
        "ru": ("Я хочу подать жалобу.",),
    },
    "person": {
        "en": ("I'd like to speak to someone from your team.",),
        "de": ("Ich möchte mit einem Mitarbeiter sprechen.",),
        "hr": ("Želim razgovarati s nekim od zaposlenika.",),
        "ru": ("Я хочу поговорить с сотрудником.",),
    },
    "general": {
        "en": ("I need some help, please.",),
        "de": ("Ich bräuchte bitte Hilfe.",),
        "hr": ("Trebam pomoć, molim Vas.",),
        "ru": ("Мне нужна помощь.",),
    },
}

# Topic cues in any of the four languages; the first topic whose every group matches wins.
_CUES: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...] = (
    (
        "cancel_appointment",
        (
            phrases("cancel*|stornier*|absag*|otkaz*|отмен*"),
            phrases("appointment*|termin*|запис*|прием*"),
        ),
    ),
    (
        "reschedule_appointment",
        (
            phrases("move|reschedul*|postpon*|verschieb*|verleg*|pomakn*|odgod*|перенес*|перенос*"),
            phrases("appointment*|termin*|запис*|прием*"),
        ),
    ),
    ("book_appointment", (phrases("appointment*|termin*|naruč* se|запис*|прием*"),)),
    ("cancel_order", (phrases("cancel*|stornier*|otkaz*|отмен*"),)),
    ("change_delivery", (phrases("deliver*|liefer*|dostav*|isporuk*|достав*"),)),
    (
        "change_order",
        (phrases("change|modify|update|änder*|promijen*|izmijen*|измен*|помен*"),),
    ),
    (
        "order_status",
        (phrases("where|status|track*|wo ist|wo bleibt|gdje|где|статус"),),
    ),
    ("billing", (phrases("bill|invoice*|charge*|rechnung*|račun*|счет*"),)),
    (
        "complaint",
        (phrases("complain*|complaint*|beschwer*|reklamation*|prigovor*|žalb*|жалоб*|претензи*"),),
    ),
    (
        "person",
        (
            phrases(
                "person|human|someone|mensch*|mitarbeiter*|osob*|čovjek*|zaposlenik*|человек*|"
                "оператор*|сотрудник*"
            ),
        ),
    ),
)

_FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(phrases("the|a|an|to|of|my|i|and|for|is|please|with|on|in|it")),
    "de": frozenset(
        phrases(
            "der|die|das|den|dem|und|ich|ist|nicht|bitte|meine|meiner|auf|zu|mit|von|für|am|im|"
            "ein|eine|einen"
        )
    ),
    "hr": frozenset(phrases("je|i|na|u|za|da|se|moj|moja|moju|svoju|od|do|s|sa|iz|li|što")),
}
_MARKED = {"de": "äöüß", "hr": "čćđšž"}
_DIGITS = re.compile(r"\d+")

# How a goal written as a task starts, per language: English imperatives, German
# infinitive at the end, Croatian and Russian infinitive first.
_EN_VERBS = frozenset(
    phrases(
        "change|cancel|move|book|reschedule|update|check|ask|find|get|speak|talk|return|report|"
        "complain|pay|order|add|remove|confirm|know|learn|see|buy|renew|open|close|replace|fix|"
        "arrange|request|delay|postpone|set|make|swap|switch|upgrade|downgrade|track"
    )
)
_SELF_START = {
    "en": phrases("i|i'd|i'm|i've|my|we"),
    "de": phrases("ich|wir|mein|meine"),
    "hr": phrases("želim|trebam|moram|molim|htio|htjela|htjeli"),
    "ru": phrases("я|мне|хочу|нужно"),
}
_DE_LOWER = frozenset(
    phrases("die|der|das|den|dem|des|ein|eine|einen|einem|meine|meinen|meiner|mein")
)


def guess_language(text: str) -> str:
    """A rough guess of the goal's language (en, de, hr, ru) from letters and small words."""
    if re.search(r"[а-яё]", text.casefold()):
        return "ru"
    words = text.casefold().split()
    scores = {
        lang: sum(w.strip(".,!?") in fw for w in words) for lang, fw in _FUNCTION_WORDS.items()
    }
    for lang, letters in _MARKED.items():
        scores[lang] += 3 * sum(ch in letters for ch in text.casefold())
    best = max(scores, key=lambda lang: scores[lang])
    return best if scores[best] > scores["en"] else "en"


def topic_of(goal: str, keys: Sequence[str]) -> str:
    """What the call is about, from the goal's words, else from the fact keys."""
    norm = normalise(goal)
    for topic, groups in _CUES:
        if norm and all(_cue(group).search(norm) for group in groups):
            return topic
    names = {canonical(key) for key in keys}
    if "delivery_date" in names:
        return "change_delivery"
    if "quantity" in names:
        return "change_order"
    if names & {"date", "time"}:
        return "book_appointment"
    return "order_status" if "order_id" in names else "general"


@cache
def _cue(words: tuple[str, ...]) -> re.Pattern[str]:
    return compile_phrases(words)


def topic_line(topic: str, language: str, rng: random.Random) -> str:
    """One way to say what the call is about."""
    return rng.choice(TOPICS[topic][language])


def first_person(goal: str, language: str) -> str | None:
    """The goal as the caller's own wish, or None when its form is not recognised."""
    text = goal.strip().rstrip(".!").strip()
    if not text:
        return None
    first = text.split()[0].casefold()
    if first in _SELF_START[language]:
        return f"{text}."
    want = phrases_for(language).want
    if language == "en" and first in _EN_VERBS:
        return f"{want} {_lower_first(text)}."
    if language == "de" and re.search(r"(?:en|ern|eln)$", text.split()[-1]):
        lead = _lower_first(text) if first in _DE_LOWER else text
        return f"{want} {lead}."
    if language in ("hr", "ru") and re.search(r"(?:ti|ći|ть|ться|чь)$", first):
        return f"{want} {_lower_first(text)}."
    return None


def goal_facts(goal: str, facts: Mapping[str, FactValue], language: str) -> set[str] | None:
    """The facts a goal text states; None when it says a number that is not a fact (SIM-1)."""
    said = {key for key, value in facts.items() if _says(goal, spoken(value, language))}
    values = {spoken(facts[key], language) for key in said}
    stray = [d for d in _DIGITS.findall(goal) if not any(d in value for value in values)]
    return None if stray else said


def usable_goal(
    goal: str, facts: Mapping[str, FactValue], language: str, ready: set[str]
) -> tuple[str, set[str]] | None:
    """The goal in the first person and the facts it states, if the caller can say it now."""
    if not goal.strip() or guess_language(goal) != language:
        return None
    said = goal_facts(goal, facts, language)
    if said is None or not said <= ready:
        return None
    sentence = first_person(goal, language)
    return None if sentence is None else (sentence, said)


def _says(text: str, value: str) -> bool:
    pattern = rf"(?<!\w){re.escape(fold(value))}(?!\w)"
    return re.search(pattern, fold(text)) is not None


def _lower_first(text: str) -> str:
    first = text.split()[0]
    if first.isupper() and len(first) > 1:
        return text  # an acronym keeps its capitals
    return text[:1].lower() + text[1:]
