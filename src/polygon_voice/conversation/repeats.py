"""Ways an agent or a caller asks for the last thing to be said again, in en/de/hr/ru.

Kept with the conversation engine, which excuses an agent for saying a line again when the
caller asked for it (LOOP rules, `loops.py`); the conversation checks count the same phrases.
Both sides are reduced to LOOP-2's normalised words, and a phrase matches a run of whole
words, so "pardon" never matches inside another word.
"""

from __future__ import annotations

import functools
import re

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


@functools.lru_cache(maxsize=2048)
def _cached_request(text: str) -> bool:
    return _is_request(text)


def _is_request(text: str) -> bool:
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
