"""Numbers in a rule: digits and number words, and time spans in minutes.

Two rules give conflicting numbers for one thing in many shapes: digits against words
("3" / "three", "21" / "dreiundzwanzig", "5" / "пяти"), and one span in two units ("24
hours" / "two working days", "30 dana" / "dva mjeseca"). The words are the language's
cardinals of lexicon.toml, put together as the language does ("twenty-one", "twenty one",
"einundzwanzig", "dvadeset i jedan", "двадцать один"), inflected forms found by their lemma,
and German ordinals of dates ("den zwanzigsten").
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from polygon_voice.lint.topics import Lexicon

# A word, with its hyphenated or apostrophed parts ("e-mail", "don't"); topics.py reads
# words the same way.
WORD = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")
# A number in digits: thousands grouped by a space, a dot or a comma ("100 000", "2.000",
# "1,500": one number each), else an integer or a decimal ("3.5").
_NUMBER = re.compile(r"\d{1,3}(?:[ \u00a0\u202f.,]\d{3})+(?![\d.,]\d)|\d+(?:[.,]\d+)?")
# A number after these names a paragraph or an item, it counts nothing: "§12", "Nr. 5".
_LABEL_BEFORE = re.compile(r"(?:§|\bNr\.|\bNo\.|#|\bч\.|\bст\.|\bčl\.)\s*$", re.IGNORECASE)  # noqa: RUF001
_GROUPED = re.compile(r"\d{1,3}(?:[ \u00a0\u202f.,]\d{3})+")
# Words joining tens and units: "twenty and one" is rare, "dvadeset i jedan" common.
_TENS_JOINERS = frozenset({"and", "i"})
# German ordinals: -ste(n) from twenty on ("zwanzigsten"), -te(n) below ("vierten"); the
# first and the eighth are left out, "erst" and "achten" (to heed) are other words.
_DE_ORDINAL_HIGH = re.compile(r"(.+?)ste[nrsm]?")
_DE_ORDINAL_LOW = re.compile(r"(.+?)te[nrsm]?")
_DE_ORDINAL_IRREGULAR = {"dritt": 3, "sieb": 7}
_DE_NOT_ORDINAL = frozenset({"ein", "acht"})
# "по одной", "po jednu": the word before a one that makes it "one at a time".
_ONE_AT_A_TIME = frozenset({"по", "po"})
_DE_ARTICLES = frozenset({"ein", "eine", "einen", "einem", "einer", "eines"})
_DE_BOUND_BEFORE = re.compile(
    r"(?<!\w)(?:nur|höchstens|maximal|mindestens|genau|bis zu|lediglich|ausschließlich"
    r"|innerhalb|binnen|spätestens|frühestens|nach|vor|für|pro)\s+$",
    re.IGNORECASE,
)
_DAY = 24 * 60
_WORKING_DAY = 7 * _DAY // 5


def digits_value(digits: str) -> int:
    if _GROUPED.fullmatch(digits):
        return int(re.sub(r"\D", "", digits))
    return int(float(digits.replace(",", ".")))


def word_value(word: str, lex: Lexicon) -> int | None:
    """The value of one number word, or None."""
    low = word.lower()
    if low in lex.numbers:
        return lex.numbers[low]
    # "twenty-one": the parts add up.
    if "-" in low:
        parts = [lex.numbers.get(part) for part in low.split("-")]
        if all(p is not None for p in parts):
            return sum(p for p in parts if p is not None)
        return None
    if lex.language == "de":
        return _german_value(low, lex.numbers)
    if lex.language in ("ru", "hr"):
        # Case forms the table lacks ("трём", "četiriju"): by their lemma.
        return lex.numbers.get(lex.lemma(low))
    return None


def _german_value(low: str, table: dict[str, int]) -> int | None:
    """A German compound ("fünfunddreißig") or ordinal ("zwanzigsten", "vierten")."""
    if "und" in low:
        unit, _, tens = low.partition("und")
        u, t = table.get(unit), table.get(tens)
        if u is not None and t is not None and 1 <= u <= 9 and t >= 20 and t % 10 == 0:
            return t + u
    high = _DE_ORDINAL_HIGH.fullmatch(low)
    if high is not None:
        value = _german_value(high.group(1), table) if "und" in low else table.get(high.group(1))
        if value is not None and value >= 20:
            return value
    low_match = _DE_ORDINAL_LOW.fullmatch(low)
    if low_match is not None:
        stem = low_match.group(1)
        value = _DE_ORDINAL_IRREGULAR.get(stem, table.get(stem))
        if value is not None and 2 <= value < 20 and stem not in _DE_NOT_ORDINAL:
            return value
    return None


def numbers_in(text: str, lex: Lexicon) -> list[tuple[int, int, int]]:
    """(value, start, end) of each number in `text`: digits or the language's number words."""
    found = [
        (digits_value(m.group()), m.start(), m.end())
        for m in _NUMBER.finditer(text)
        if (m.start() == 0 or text[m.start() - 1] not in ":/-")
        and not (m.end() < len(text) and text[m.end()] in ":/")
        and not _LABEL_BEFORE.search(text[max(0, m.start() - 6) : m.start()])
    ]
    words = list(WORD.finditer(text))
    k = 0
    while k < len(words):
        value = word_value(words[k].group(), lex)
        if value is None:
            k += 1
            continue
        start, end = words[k].start(), words[k].end()
        if value == 1 and not _counts_one(text, words, k, lex):
            k += 1
            continue
        value, end, k = _tens_and_units(text, words, k, value, end, lex)
        # "three hundred": a multiplier word right after multiplies.
        while k + 1 < len(words) and text[end : words[k + 1].start()].strip() == "":
            nxt = word_value(words[k + 1].group(), lex)
            if nxt is None or nxt < 100 or nxt <= value:
                break
            value, end, k = value * nxt, words[k + 1].end(), k + 1
        found.append((value, start, end))
        k += 1
    found.extend(_implied_ones(text, words, lex))
    return sorted(found, key=lambda item: item[1])


