"""Tier 1's word lists per language (lexicon.toml), compiled once per language."""

from __future__ import annotations

import functools
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

LANGUAGES = ("en", "de", "hr", "ru")


@dataclass(frozen=True)
class WordLists:
    """One language's lists: phrases as patterns, single words as sets."""

    vague: re.Pattern[str]
    vague_in_rules: re.Pattern[str]
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
        key=_pattern(lists["key"]),
        strong=_pattern(lists["strong"]),
        negative=_pattern(lists["negative"]),
        imperative=frozenset(lists["imperative"]),
        stop=frozenset(lists["stop"]),
    )
