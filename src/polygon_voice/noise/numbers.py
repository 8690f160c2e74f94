"""Numbers in an utterance, in digits or in words, and how they sound read digit by digit.

Number words are recognised from 0 to 999 999: every way of writing 0-999 is generated once
per language (num2words for en, de and ru; our own words for hr), and thousands are put
together from those ("two thousand and twenty-four", «две тысячи двадцать четыре», "dvije
tisuće dvadeset četiri"; German writes them as one word, "zweitausendvierundzwanzig").
Russian is recognised in the nominative only.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from polygon_voice.noise import croatian
from polygon_voice.noise.languages import DIGIT_WORDS

# Words that multiply what comes before them by a thousand, per language (de: see _german).
_THOUSAND = {
    "en": ("thousand",),
    "ru": ("тысяча", "тысячи", "тысяч"),
    "hr": ("tisuću", "tisuća", "tisuće"),
}
_AND = {"en": "and", "hr": "i"}
_DIGITS = "0123456789"


@dataclass(frozen=True)
class Number:
    """Said words start..end-1 are a number; `digits` is how it is read digit by digit."""

    start: int
    end: int
    digits: str


@dataclass(frozen=True)
class NumberWords:
    """One language's ways of writing 0-999, keyed by their normalised words."""

    language: str
    phrases: dict[str, int]
    first_words: frozenset[str]
    longest: int

    def match(self, words: Sequence[str], start: int) -> tuple[int, int] | None:
        """The longest phrase at `start`: (value, end), or None."""
        if normalise(words[start]).split(" ", 1)[0] not in self.first_words:
            return None
        for end in range(min(len(words), start + self.longest), start, -1):
            value = self.phrases.get(" ".join(normalise(w) for w in words[start:end]))
            if value is not None:
                return value, end
        return None


def normalise(word: str) -> str:
    """A word as number phrases are keyed: lower case, hyphens as spaces, no commas."""
    return word.lower().replace("-", " ").replace(",", "")


def spoken_digits(digits: str, language: str) -> str:
    """'5590' -> 'five five nine zero', in the language's own digit words."""
    names = DIGIT_WORDS[language]
    return " ".join(names[int(d)] for d in digits)


def read_digits(text: str, language: str) -> str:
    """The inverse of spoken_digits: 'five five nine zero' -> '5590'; raises on other words."""
    names = {name: str(d) for d, name in enumerate(DIGIT_WORDS[language])}
    return "".join(names[word] for word in text.lower().split())


def find_numbers(words: Sequence[str], gaps: Sequence[str], language: str) -> list[Number]:
    """The numbers among the words; `gaps[i]` is the text between words i and i+1."""
    found: list[Number] = []
    index = 0
    while index < len(words):
        number = _number_at(words, gaps, index, language)
        if number is None:
            index += 1
        else:
            found.append(number)
            index = number.end
    return found


def _number_at(
    words: Sequence[str], gaps: Sequence[str], start: int, language: str
) -> Number | None:
    word = words[start]
    if word[0] in _DIGITS:  # ASCII only: "²" and "٣" pass str.isdigit() but are no numbers here
        return Number(start, start + 1, "".join(c for c in word if c in _DIGITS))
    end = start + 1
    longest = start + 2 * number_words(language).longest + 2  # count, thousand, and, rest
    while end < min(len(words), longest) and _joins(gaps[end - 1], words[end - 1], language):
        end += 1
    run = words[start:end]
    if language == "de":
        value = _german(run[0])
        return None if value is None else Number(start, start + 1, str(value))
    parsed = _with_thousands(run, language)
    if parsed is None:
        return None
    value, length = parsed
    return Number(start, start + length, str(value))


def _joins(gap: str, before: str, language: str) -> bool:
    """Whether a number phrase goes on across `gap`: spaces only, or a comma after "thousand"
    ("one thousand, nine hundred"), never other punctuation ("one, two" are two numbers)."""
    if gap.isspace():
        return True
    return gap.strip() == "," and normalise(before) in _THOUSAND.get(language, ())


def _with_thousands(run: Sequence[str], language: str) -> tuple[int, int] | None:
    table = number_words(language)
    thousand = _THOUSAND[language]
    first = table.match(run, 0)
    if first is None and language != "en" and normalise(run[0]) in thousand:
        first = (1, 0)  # «тысяча», "tisuću": a thousand without a count before it
    if first is None:
        return None
    value, end = first
    if end < len(run) and normalise(run[end]) in thousand and 1 <= value <= 999:
        value, end = value * 1000, end + 1
        rest = _after_thousand(table, run, end, _AND.get(language))
        if rest is not None:
            value, end = value + rest[0], rest[1]
    return value, end


def _after_thousand(
    table: NumberWords, run: Sequence[str], end: int, conjunction: str | None
) -> tuple[int, int] | None:
    if end < len(run) and conjunction and normalise(run[end]) == conjunction:
        rest = table.match(run, end + 1) if end + 1 < len(run) else None
    else:
        rest = table.match(run, end) if end < len(run) else None
    if rest is None or rest[0] == 0:
        return None
    return rest


def _german(word: str) -> int | None:
    table = number_words("de")
    lowered = word.lower()
    if "tausend" not in lowered:
        return table.phrases.get(lowered)
    head, _, tail = lowered.partition("tausend")
    count = 1 if head in ("", "ein") else table.phrases.get(head)
    rest = 0 if not tail else table.phrases.get(tail.removeprefix("und"))  # tausendundeins
    if count is None or rest is None or not 1 <= count <= 999:
        return None
    return count * 1000 + rest


@functools.cache
def number_words(language: str) -> NumberWords:
    """Every way of writing 0-999 in the language (built on first use, then kept)."""
    phrases: dict[str, int] = {}
    for n in range(1000):
        for written in _written(n, language):
            phrases.setdefault(normalise(written), n)
    return NumberWords(
        language=language,
        phrases=phrases,
        first_words=frozenset(p.split(" ", 1)[0] for p in phrases),
        longest=max(len(p.split()) for p in phrases),
    )


def _written(n: int, language: str) -> list[str]:
    if language == "hr":
        return croatian.variants(n)
    from num2words import num2words  # the `noise` extra; imported on first use only

    canonical = str(num2words(n, lang=language))
    found = [canonical]
    if language == "en" and " and " in canonical:
        found.append(canonical.replace(" and ", " "))  # "one hundred twenty-five"
    if language == "de" and canonical.startswith("einhundert"):
        found.append(canonical.removeprefix("ein"))  # "hundertfünf"
    if language == "ru":
        found += _russian_genders(canonical)
    return found


def _russian_genders(canonical: str) -> list[str]:
    words = canonical.split()
    other = {"один": ("одна", "одно"), "два": ("две",)}.get(words[-1], ())
    return [" ".join([*words[:-1], form]) for form in other]
