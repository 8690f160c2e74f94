"""wordfreq's frequencies of plain words, read straight from its word-list files.

Tier 2 asks wordfreq how frequent each word of a prompt is. Importing wordfreq (~0.2 s,
most of it `langcodes`' data) and building its dictionary of every word of the language
(~0.35 s for English) was most of the tier's time, on every lint. For a *plain* word — lower
case, only letters that wordfreq's normalisation leaves as they are — wordfreq's answer is
that word's entry in the list, rounded as wordfreq rounds it; so such words are looked up
here, in the same files, with the same arithmetic, and wordfreq itself is imported only for
any other token (an apostrophe, a letter it would normalise). A test checks that the two
give the same number for the lists' words and for words in no list.

Reading a large list still took 1-4 s of CPU in a fresh process, so each list's index is
also kept as a trie in the user's cache folder (wordlist_cache) and opened from there.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import importlib.util
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polygon_voice.lint import wordlist_cache

# Letters that wordfreq's preprocessing (NFC, case folding, transliteration) keeps as they
# are, per wordfreq language code, in words of one script (its tokenizer may split a word of
# two). Not "ё" (left to wordfreq); "ß" is folded first, see FOLD.
PLAIN_WORD = {
    "en": re.compile(r"[a-z]+"),
    "de": re.compile(r"[a-zäöü]+"),
    # The Cyrillic lower-case letters but ё, or Latin ones: a Latin word in a Russian prompt
    # ("cvc", "sms") is looked up as it is, as wordfreq's Russian preprocessing leaves it.
    "ru": re.compile(r"[\u0430-\u044f]+|[a-z]+"),
    "sh": re.compile(r"[a-zčćđšž]+"),
}
# Letters that wordfreq's case folding turns into others before it looks a word up: German
# "ß" is "ss" (its list has "strasse", not "straße"). Without this, one "ß" in a prompt
# imported wordfreq and built its own dictionary of the language (over 1 s).
FOLD = {"de": str.maketrans({"ß": "ss"})}


def frequency(word: str, code: str) -> float:
    """`wordfreq.word_frequency(word, code)`, without importing wordfreq for a plain word."""
    key = _plain_key(word, code)
    index = _list_index(code) if key is not None else None
    if key is None or index is None:
        import wordfreq

        return float(wordfreq.word_frequency(word, code))
    centibels = index.get(key)
    if centibels is None:
        return 0.0  # not in the list: wordfreq's `minimum`
    # wordfreq's own steps for one token: cB_to_freq(-index), 1 / (sum of 1 / f), then
    # three significant digits.
    unrounded = 1.0 / (0.0 + 1.0 / 10 ** (-centibels / 100))
    leading_zeroes = math.floor(-math.log(unrounded, 10))
    return round(unrounded, leading_zeroes + 3)


def _plain_key(word: str, code: str) -> str | None:
    """The list entry wordfreq would look `word` up as, when it is a plain word; else None."""
    plain = PLAIN_WORD.get(code)
    fold = FOLD.get(code)
    key = word.translate(fold) if fold is not None else word
    return key if plain is not None and plain.fullmatch(key) else None


@functools.cache
def _list_index(code: str) -> Mapping[str, int] | None:
    """Word -> its bucket (minus centibels) in the best list for `code`; None: use wordfreq.

    Read from the list's trie in the user's cache folder when there is one (milliseconds),
    else from the list itself (seconds), which is then cached: see wordlist_cache.
    """
    path = _list_path(code)
    if path is None or importlib.util.find_spec("msgpack") is None:
        return None
    return wordlist_cache.cached_buckets(path, functools.partial(read_list, path))


def read_list(path: Path) -> dict[str, int] | None:
    """Word -> bucket of a wordfreq list file; None for a format this reader does not know."""
    # By name: msgpack (wordfreq's own dependency) ships no type information.
    msgpack: Any = importlib.import_module("msgpack")
    with gzip.open(path, "rb") as infile:
        data: Any = msgpack.load(infile, raw=False)
    header = data[0] if data else None
    if not isinstance(header, dict) or header.get("format") != "cB" or header.get("version") != 1:
        return None  # a list format this reader does not know: wordfreq reads it
    index: dict[str, int] = {}
    for bucket, words in enumerate(data[1:]):
        # Later buckets win for a word listed twice, as in wordfreq's get_frequency_dict.
        index.update(dict.fromkeys(words, bucket))
    return index


def _list_path(code: str) -> Path | None:
    # wordfreq's "best" list: the large one where there is one, else the small one.
    spec = importlib.util.find_spec("wordfreq")
    if spec is None or not spec.submodule_search_locations:
        return None
    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    for size in ("large", "small"):
        path = data / f"{size}_{code}.msgpack.gz"
        if path.is_file():
            return path
    return None
