"""Guard rails on what the LLM caller says: no invented numbers, no breaking character.

A caller's facts are the only truth it may state (the judge compares the agent with them),
so a line that states a number found in no fact is not passed on; neither is a line in
which the model says it is an AI, a model or a simulation (simple patterns in en, de, hr
and ru, plus English in any call, since models slip into it). Numbers written as words
("five") are not checked.
"""

from __future__ import annotations

import re

from polygon_voice.model import Persona

_REVEALS = re.compile(
    "|".join(
        (
            # English
            r"\bas an (?:ai|a\.i\.|artificial intelligence)\b",
            r"\bi(?:'m| am) (?:just )?(?:an? )?(?:ai|a\.i\.|bot|chatbot|robot|language model"
            r"|computer program|simulat\w*|virtual (?:caller|customer|person))\b",
            r"\b(?:large )?language model\b",
            r"\b(?:llm|chatgpt|openai)\b",
            r"\bartificial intelligence\b",
            r"\bsimulat(?:ion|ed|ing|e)\b",
            r"\brole[- ]?play\w*",
            r"\bthis is (?:just |only )?a test\b",
            r"\b(?:test|fake) call\b",
            r"\bmy (?:persona|instructions|system prompt|prompt)\b",
            # German
            r"(?-i:\bKI\b)",
            r"\bsprachmodell\w*",
            r"\bkünstliche\w* intelligenz\b",
            r"\bsimulier\w*",
            r"\brollenspiel\w*",
            r"\btestanruf\w*",
            r"\bich bin (?:nur )?(?:ein )?(?:bot|chatbot|roboter|computerprogramm)\b",
            # Croatian
            r"\bumjetn\w* inteligencij\w*",
            r"\bjezičn\w* model\w*",
            r"\bsimulacij\w*",
            r"\bsimulira\w*",
            r"\bja sam (?:samo )?(?:bot|robot|chatbot|program)\b",
            r"\btestni poziv\w*",
            # Russian
            r"искусственн\w* интеллект\w*",
            r"языков\w* модел\w*",
            r"нейросет\w*",
            r"симуляци\w*",
            r"симулир\w*",
            r"ролев\w* игр\w*",
            r"тестов\w* звон\w*",
            r"(?:^|\s)я\s+(?:—\s*)?(?:просто\s+)?(?:бот|робот|чат-?бот|программа|ии)(?=$|[\s.,!?])",
        )
    ),
    re.IGNORECASE,
)
# Digits in groups, as numbers are said or written: "5590", "2026-12-20", "+385 91 234 5678".
_NUMBER = re.compile(r"\d+(?:[ .:/-]\d+)*")
_DIGITS = re.compile(r"\d+")


def reveals_simulation(text: str) -> bool:
    """Whether the line says or hints that the caller is an AI, a model or a simulation."""
    return _REVEALS.search(text) is not None


def fact_numbers(persona: Persona) -> frozenset[str]:
    """Every digit group of every fact, and each fact's digits run together."""
    found: set[str] = set()
    for value in persona.facts.values():
        text = str(value)
        runs = _DIGITS.findall(text)
        found.update(_plain(run) for run in runs)
        if runs:
            found.add(_plain("".join(runs)))
    return frozenset(found)


def invented_number(text: str, allowed: frozenset[str]) -> str | None:
    """The first number in `text` that is in no fact, or None.

    A number passes when all its digits together are a fact's ("091 234 5678" for
    "0912345678") or when each of its groups is a fact's group ("2026-12-20").
    """
    for match in _NUMBER.finditer(text):
        runs = _DIGITS.findall(match.group(0))
        if _plain("".join(runs)) in allowed:
            continue
        if all(_plain(run) in allowed for run in runs):
            continue
        return match.group(0)
    return None


def check_line(text: str, allowed: frozenset[str]) -> str | None:
    """Why the line must not be said (a reason for the model), or None when it may."""
    if reveals_simulation(text):
        return "it says or hints that you are an AI, a model, a bot or a simulation"
    number = invented_number(text, allowed)
    if number is not None:
        return f"it states {number}, which is not in your facts"
    return None


def _plain(digits: str) -> str:
    # "05" and "5" are the same number said aloud.
    return digits.lstrip("0") or "0"
