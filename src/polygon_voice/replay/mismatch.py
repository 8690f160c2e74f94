"""Whether the next recorded caller line still fits what the new agent said (a fixed rule).

Before the replay plays recorded caller line k+1 it compares the new agent's turn (all it
said since caller line k) with the recorded agent's turn at the same point. The line no
longer fits — a *mismatch* — when one of two things holds:

* **asks_again**: the new turn asks for a detail (an order number, a date, a name, an
  e-mail, ... — the fact kinds of `caller.facts.FORMS`) that the caller's earlier lines
  already gave, and the recorded turn did not ask for it. A line "gave" a detail when it
  names the detail with a value ("my order number is 5590"), or carries a value right after
  a recorded turn that asked for that detail. A value is what that kind of detail looks
  like: an e-mail address has an "@"; a number, a phone, a postcode, an id, a quantity or
  an amount has digits; a name, an address, a product or a date may be words. A delivery
  date and a date are one detail.
* **answered_else**: the two turns are worded differently (word-bigram Jaccard below 0.5,
  the divergence rule of `compare.divergence`) and are of different kinds: one asks a
  question and the other does not, one confirms something done and the other refuses, or
  both ask, but for different details. Not when the next recorded line gives what the new
  turn asks for (it still answers it), and not when the recorded agent said nothing there
  (there is nothing to compare with).

Questions, requests, details asked for, "done" and negations are read with the persona
caller's keyword tables (`caller.intents`), in English, German, Croatian and Russian; other
languages are read with the English tables. The rule reads words, not meaning: it is a
cheap first signal, evaluated on labelled cases in docs/replay.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from polygon_voice.caller.facts import FORMS
from polygon_voice.caller.intents import NEGATION as _NEGATION_TABLE
from polygon_voice.caller.intents import (
    Heard,
    Vocabulary,
    compile_phrases,
    hear,
    named_facts,
    normalise,
    vocabulary,
)
from polygon_voice.caller.phrases import LANGUAGES
from polygon_voice.compare.divergence import WORDING_THRESHOLD, wording_similarity

Rule = Literal["asks_again", "answered_else"]
Kind = Literal["asks", "refuses", "confirms", "says", "silent"]

# What a value of each kind of detail looks like in a caller's line: an e-mail has an "@",
# these kinds have digits, and the rest (a name, an address, a product, a date said in
# words) any words.
_EMAIL = re.compile(r"@|\bat\b.*\bdot\b")
_DIGITS = re.compile(r"\d")
_NUMERIC = frozenset(
    {"order_id", "phone", "postcode", "customer_id", "account_number", "quantity", "amount"}
)
# Kinds of detail an agent asks for under either name ("the date" of a delivery).
_SAME_AS = {"delivery_date": "date"}
_BARE_ANSWER = re.compile(
    r"^(?:yes|no|yeah|yep|nope|ok|okay|sure|right|correct|thanks|thank you|ja|nein|genau|"
    r"da|ne|nije|нет|да|хорошо)$"
)


@dataclass(frozen=True)
class Mismatch:
    """Why the next recorded caller line no longer fits, and which part of the rule saw it."""

    rule: Rule
    reason: str


@dataclass(frozen=True)
class Exchange:
    """A caller line already played, with the recorded agent turn it answered."""

    agent: str
    caller: str


def rule_language(language: str) -> str:
    """The keyword tables a language is read with: its own, else English."""
    code = language.strip().lower().replace("_", "-").split("-")[0]
    return code if code in LANGUAGES else "en"


@cache
def _words(language: str) -> Vocabulary:
    # Every fact kind is "known": the rule asks which details a turn names, not a persona's.
    return vocabulary(language, tuple(FORMS))


@cache
def _negation(language: str) -> re.Pattern[str]:
    return compile_phrases(_NEGATION_TABLE[language])


def kind_of(heard: Heard, language: str) -> Kind:
    """What a turn does: asks, refuses, confirms something done, or only says something."""
    if heard.empty:
        return "silent"
    if heard.question:
        return "asks"
    if _negation(language).search(normalise(heard.text)):
        return "refuses"
    return "confirms" if heard.done else "says"


def given_details(history: Sequence[Exchange], language: str) -> dict[str, int]:
    """The details the caller's lines gave, each with the 1-based line that first gave it."""
    words = _words(language)
    given: dict[str, int] = {}
    for number, exchange in enumerate(history, start=1):
        line = normalise(exchange.caller)
        asked = hear(exchange.agent, words).asked if exchange.agent else ()
        for key in named_facts(line, words):
            if _has_value(exchange.caller, line, key, named=True):
                given.setdefault(_kind(key), number)
        for key in asked:
            if _has_value(exchange.caller, line, key, named=False):
                given.setdefault(_kind(key), number)
    return given


