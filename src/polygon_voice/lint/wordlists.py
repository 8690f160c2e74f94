"""wordfreq's frequencies of plain words, read straight from its word-list files.

Tier 2 asks wordfreq how frequent each word of a prompt is. Importing wordfreq (~0.2 s,
most of it `langcodes`' data) and building its dictionary of every word of the language
(~0.35 s for English) was most of the tier's time, on every lint. For a *plain* word — lower
case, only letters that wordfreq's normalisation leaves as they are — wordfreq's answer is
that word's entry in the list, rounded as wordfreq rounds it; so such words are looked up
here, in the same files, with the same arithmetic, and wordfreq itself is imported only for
any other token (an apostrophe, a letter it would normalise). A test checks that the two
give the same number for the lists' words and for words in no list.
"""

from __future__ import annotations

import functools
import gzip
import importlib
import importlib.util
import math
import re
from pathlib import Path
from typing import Any

# Letters that wordfreq's preprocessing (NFC, case folding, transliteration) keeps as they
# are, per wordfreq language code. Not "ß" (folded to "ss") nor "ё" (left to wordfreq).
PLAIN_WORD = {
    "en": re.compile(r"[a-z]+"),
    "de": re.compile(r"[a-zäöü]+"),
    "ru": re.compile(r"[\u0430-\u044f]+"),  # the Cyrillic lower-case letters, but ё
    "sh": re.compile(r"[a-zčćđšž]+"),
}


def frequency(word: str, code: str) -> float:
    """`wordfreq.word_frequency(word, code)`, without importing wordfreq for a plain word."""
    plain = PLAIN_WORD.get(code)
    index = _list_index(code) if plain is not None and plain.fullmatch(word) else None
    if index is None:
        import wordfreq

        return float(wordfreq.word_frequency(word, code))
    centibels = index.get(word)
    if centibels is None:
        return 0.0  # not in the list: wordfreq's `minimum`
    # wordfreq's own steps for one token: cB_to_freq(-index), 1 / (sum of 1 / f), then
    # three significant digits.
    unrounded = 1.0 / (0.0 + 1.0 / 10 ** (-centibels / 100))
    leading_zeroes = math.floor(-math.log(unrounded, 10))
    return round(unrounded, leading_zeroes + 3)


@functools.cache
def _list_index(code: str) -> dict[str, int] | None:
    """Word -> its bucket (minus centibels) in the best list for `code`; None: use wordfreq."""
    path = _list_path(code)
    if path is None or importlib.util.find_spec("msgpack") is None:
        return None
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
