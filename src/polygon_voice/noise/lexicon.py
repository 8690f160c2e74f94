"""Word lists and their sound-alikes: real words of the language, grouped by phonetic key.

The lists are wordfreq's, shipped inside its wheel (no network): the most frequent
LEXICON_SIZE words of the language written in its own alphabet. wordfreq has no Croatian
list of its own, only one for Serbo-Croatian ('sh': Croatian, Serbian in Latin script and
Bosnian together). For Croatian we keep its Latin-script words spelled with the Croatian
alphabet and drop Serbian ekavian forms where the ijekavian form is also in the list
("lepo" when "lijepo" is there), plus a few Serbian words Croatian does not use. Some
Serbian and Bosnian words remain: see docs/noise.md.

A list is loaded on first use and kept for the life of the process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from polygon_voice.noise.phonetic import KeyFunction, key_function

LEXICON_SIZE = 40_000
# A sound-alike is at most this many letters away (1 for words of four letters or fewer):
# the same key alone would pair words a listener never confuses ("Haus" and "heiß").
MAX_DISTANCE = 2
SHORT_WORD = 4
# How many of the nearest sound-alikes a word may become.
CHOICES = 3
_CACHE_LIMIT = 100_000

_ALPHABET = {
    "en": re.compile(r"[a-z]{2,}"),
    "de": re.compile(r"[a-zäöüß]{2,}"),
    "ru": re.compile(r"[а-яё]{2,}"),
    "hr": re.compile(r"[abcčćdđefghijklmnoprsštuvzž]{2,}"),  # no q, w, x, y
}
_WORDFREQ_CODE = {"en": "en", "de": "de", "ru": "ru", "hr": "sh"}
# Serbian (and Bosnian) words in the shared list that the ekavian rule does not catch.
_NOT_CROATIAN = frozenset(
    {
        "ko",
        "šta",
        "hleb",
        "hleba",
        "voz",
        "voza",
        "vozom",
        "hiljadu",
        "hiljada",
        "hiljade",
        "hiljadama",
        "tačno",
        "uopšte",
        "opština",
        "opštine",
        "istorija",
        "istorije",
        "istoriju",
        "hemija",
        "porodica",
        "porodice",
        "porodicu",
        "bezbedno",
    }
)


@dataclass
class Lexicon:
    """One language's word list with its words grouped by phonetic key."""

    language: str
    words: frozenset[str]
    by_key: dict[str, tuple[str, ...]]
    key: KeyFunction
    _near: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def sound_alikes(self, word: str) -> tuple[str, ...]:
        """Up to CHOICES real words that sound like `word` (lower case), nearest first."""
        lowered = word.lower()
        found = self._near.get(lowered)
        if found is None:
            found = self._nearest(lowered)
            if len(self._near) >= _CACHE_LIMIT:
                self._near.clear()  # bounded: a run's vocabulary is small, fuzzing is not
            self._near[lowered] = found
        return found

    def _nearest(self, word: str) -> tuple[str, ...]:
        from jellyfish import levenshtein_distance

        limit = 1 if len(word) <= SHORT_WORD else MAX_DISTANCE
        scored = []
        # by_key keeps frequency order, so among equally near words the commoner comes first.
        for rank, other in enumerate(self.by_key.get(self.key(word), ())):
            distance = levenshtein_distance(word, other)
            if other != word and distance <= limit:
                scored.append((distance, rank, other))
        return tuple(other for _, _, other in sorted(scored)[:CHOICES])


@functools.cache
def lexicon(language: str) -> Lexicon:
    """The word list of a supported language (loaded on first use, then kept)."""
    words = list(islice(_filtered(language), LEXICON_SIZE))
    key = key_function(language)
    by_key: dict[str, list[str]] = {}
    for word in words:
        by_key.setdefault(key(word), []).append(word)
    return Lexicon(
        language=language,
        words=frozenset(words),
        by_key={k: tuple(group) for k, group in by_key.items()},
        key=key,
    )


def _filtered(language: str) -> Iterator[str]:
    import wordfreq

    # Read the file ourselves rather than through iter_wordlist, whose cache would keep all
    # of it (700,000 Russian words, ~100 MB) for the life of the process.
    path = wordfreq.available_languages("best")[_WORDFREQ_CODE[language]]
    alphabet = _ALPHABET[language]
    words = (w for band in wordfreq.read_cBpack(path) for w in band if alphabet.fullmatch(w))
    if language == "hr":
        return _croatian(words)
    return words


def _croatian(words: Iterable[str]) -> Iterator[str]:
    ranked = list(words)
    rank = {word: index for index, word in enumerate(ranked)}
    for index, word in enumerate(ranked):
        if word not in _NOT_CROATIAN and not _ekavian(word, index, rank):
            yield word


def _ekavian(word: str, index: int, rank: dict[str, int]) -> bool:
    """Whether `word` is a Serbian ekavian form whose ijekavian twin is a common word too.

    Only an inner 'e' is tried (a final one would pair "nove" with the comparative
    "novije"), and the twin must not be much rarer ("prema" stays, "prijema" is rare).
    """
    for position in range(1, len(word) - 1):
        if word[position] != "e":
            continue
        for reflex in ("ije", "je"):
            twin = word[:position] + reflex + word[position + 1 :]
            if twin in rank and rank[twin] <= 8 * index + 50:
                return True
    return False