def _kind(key: str) -> str:
    return _SAME_AS.get(key, key)


def _has_value(raw: str, line: str, key: str, *, named: bool) -> bool:
    """Whether a caller's line carries a value of that kind of detail."""
    if key == "email":
        return _EMAIL.search(raw.casefold()) is not None
    if key in _NUMERIC:
        return _DIGITS.search(raw) is not None
    if _DIGITS.search(raw):
        return True
    if not line or _BARE_ANSWER.match(line):
        return False
    # "My name is Ana Horvat": more words than the detail's own name.
    return not named or len(line.split()) >= 3


def mismatch(
    recorded: str,
    new: str,
    history: Sequence[Exchange],
    next_line: str,
    language: str = "en",
) -> Mismatch | None:
    """The mismatch before `next_line` is played, or None when it still fits (module doc)."""
    language = rule_language(language)
    words = _words(language)
    heard_new, heard_recorded = hear(new, words), hear(recorded, words)
    again = _asks_again(heard_new, heard_recorded, history, language)
    if again is not None:
        return again
    if not recorded.strip():
        return None
    if wording_similarity(recorded, new) >= WORDING_THRESHOLD:
        return None
    if _next_line_answers(heard_new, next_line, language):
        return None
    return _other_kind(heard_recorded, heard_new, language)


def _asks_again(
    heard_new: Heard, heard_recorded: Heard, history: Sequence[Exchange], language: str
) -> Mismatch | None:
    given = given_details(history, language)
    recorded_asked = {_kind(key) for key in heard_recorded.asked}
    for key in dict.fromkeys(_kind(key) for key in heard_new.asked):
        if key in given and key not in recorded_asked:
            what = key.replace("_", " ")
            return Mismatch(
                "asks_again",
                f"the new agent asks for the {what}, which the caller already gave in line "
                f"{given[key]}",
            )
    return None


def _next_line_answers(heard_new: Heard, next_line: str, language: str) -> bool:
    if not heard_new.asked:
        return False
    given = given_details([Exchange(heard_new.text, next_line)], language)
    return any(_kind(key) in given for key in heard_new.asked)


def _other_kind(heard_recorded: Heard, heard_new: Heard, language: str) -> Mismatch | None:
    was, now = kind_of(heard_recorded, language), kind_of(heard_new, language)
    if was != now and {was, now} != {"confirms", "says"}:
        return Mismatch(
            "answered_else",
            f"the new agent answered something else: the recorded agent {_describe(was)}, "
            f"the new one {_describe(now)}",
        )
    asked_was = {_kind(key) for key in heard_recorded.asked}
    asked_now = {_kind(key) for key in heard_new.asked}
    if was == now == "asks" and asked_was and asked_now and not asked_was & asked_now:
        return Mismatch(
            "answered_else",
            f"the new agent asks for {_details(asked_now)} where the recorded agent asked "
            f"for {_details(asked_was)}",
        )
    return None


def _describe(kind: Kind) -> str:
    return {
        "asks": "asked a question",
        "refuses": "refused or said it could not",
        "confirms": "confirmed something done",
        "says": "made a statement",
        "silent": "said nothing",
    }[kind]


def _details(keys: set[str]) -> str:
    return ", ".join(sorted(key.replace("_", " ") for key in keys))
