"""Tier 1's word lists per language (lexicon.toml), compiled once per language."""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

LANGUAGES = ("en", "de", "hr", "ru")


@dataclass(frozen=True)
class VagueReadings:
    """The vague words whose reading depends on where they stand (lint/vague.py)."""

    language: str
    cases: re.Pattern[str]  # "if needed": vague in an order, exact when a condition follows
    judgement: re.Pattern[str]  # "appropriate": vague in an order, not "the relevant form"
    particular: re.Pattern[str]  # "bestimmt": "a particular X" in the singular
    attempt: re.Pattern[str]  # "try": a verb, not the noun, not forbidden
    parenthetical: re.Pattern[str]  # hedges only when set off by commas
    precise: re.Pattern[str]  # set phrases holding a vague word ("as soon as")
    bounds: re.Pattern[str]  # "within", "höchstens": before a number, the word is made exact
    opens_case: re.Pattern[str]  # "if", "wenn", "ako", "если"
    impressions: re.Pattern[str]  # "seems", "wirkt", "djeluje", "кажется"
    complements: re.Pattern[str]  # "that", "dass", "da", "что": reported content follows
    definite: re.Pattern[str]  # "the", "der": "the relevant form" picks one out
    determiners: re.Pattern[str]  # "the next", "novi": "attempt" is then the noun
    sequence: re.Pattern[str]  # "then", "dann": before an order's verb
    permissions: re.Pattern[str]  # "may", "darf": a permission, no order
    pairs: re.Pattern[str]  # "and", "or": two things named
    pronouns: re.Pattern[str]  # "it", "ihn", "ga": one thing referred to


@dataclass(frozen=True)
class WordLists:
    """One language's lists: phrases as patterns, single words as sets."""

    vague: re.Pattern[str]
    vague_in_rules: re.Pattern[str]
    vague_readings: VagueReadings
    key: re.Pattern[str]
    strong: re.Pattern[str]
    negative: re.Pattern[str]
    imperative: frozenset[str]
    stop: frozenset[str]


def _pattern(phrases: list[str]) -> re.Pattern[str]:
    parts = []
    # Longest first, so "if needed" wins over a shorter phrase inside it.
    for phrase in sorted(phrases, key=len, reverse=True):
        body = re.escape(phrase.rstrip("*")).replace(r"\ ", r"\s+")
        tail = r"\w*" if phrase.endswith("*") else ""
        # A phrase ending in "." already ends at a non-word character.
        end = "" if phrase.endswith(".") else r"(?!\w)"
        parts.append(rf"(?<!\w){body}{tail}{end}")
    return re.compile("|".join(parts), re.IGNORECASE)


@functools.cache
def word_lists(language: str) -> WordLists:
    """The lists of `language` (one of LANGUAGES)."""
    raw = tomllib.loads(resources.files(__package__).joinpath("lexicon.toml").read_text("utf-8"))
    lists = raw[language]
    return WordLists(
        vague=_pattern(lists["vague"]),
        vague_in_rules=_pattern(lists["vague_in_rules"]),
        vague_readings=_readings(language, lists),
        key=_pattern(lists["key"]),
        strong=_pattern(lists["strong"]),
        negative=_pattern(lists["negative"]),
        imperative=frozenset(lists["imperative"]),
        stop=frozenset(lists["stop"]),
    )


def _readings(language: str, lists: dict[str, list[str]]) -> VagueReadings:
    def pattern(key: str) -> re.Pattern[str]:
        # An empty list must match nothing (an empty pattern would match everywhere).
        return _pattern(lists[key]) if lists[key] else re.compile(r"(?!)")

    return VagueReadings(
        language=language,
        cases=pattern("vague_cases"),
        judgement=pattern("vague_judgement"),
        particular=pattern("vague_particular"),
        attempt=pattern("vague_attempt"),
        parenthetical=pattern("vague_parenthetical"),
        precise=pattern("precise"),
        bounds=pattern("bounds"),
        opens_case=pattern("cases"),
        impressions=pattern("impressions"),
        complements=pattern("complements"),
        definite=pattern("definite"),
        determiners=pattern("determiners"),
        sequence=pattern("sequence"),
        permissions=pattern("permissions"),
        pairs=pattern("pairs"),
        pronouns=pattern("pronouns"),
    )