# A span of one unit said without a number after a bound: en "within an hour", "in a
# week"; ru "в течение часа", "за сутки", "через неделю"; hr "u roku od sat vremena",
# "unutar tjedan dana". The one is placed before the unit, which it counts.
_IMPLIED_ONE_BEFORE = {
    "en": re.compile(
        r"(?<!\w)(?:within|in|up to|at least|at most|no later than|under|over|less than"
        r"|more than|after|for)\s+an?\s+$",
        re.IGNORECASE,
    ),
    "ru": re.compile(
        r"(?<!\w)(?:в течение|за|через|в пределах|не позднее чем за|не позже чем за"
        r"|не раньше чем за|не менее чем за)\s+$",
        re.IGNORECASE,
    ),
    "hr": re.compile(r"(?<!\w)(?:u roku od|unutar|za|nakon|najkasnije za)\s+$", re.IGNORECASE),
}
# Croatian says one unit of time with a word after it: "sat vremena", "tjedan dana".
_HR_UNIT_OF = frozenset({"vremena", "dana"})


def _implied_ones(
    text: str, words: list[re.Match[str]], lex: Lexicon
) -> list[tuple[int, int, int]]:
    before = _IMPLIED_ONE_BEFORE.get(lex.language)
    if before is None:
        return []
    found = []
    for k, word in enumerate(words):
        if (
            lex.lemma(word.group()) not in lex.durations
            and word.group().lower() not in lex.durations
        ):
            continue
        if not before.search(text[max(0, word.start() - 30) : word.start()]):
            continue
        if lex.language == "hr":
            following = words[k + 1].group().lower() if k + 1 < len(words) else ""
            if following not in _HR_UNIT_OF:
                continue
        found.append((1, word.start(), word.start()))
    return found


def _counts_one(text: str, words: list[re.Match[str]], k: int, lex: Lexicon) -> bool:
    """Whether a word for one counts: not "по одной цифре" (one at a time), and a German
    article ("auf einen anderen Werktag") only after a bound ("höchstens einen", "nur
    eine", "innerhalb einer Woche"), as English "a" is no number but "one" is."""
    before = words[k - 1].group().lower() if k > 0 else ""
    if before in _ONE_AT_A_TIME:
        return False
    if lex.language == "de" and words[k].group().lower() in _DE_ARTICLES:
        head = text[max(0, words[k].start() - 20) : words[k].start()]
        return _DE_BOUND_BEFORE.search(head) is not None
    return True


def _tens_and_units(
    text: str, words: list[re.Match[str]], k: int, value: int, end: int, lex: Lexicon
) -> tuple[int, int, int]:
    """ "twenty one", "dvadeset i jedan", "двадцать пять": a unit after a ten adds to it."""
    if not (20 <= value <= 90 and value % 10 == 0):
        return value, end, k
    nxt = k + 1
    if nxt < len(words) and words[nxt].group().lower() in _TENS_JOINERS:
        nxt += 1
    if nxt >= len(words) or not _only_spaces_between(text, words, k, nxt):
        return value, end, k
    unit = word_value(words[nxt].group(), lex)
    if unit is None or not 1 <= unit <= 9:
        return value, end, k
    return value + unit, words[nxt].end(), nxt


def _only_spaces_between(text: str, words: list[re.Match[str]], first: int, last: int) -> bool:
    return all(
        text[words[j].end() : words[j + 1].start()].strip() == "" for j in range(first, last)
    )


def minutes_of(value: int, counted: frozenset[str], lex: Lexicon) -> int | None:
    """A time span in minutes, when what the number counts is a time unit ("24 hours",
    "two working days"); else None. A working day is a fifth of a week, so "five working
    days" and "one week" agree."""
    units = [lex.durations[w] for w in counted if w in lex.durations]
    if not units:
        return None
    unit = max(units)
    if unit == _DAY and counted & lex.working_days:
        unit = _WORKING_DAY
    return value * unit


def half_hours_in(text: str, lex: Lexicon) -> list[tuple[int, int]]:
    """(start, end) of each "half an hour" ("pola sata", "полчаса"): thirty minutes."""
    return [(m.start(), m.end()) for m in lex.half_hour.finditer(text)]
