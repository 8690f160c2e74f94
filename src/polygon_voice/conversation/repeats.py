"""Ways an agent or a caller asks for the last thing to be said again, in en/de/hr/ru.

Kept with the conversation engine, which excuses an agent for saying a line again when the
caller asked for it (LOOP rules, `loops.py`); the conversation checks count the same phrases.
Both sides are reduced to LOOP-2's normalised words, and a phrase matches a run of whole
words, so "pardon" never matches inside another word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from polygon_voice.conversation.loops import CACHED_WORDS_CHARS, normalised_words

# Ways an agent (or caller) asks for the last thing to be said again, per language.
# Normalised (no diacritics) so they compare with normalised speech.
REPEAT_REQUESTS: dict[str, tuple[str, ...]] = {
    "en": (
        "repeat that", "could you repeat", "can you repeat", "please repeat",
        "say that again", "say it again", "come again", "didn t catch", "did not catch",
        "pardon", "i beg your pardon", "sorry what",
    ),
    "de": (
        "wiederholen", "noch einmal sagen", "nochmal sagen", "wie bitte",
        "nicht verstanden", "habe das nicht verstanden",
    ),
    "hr": (
        "ponovite", "ponoviti", "ponovi", "nisam razumio", "nisam razumjela",
        "nisam cuo", "nisam cula",
    ),
    "ru": (
        "повторите", "повторить", "не расслышал", "не расслышала", "не понял",
        "не поняла", "еще раз",
    ),
}  # fmt: skip


def is_repeat_request(text: str) -> bool:
    """Whether a turn asks for the last thing to be said again (any known language).

    All languages are tried, not just the call's: an agent may answer in the wrong
    language, and the phrases of one language do not occur as whole words in another.
    ("molim" is left out of Croatian: it is also "please".)
    """
    if len(text) <= CACHED_WORDS_CHARS:  # the checks and the judge's rules ask for each turn
        return _cached_request(text)
    return _is_request(text)


def repeat_requests(texts: Sequence[str]) -> list[bool]:
    """`is_repeat_request` of each text, in order (the conversation checks read every turn
    of a side: one call for them all rather than one a turn).

    Most calls' turns hold no key word at all: in ASCII text that is told for all the turns
    at once, by the key words' substring test over their lower-cased text joined by line
    breaks (no key holds one, so none is found across two turns, and a key in one turn is
    found in the whole). Only when some key is there is each turn read on its own."""
    whole = "\n".join(texts)
    if whole.isascii():
        lowered = whole.lower()
        for key in _ASCII_KEYS:  # a loop: cheaper than any() over a generator
            if key in lowered:
                break
        else:
            return [False] * len(texts)
    cached, limit = _cached_request, CACHED_WORDS_CHARS
    return [cached(text) if len(text) <= limit else _is_request(text) for text in texts]


@functools.lru_cache(maxsize=2048)
def _cached_request(text: str) -> bool:
    return _is_request(text)


def _is_request(text: str) -> bool:
    if text.isascii():  # most turns: the same phrases found in the text itself, no words split
        lowered = text.lower()
        # A phrase found has its key word in the text: most turns have none of them. A
        # substring test per key is faster than one regex alternation over them all.
        for key in _ASCII_KEYS:
            if key in lowered:
                return _ANY_REQUEST_IN_TEXT.search(lowered) is not None
        return False
    # Whole-word runs as substrings of the space-joined words: one regex scan for them all.
    spaced = f" {' '.join(normalised_words(text))} "
    return _ANY_REQUEST.search(spaced) is not None


def contains_words(words: list[str], phrase: list[str]) -> bool:
    """Whether `phrase` (normalised words) occurs in `words` as a run of whole words."""
    if not phrase:
        return False
    n = len(phrase)
    return any(words[i : i + n] == phrase for i in range(len(words) - n + 1))


# Normalised once: the engine asks after every agent turn, the checks for every turn.
_SPACED_REQUESTS = tuple(
    f" {' '.join(normalised_words(p))} " for group in REPEAT_REQUESTS.values() for p in group
)
# One alternation of them all: a single scan instead of one per phrase (the checks ask for
# every turn of every call, an import for thousands of calls a second).
_ANY_REQUEST = re.compile("|".join(re.escape(phrase) for phrase in _SPACED_REQUESTS))
# The same phrases over ASCII text as it is: a normalised word is a run of \w in the lower-cased
# text, and two words in a row are two such runs with only non-word characters between them,
# so a phrase's words found there (whole, at word edges) are its words found in a row.
_ANY_REQUEST_IN_TEXT = re.compile(
    r"(?<!\w)(?:"
    + "|".join(
        r"\W+".join(re.escape(word) for word in normalised_words(p))
        for group in REPEAT_REQUESTS.values()
        for p in group
    )
    + r")(?!\w)"
)
# Words said in many turns that ask for nothing ("please confirm", "sorry for the wait"):
# a phrase's key is another of its words when it has one.
_COMMON_WORDS = frozenset(("please", "sorry", "what"))


def _fewest(keys: set[str]) -> tuple[str, ...]:
    """The keys less those that hold another key: text holding one of those holds the other
    too ("ponovite" holds "ponovi"), so one fewer substring test for every turn."""
    return tuple(sorted(key for key in keys if not any(k != key and k in key for k in keys)))


# The key word of each phrase that ASCII text can hold (the others have a letter it lacks):
# its longest uncommon word, so that few turns hold a key.
_ASCII_KEYS = _fewest(
    {
        max(words, key=lambda word: (word not in _COMMON_WORDS, len(word)))
        for group in REPEAT_REQUESTS.values()
        for p in group
        if (words := normalised_words(p)) and all(word.isascii() for word in words)
    }
)
