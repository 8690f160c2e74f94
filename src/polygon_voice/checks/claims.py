# ruff: noqa: RUF001, RUF003
"""What an agent's sentence states: the values it ties to fields, and whether it says done.

A claim is a value the sentence ties to a field, not any number that happens to equal some
stored value. A value is tied when a cue word for the field stands next to it ("order
5590", "3 items", "Menge 3", "заказ 5590") with no other value in between, when its shape
fits exactly one field (a date, with one date field), or when it follows "to"/"auf"/"na"/
"на" and exactly one field it fits is not already claimed ("changed it to 3"). Durations,
times, menu keys and phone numbers ("within 1 hour", "press 2", "14 Uhr", "call 0800 …")
are not claims. Numbers are read in digits and in words (0-999 999, en/de/hr/ru, with the
usual hr/ru case forms), ids also digit by digit ("five five nine zero"), and dates in
ISO, numeric (20.12.2026, 12/20/2026 in English) and spoken forms ("December 20",
"the 20th of December", "20. Dezember", "20. prosinca", "двадцатого декабря").

The parser only scans forward with bounded look-around: linear in the length of the
text, and it never raises on any string.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, NamedTuple

from polygon_voice.checks import claims_lexicon as lex

FieldKind = Literal["integer", "number", "date", "id", "text"]


@dataclass(frozen=True)
class FieldHint:
    """How a field's values look (from the tool's JSON Schema) and extra cue words for it."""

    kind: FieldKind
    cues: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A value the sentence ties to `field`, normalised, with its character span."""

    field: str
    value: str
    start: int
    end: int


# ---------------------------------------------------------------------------------------
# Folding and tokens


def fold(word: str) -> str:
    """A word as the lexicon is keyed: case-folded, without diacritics ("Fünf" -> "funf")."""
    return _fold(word)


@functools.lru_cache(maxsize=8192)
def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


_TOKEN = re.compile(
    r"(?P<iso>[0-9]{4}-[0-9]{1,2}-[0-9]{1,2})(?![0-9])"
    r"|(?P<dmy>[0-9]{1,2}[./][0-9]{1,2}[./](?:[0-9]{4}|[0-9]{2}))(?![0-9])"
    r"|(?P<dm>[0-9]{1,2}\.[0-9]{1,2}\.)(?![0-9])"
    r"|(?P<time>[0-9]{1,2}:[0-9]{2})(?![0-9])"
    r"|(?P<ordnum>[0-9]{1,2}(?:st|nd|rd|th))(?![^\W\d_])"
    r"|(?P<dec>[0-9]+[.,][0-9]+)(?![0-9])"
    r"|(?P<digits>[0-9]+)"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<sym>[€$£₽#№%])"
    r"|(?P<punct>[.?!;:,…—–()]|(?<=\s)-(?=\s))"
)
_SENTENCE_END = frozenset({".", "?", "!", ";", "…"})


class _Token(NamedTuple):
    kind: str
    text: str  # folded
    raw: str
    start: int
    end: int


_ABBREVIATIONS = frozenset(fold(w) for w in lex.ABBREVIATIONS)
_DIGIT_NEXT = re.compile(r"\s*[0-9]")


def _tokenise(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "word"
        raw = m.group()
        if raw == "." and _abbreviation_dot(text, m.start(), tokens):
            kind = "abbr"  # "order no. 4410": the dot ends no sentence
        tokens.append(_Token(kind, fold(raw) if kind == "word" else raw, raw, m.start(), m.end()))
    return tokens


def _abbreviation_dot(text: str, at: int, tokens: list[_Token]) -> bool:
    if not tokens or tokens[-1].kind != "word" or tokens[-1].end != at:
        return False
    return tokens[-1].text in _ABBREVIATIONS and _DIGIT_NEXT.match(text, at + 1) is not None


def _is_stop(token: _Token) -> bool:
    return token.kind == "punct" and token.text in _SENTENCE_END


# ---------------------------------------------------------------------------------------
# Word tables, folded once per language


def _fold_table(table: Mapping[str, int]) -> dict[str, int]:
    return {fold(k): v for k, v in table.items()}


@dataclass(frozen=True)
class _Stems:
    """Exact words and "*" stems, looked up by a word's prefixes (bounded by the longest)."""

    exact: frozenset[str]
    stems: frozenset[str]
    longest: int

    @classmethod
    def of(cls, words: Sequence[str]) -> _Stems:
        exact = frozenset(fold(w) for w in words if not w.endswith("*"))
        stems = frozenset(fold(w[:-1]) for w in words if w.endswith("*"))
        return cls(exact, stems, max((len(s) for s in stems), default=0))

    def match(self, word: str) -> bool:
        if word in self.exact:
            return True
        return any(word[:n] in self.stems for n in range(1, min(len(word), self.longest) + 1))


@dataclass(frozen=True)
class _Lang:
    code: str
    units: dict[str, int]
    tens: dict[str, int]
    hundreds: dict[str, int]
    hundred_word: frozenset[str]
    thousand_word: frozenset[str]
    and_word: frozenset[str]
    compounds: dict[str, int]  # German one-word numbers 0-999
    months: dict[str, int]
    ordinals: dict[str, int]  # exact ordinal words
    ordinal_stems: tuple[tuple[str, int], ...]  # longest first
    unit_after: _Stems
    block_before: _Stems
    change_to: frozenset[str]
    change_from: frozenset[str]

    def ordinal(self, word: str) -> int | None:
        if word in self.ordinals:
            return self.ordinals[word]
        for stem, value in self.ordinal_stems:
            if word.startswith(stem) and len(word) - len(stem) <= 4:
                return value
        return None


# German number words as written, one per value (folded: "funf", "zwolf", "dreissig").
_DE_UNITS = ("null", "eins", "zwei", "drei", "vier", "funf", "sechs", "sieben", "acht", "neun",
             "zehn", "elf", "zwolf", "dreizehn", "vierzehn", "funfzehn", "sechzehn", "siebzehn",
             "achtzehn", "neunzehn")  # fmt: skip
_DE_TENS = ("", "", "zwanzig", "dreissig", "vierzig", "funfzig", "sechzig", "siebzig", "achtzig",
            "neunzig")  # fmt: skip


def _german_below_100(n: int, final: bool) -> str:
    """1-99 as one German word; "eins" only at the end of a number ("einundzwanzig")."""
    if n == 1:
        return "eins" if final else "ein"
    if n < 20:
        return _DE_UNITS[n]
    tens, unit = divmod(n, 10)
    if unit == 0:
        return _DE_TENS[tens]
    return ("ein" if unit == 1 else _DE_UNITS[unit]) + "und" + _DE_TENS[tens]


def _german_compounds() -> dict[str, int]:
    """Every one-word German spelling of 0-999 ("einundzwanzig", "dreihundertfunf")."""
    words: dict[str, int] = {"null": 0}
    for n in range(1, 1000):
        hundreds, rest = divmod(n, 100)
        tail = _german_below_100(rest, final=True) if rest else ""
        if not hundreds:
            words[tail] = n
            continue
        if hundreds == 1:
            heads = ["hundert", "einhundert"]
        else:
            heads = [_german_below_100(hundreds, final=False) + "hundert"]
        for head in heads:
            words[head + tail] = n
            if rest:
                words[head + "und" + tail] = n  # "hundertundeins"
    return words


def _german_ordinals() -> dict[str, int]:
    """German ordinal days 1-31 with their endings ("ersten", "zwanzigste", "einunddreißigsten")."""
    irregular = {1: "erst", 3: "dritt", 7: "siebt", 8: "acht"}
    out: dict[str, int] = {}
    for day in range(1, 32):
        word = _german_below_100(day, final=True)
        stem = irregular.get(day) or (word + "t" if day < 20 else word + "st")
        for ending in ("e", "en", "er", "es", "em"):
            out[stem + ending] = day
    return out


@functools.cache
def _language(code: str) -> _Lang:
    code = code if code in lex.LANGUAGES else "en"
    compounds = _german_compounds() if code == "de" else {}
    ordinals: dict[str, int] = {}
    stems: list[tuple[str, int]] = []
    for word, value in lex.ORDINALS[code].items():
        if word.endswith("*"):
            stems.append((fold(word[:-1]), value))
        else:
            ordinals[fold(word)] = value
    if code == "de":
        ordinals.update(_german_ordinals())
    units = _fold_table(lex.UNITS[code])
    if code == "de":  # articles are not numbers; "ein" counts only inside compounds
        for article in ("ein", "eine", "einen", "einem", "einer"):
            units.pop(article, None)
    return _Lang(
        code=code,
        units=units,
        tens=_fold_table(lex.TENS[code]),
        hundreds=_fold_table(lex.HUNDREDS[code]),
        hundred_word=frozenset(fold(w) for w in lex.HUNDRED_WORD[code]),
        thousand_word=frozenset(fold(w) for w in lex.THOUSAND_WORD[code]),
        and_word=frozenset(fold(w) for w in lex.AND_WORD[code]),
        compounds=compounds,
        months=_fold_table(lex.MONTHS[code]),
        ordinals=ordinals,
        ordinal_stems=tuple(sorted(stems, key=lambda s: -len(s[0]))),
        unit_after=_Stems.of(lex.UNIT_AFTER[code]),
        block_before=_Stems.of(lex.BLOCK_BEFORE[code]),
        change_to=frozenset(fold(w) for w in lex.CHANGE_TO[code]),
        change_from=frozenset(fold(w) for w in lex.CHANGE_FROM[code]),
    )


def _language_code(language: str) -> str:
    try:
        code = str(language).strip().lower().replace("_", "-").split("-")[0]
    except Exception:  # a language that is not text: read as English
        return "en"
    return code if code in lex.LANGUAGES else "en"


# ---------------------------------------------------------------------------------------
# Values in a sentence

ValueKind = Literal["int", "digits", "decimal", "date", "time"]


@dataclass
class _Value:
    kind: ValueKind
    value: str  # "int": digits as said; "digits": spoken digit run; "decimal"; "date": ISO
    first: int  # token indices [first, last]
    last: int
    start: int
    end: int
    parts: tuple[str, ...] = ()  # the numbers a digit run is made of
    blocked: bool = False


class _Reader:
    """Reads the values of one text: dates first, then numbers in digits and in words."""

    def __init__(self, text: str, tokens: list[_Token], lang: _Lang, reference: date) -> None:
        self.tokens = tokens
        self.lang = lang
        self.reference = reference
        self.used = [False] * len(tokens)
        # What stands between token j and j+1 ("0800 123" is one number, "5590, 3" is two).
        self.gaps = [text[a.end : b.start] for a, b in itertools.pairwise(tokens)]

    def word(self, i: int) -> str | None:
        if 0 <= i < len(self.tokens) and self.tokens[i].kind == "word":
            return self.tokens[i].text
        return None

    def values(self) -> list[_Value]:
        found = list(self._dates())
        found.extend(self._numbers())
        found.sort(key=lambda v: v.first)
        for value in found:
            value.blocked = self._blocked(value)
        return found

    # -- dates --------------------------------------------------------------------------

    def _dates(self) -> Iterator[_Value]:
        i = 0
        while i < len(self.tokens):
            hit = self._date_at(i)
            if hit is None:
                i += 1
                continue
            iso, last = hit
            for k in range(i, last + 1):
                self.used[k] = True
            yield _Value("date", iso, i, last, self.tokens[i].start, self.tokens[last].end)
            i = last + 1

    def _date_at(self, i: int) -> tuple[str, int] | None:
        token = self.tokens[i]
        if token.kind in ("iso", "dmy", "dm"):
            iso = self._numeric_date(token)
            return (iso, i) if iso else None  # "12.50." is an amount, not a date
        if token.kind == "word" and token.text in self.lang.months:
            return self._month_first(i)
        return self._day_first(i)

    def _numeric_date(self, token: _Token) -> str:
        parts = [p for p in re.split(r"[-./]", token.raw) if p]
        if token.kind == "iso":
            return _iso(int(parts[0]), int(parts[1]), int(parts[2])) or ""
        year = _full_year(int(parts[2])) if len(parts) == 3 else None
        first, second = int(parts[0]), int(parts[1])
        if "/" in token.raw and self.lang.code == "en":
            first, second = second, first  # 12/20/2026
        return self._date(year, second, first) or self._date(year, first, second) or ""

    def _date(self, year: int | None, month: int, day: int) -> str | None:
        """ISO date; a date said without its year is the next one from the reference date
        (up to two months back still counts as this year: "delivered on December 20")."""
        if year is not None:
            return _iso(year, month, day)
        this_year = _iso(self.reference.year, month, day)
        if this_year is None or (self.reference - date.fromisoformat(this_year)).days <= 60:
            return this_year
        return _iso(self.reference.year + 1, month, day)

    def _day_first(self, i: int) -> tuple[str, int] | None:
        j = i + 1 if self.word(i) == "the" else i
        day = self._day(j)
        if day is None:
            return None
        value, k = day
        while k < len(self.tokens) and (
            self.tokens[k].text in (".", "-") or self.word(k) in lex.DATE_FILLERS
        ):
            k += 1
        month = self.lang.months.get(self.word(k) or "")
        if month is None:
            return self._first_of_range(value, i, k)
        year, last = self._year(k + 1)
        iso = self._date(year, month, value)
        return (iso, last if year is not None else k) if iso else None

    def _first_of_range(self, day: int, i: int, k: int) -> tuple[str, int] | None:
        """The first day of "from the 18th to the 22nd of December" takes the second's month;
        the second is read on its own."""
        if self.word(k) not in lex.DAY_RANGE or k + 1 >= len(self.tokens):
            return None
        j = k + 1
        while self.word(j) in lex.DATE_FILLERS:
            j += 1
        later = self._day(j)
        if later is None:
            return None
        m = later[1]
        while m < len(self.tokens) and (
            self.tokens[m].text in (".", "-") or self.word(m) in lex.DATE_FILLERS
        ):
            m += 1
        month = self.lang.months.get(self.word(m) or "")
        if month is None:
            return None
        year, _ = self._year(m + 1)
        iso = self._date(year, month, day)
        return (iso, k - 1) if iso else None

    def _month_first(self, i: int) -> tuple[str, int] | None:
        month = self.lang.months[self.tokens[i].text]
        j = i + 1
        if self.word(j) == "the":
            j += 1
        day = self._day(j)
        if day is None:
            return None
        value, k = day
        while self.word(k) in lex.DATE_FILLERS:
            k += 1
        year, last = self._year(k)
        iso = self._date(year, month, value)
        return (iso, last if year is not None else k - 1) if iso else None

    def _day(self, i: int) -> tuple[int, int] | None:
        """A day of the month at token i: (day, index after it)."""
        if i >= len(self.tokens) or self.used[i]:
            return None
        token = self.tokens[i]
        if token.kind == "digits" and len(token.raw) <= 2:
            return _valid_day(int(token.raw), i + 1)
        if token.kind == "ordnum":
            return _valid_day(int(token.raw[:-2]), i + 1)
        if token.kind != "word":
            return None
        ten = self.lang.tens.get(token.text)
        if ten in (20, 30):
            unit = self._ordinal_or_unit(i + 1)
            if unit is not None and unit < 10:
                return _valid_day(ten + unit, i + 2)
        ordinal = self.lang.ordinal(token.text)
        if ordinal is not None:
            return _valid_day(ordinal, i + 1)
        number = self._cardinal(i)
        return _valid_day(number[0], number[1]) if number else None

    def _ordinal_or_unit(self, i: int) -> int | None:
        word = self.word(i)
        if word is None:
            return None
        ordinal = self.lang.ordinal(word)
        return ordinal if ordinal is not None else self.lang.units.get(word)

    def _year(self, i: int) -> tuple[int | None, int]:
        """A year at token i (after an optional comma): (year, its last token) or (None, i)."""
        k = i + 1 if i < len(self.tokens) and self.tokens[i].text == "," else i
        if k >= len(self.tokens) or self.used[k]:
            return None, i
        token = self.tokens[k]
        year: int | None = None
        end = k + 1
        if token.kind == "digits" and len(token.raw) == 4:
            year = int(token.raw)
        elif token.kind == "word":
            spoken = self._number_run(k)
            if spoken is not None and len(spoken[0]) <= 4:
                year, end = self._ordinal_year(int(spoken[0]), spoken[1])
        if year is None or not 1900 <= year <= 2199:
            return None, i
        last = end - 1
        nxt = end + 1 if end < len(self.tokens) and self.tokens[end].text == "." else end
        if self.word(nxt) in lex.YEAR_WORDS:
            last = nxt
        return year, last

    def _ordinal_year(self, year: int, end: int) -> tuple[int, int]:
        """A year whose last word is an ordinal: "две тысячи двадцать шестого (года)",
        "dvije tisuće dvadeset šeste" (2026)."""
        word = self.word(end)
        ordinal = self.lang.ordinal(word) if word is not None else None
        if ordinal is None or self.lang.code not in ("ru", "hr"):
            return year, end
        if (ordinal < 10 and year % 10 == 0) or year % 100 == 0:
            return year + ordinal, end + 1
        return year, end

    # -- numbers ------------------------------------------------------------------------

    def _numbers(self) -> Iterator[_Value]:
        i = 0
        while i < len(self.tokens):
            if self.used[i]:
                i += 1
                continue
            token = self.tokens[i]
            if token.kind in ("digits", "dec", "dm", "time", "ordnum"):
                value, i = self._digit_value(i)
                yield value
                continue
            spoken = self._number_run(i) if token.kind == "word" else None
            if spoken is None:
                i += 1
                continue
            digits, end, parts = spoken
            kind: ValueKind = "digits" if len(parts) > 1 else "int"
            yield _Value(kind, digits, i, end - 1, token.start, self.tokens[end - 1].end, parts)
            i = end

    def _digit_value(self, i: int) -> tuple[_Value, int]:
        token = self.tokens[i]
        if token.kind == "time":
            return _Value("time", token.raw, i, i, token.start, token.end), i + 1
        if token.kind == "ordnum":
            return _Value("int", str(int(token.raw[:-2])), i, i, token.start, token.end), i + 1
        if token.kind in ("dec", "dm"):
            return self._decimal(token, i), i + 1
        # Digits said in groups ("0800 123 456", "5 5 9 0") are one number.
        j = i
        while (
            j + 1 < len(self.tokens)
            and self.tokens[j + 1].kind == "digits"
            and not self.used[j + 1]
            and _only_spacing(self.tokens[j].end, self.tokens[j + 1].start, self._text_gap(j))
        ):
            j += 1
        parts = tuple(t.raw for t in self.tokens[i : j + 1])
        kind: ValueKind = "digits" if len(parts) > 1 else "int"
        end = self.tokens[j].end
        return _Value(kind, "".join(parts), i, j, token.start, end, parts), j + 1

    def _text_gap(self, j: int) -> str:
        return self.gaps[j] if j < len(self.gaps) else " "

    def _decimal(self, token: _Token, i: int) -> _Value:
        whole, _, frac = token.raw.rstrip(".").replace(",", ".").partition(".")
        if "," in token.raw and self.lang.code == "en" and len(frac) == 3:
            return _Value("int", whole + frac, i, i, token.start, token.end)  # 1,250
        if "." in token.raw and self.lang.code != "en" and len(frac) == 3:
            return _Value("int", whole + frac, i, i, token.start, token.end)  # 1.250
        return _Value("decimal", _decimal_text(f"{whole}.{frac}"), i, i, token.start, token.end)

    def _number_run(self, i: int) -> tuple[str, int, tuple[str, ...]] | None:
        """Number words from token i: one number ("twenty-one") or several read as digits
        ("five five nine zero", "fifty-five ninety"): (digits, index after, parts)."""
        parts: list[str] = []
        k = i
        while k < len(self.tokens) and not self.used[k]:
            number = self._cardinal(k)
            if number is None:
                break
            parts.append(str(number[0]))
            k = number[1]
        if not parts:
            return None
        return "".join(parts), k, tuple(parts)

    def _cardinal(self, i: int) -> tuple[int, int] | None:
        """One cardinal number in words at token i: (value, index after)."""
        german = self._german_thousands(i)
        if german is not None:
            return german, i + 1
        head = self._below_1000(i)
        if head is None:
            if self.word(i) in self.lang.thousand_word:
                head = (1, i)
            else:
                return None
        value, k = head
        if self.word(k) in self.lang.thousand_word and value < 1000:
            value *= 1000
            k += 1
            j = k + 1 if self.word(k) in self.lang.and_word else k
            rest = self._below_1000(j)
            if rest is None and self._at(j, ","):  # "twelve thousand, three hundred"
                rest = self._below_1000(j + 1)
                rest = rest if rest is not None and rest[0] >= 100 else None
            if rest is not None:
                value, k = value + rest[0], rest[1]
        elif head[1] == i:
            return None
        return value, k

    def _at(self, i: int, text: str) -> bool:
        return i < len(self.tokens) and self.tokens[i].text == text

    def _german_thousands(self, i: int) -> int | None:
        """A German number with its thousands in one word ("zweitausendsechsundzwanzig")."""
        word = self.word(i)
        if not self.lang.compounds or word is None or "tausend" not in word or self.used[i]:
            return None
        left, _, right = word.partition("tausend")
        count = 1 if left in ("", "ein") else self.lang.compounds.get(left)
        rest = 0 if right == "" else self.lang.compounds.get(right.removeprefix("und"))
        if count is None or rest is None:
            return None
        return count * 1000 + rest

    def _below_1000(self, i: int) -> tuple[int, int] | None:
        word = self.word(i)
        if word is None or self.used[i]:
            return None
        lang = self.lang
        if word in lang.compounds:
            return self._german_word(word, i)
        hundred: int | None = None
        k = i
        if word in lang.hundreds:
            hundred, k = lang.hundreds[word], i + 1
        elif (
            word in lang.units
            and 1 <= lang.units[word] <= 19
            and (self.word(i + 1) in lang.hundred_word)
        ):
            hundred, k = lang.units[word] * 100, i + 2
        elif word in lang.hundred_word:
            hundred, k = 100, i + 1
        if hundred is None:
            return self._below_100(i)
        j = k + 1 if self.word(k) in lang.and_word else k
        rest = self._below_100(j)
        return (hundred + rest[0], rest[1]) if rest else (hundred, k)

    def _german_word(self, word: str, i: int) -> tuple[int, int]:
        value = self.lang.compounds[word]
        if value < 100 and self.word(i + 1) in self.lang.hundred_word:  # "drei hundert"
            value *= 100
            rest = self._below_100(i + 2)
            return (value + rest[0], rest[1]) if rest else (value, i + 2)
        return value, i + 1

    def _below_100(self, i: int) -> tuple[int, int] | None:
        word = self.word(i)
        if word is None or (i < len(self.used) and self.used[i]):
            return None
        lang = self.lang
        if word in lang.tens:
            value = lang.tens[word]
            j = i + 2 if self.word(i + 1) in lang.and_word else i + 1
            unit = lang.units.get(self.word(j) or "")
            if unit is not None and 1 <= unit <= 9 and not self.used[j]:
                return value + unit, j + 1
            return value, i + 1
        if word in lang.compounds:
            return lang.compounds[word], i + 1
        if word in lang.units:
            return lang.units[word], i + 1
        return None

    # -- what is not a claim --------------------------------------------------------------

    def _blocked(self, value: _Value) -> bool:
        if value.kind == "time":
            return True
        if value.kind == "date":
            return False
        nxt = self.word(value.last + 1)
        if nxt is not None and self.lang.unit_after.match(nxt):
            return True
        before = self.tokens[value.first - 1] if value.first > 0 else None
        if before is not None and before.kind == "sym" and before.text == "%":
            return True
        after = self.tokens[value.last + 1] if value.last + 1 < len(self.tokens) else None
        if after is not None and after.kind == "sym" and after.text == "%":
            return True
        if (
            value.kind in ("int", "digits")
            and value.value.startswith("0")
            and len(value.value) >= 7
        ):
            return True  # a phone number
        prev = self.word(value.first - 1)
        return prev is not None and self.lang.block_before.match(prev)


def _only_spacing(end: int, start: int, gap: str) -> bool:
    return start - end <= 3 and all(ch in " -" for ch in gap)


def _valid_day(day: int, after: int) -> tuple[int, int] | None:
    return (day, after) if 1 <= day <= 31 else None


def _full_year(year: int) -> int:
    return year + 2000 if year < 100 else year


def _iso(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except (ValueError, OverflowError):
        return None


def _decimal_text(text: str) -> str:
    """A number as text without trailing zeros ("12.50" -> "12.5", "3.0" -> "3")."""
    try:
        number = Decimal(text)
    except (InvalidOperation, ValueError):
        return text
    if number == number.to_integral_value():
        return str(int(number))
    return format(number.normalize(), "f")


def _read_values(text: str, language: str, reference_date: date | None) -> list[_Value]:
    tokens = _tokenise(text)
    reader = _Reader(text, tokens, _language(_language_code(language)), _reference(reference_date))
    return reader.values()


def _reference(reference_date: date | None) -> date:
    return reference_date if isinstance(reference_date, date) else date.today()


# ---------------------------------------------------------------------------------------
# Cues and claims


@dataclass(frozen=True)
class _FieldCues:
    strong: _Stems
    weak: _Stems
    # Each word's strength, once: hostile text repeats its words a million times.
    seen: dict[str, int | None] = field(default_factory=dict, compare=False, hash=False)

    def strength(self, token: _Token) -> int | None:
        """0 for a strong cue of the field, 1 for a weak one, None for no cue."""
        if token.kind not in ("word", "sym"):
            return None
        text = token.text
        if text not in self.seen:
            if len(self.seen) > 4096:
                self.seen.clear()
            self.seen[text] = 0 if self.strong.match(text) else 1 if self.weak.match(text) else None
        return self.seen[text]


@functools.lru_cache(maxsize=256)
def _cues_for(name: str, extra: tuple[str, ...], code: str) -> _FieldCues:
    parts = [p for p in re.split(r"[_\W]+", name.lower()) if p]
    strong: list[str] = list(extra)
    weak: list[str] = []
    for part in parts:
        concepts = lex.CONCEPT_OF_PART.get(part, ())
        if part not in {"id", "no", "nr", "number"}:
            strong.append(part)
        for concept in concepts:
            for cue in lex.CONCEPT_CUES[concept][code]:
                (weak if cue in lex.WEAK_CUES else strong).append(cue)
            if code != "en":  # agents mix in English words
                strong.extend(c for c in lex.CONCEPT_CUES[concept]["en"] if c not in lex.WEAK_CUES)
    return _FieldCues(_Stems.of(strong), _Stems.of(weak))


_ACCEPTS: dict[str, frozenset[str]] = {
    "integer": frozenset({"int"}),
    "number": frozenset({"int", "decimal"}),
    "id": frozenset({"int", "digits"}),
    "date": frozenset({"date"}),
    "text": frozenset(),
}


def _normalised(value: _Value, kind: str) -> str:
    if kind == "integer" or (kind == "number" and value.kind == "int"):
        # Not int(): a hostile run of digits is longer than int() converts.
        return (value.value.lstrip("0") or "0") if value.value.isdigit() else value.value
    return value.value


def field_claims(
    text: str,
    fields: Mapping[str, FieldHint],
    language: str,
    reference_date: date | None = None,
) -> list[Claim]:
    """The values the sentence ties to one of `fields` (numbers in digits or words, dates in
    any common spoken/written form, in en/de/hr/ru); not every number that happens to
    equal some value. In text order."""
    try:
        return _field_claims(text, fields, language, reference_date)
    except Exception:  # hostile input must never break a verdict: no claim is read
        return []


def _field_claims(
    text: str, fields: Mapping[str, FieldHint], language: str, reference_date: date | None
) -> list[Claim]:
    if not isinstance(text, str) or not text or not fields:
        return []
    code = _language_code(language)
    tokens = _tokenise(text)
    reader = _Reader(text, tokens, _language(code), _reference(reference_date))
    values = reader.values()
    hints = {name: hint for name, hint in fields.items() if isinstance(hint, FieldHint)}
    cues = {name: _cues_for(str(name), tuple(hint.cues), code) for name, hint in hints.items()}
    owner = [-1] * len(tokens)
    for n, value in enumerate(values):
        for k in range(value.first, value.last + 1):
            owner[k] = n
    tied: dict[int, str] = {}
    for n, value in enumerate(values):
        name = _cued_field(n, value, tokens, owner, hints, cues)
        if name is not None:
            tied[n] = name
    _tie_by_shape(values, tied, hints, reader)
    return [
        Claim(name, _normalised(values[n], hints[name].kind), values[n].start, values[n].end)
        for n, name in sorted(tied.items())
    ]


def _tie_by_shape(
    values: list[_Value], tied: dict[int, str], hints: Mapping[str, FieldHint], reader: _Reader
) -> None:
    """Tie the values no cue tied, where their shape or a "to" leaves one field."""
    claimed = set(tied.values())
    first_tied = min((values[n].last for n in tied), default=len(reader.tokens))
    ending_at = {value.last: n for n, value in enumerate(values)}
    for n, value in enumerate(values):
        if n in tied or value.blocked:
            continue
        previous = ending_at.get(value.first - 2)
        if previous is not None and reader.word(values[previous].first - 1) not in (
            reader.lang.change_from
        ):
            previous = None  # only "from <old> to <new>" hands the old value's field on
        name = _shape_field(
            value,
            hints,
            reader,
            claimed,
            previous_field=tied.get(previous) if previous is not None else None,
            anything_before=first_tied < value.first,
        )
        if name is not None:
            tied[n] = name
            claimed.add(name)
            first_tied = min(first_tied, value.last)


_BEFORE_WINDOW = 5
_AFTER_WINDOW = 3


def _cued_field(
    n: int,
    value: _Value,
    tokens: list[_Token],
    owner: list[int],
    hints: Mapping[str, FieldHint],
    cues: Mapping[str, _FieldCues],
) -> str | None:
    """The field whose cue is nearest the value, with no other value or sentence end between."""
    fitting = [name for name, hint in hints.items() if value.kind in _ACCEPTS[hint.kind]]
    if not fitting or value.kind == "time":
        return None
    strength_of = {name: cues[name].strength for name in fitting}
    best: tuple[int, int, int, str] | None = None  # (weak, distance, before, field)
    for distance, k, after in _around(value, tokens, owner, n):
        token = tokens[k]
        for name in fitting:
            strength = strength_of[name](token)
            if strength is None:
                continue
            if value.blocked and not (after and distance == 1):
                continue  # "order … in 3 days": the unit after wins over a distant cue
            if hints[name].kind == "id" and _small(value) and (strength or after or distance > 2):
                continue  # "number 4 in the queue", "once more (jednom)": a count, not an id
            # A counted noun right after the number binds tightest ("в заказе 21 товар").
            rank = (strength, 0 if after and distance == 1 else distance, 1 - after, name)
            if best is None or rank < best:
                best = rank
    return best[3] if best else None


def _small(value: _Value) -> bool:
    """A one- or two-digit number said as one number: an id only right after its own cue."""
    return value.kind == "int" and len(value.value) < 3


def _around(
    value: _Value, tokens: list[_Token], owner: list[int], n: int
) -> Iterator[tuple[int, int, int]]:
    """(distance, token index, after?) of the tokens a cue may stand on, nearest first."""
    for distance in range(1, _BEFORE_WINDOW + 1):
        k = value.first - distance
        if k < 0 or _is_stop(tokens[k]) or (owner[k] not in (-1, n)):
            break
        yield distance, k, 0
    for distance in range(1, _AFTER_WINDOW + 1):
        k = value.last + distance
        # A cue after the value stays in its clause: "order 5590, 3 items", "#5590 — qty 3".
        if k >= len(tokens) or tokens[k].kind == "punct" or (owner[k] not in (-1, n)):
            break
        yield distance, k, 1


def _shape_field(
    value: _Value,
    hints: Mapping[str, FieldHint],
    reader: _Reader,
    claimed: set[str],
    previous_field: str | None,
    anything_before: bool,
) -> str | None:
    """The one field this value's shape fits (a date, with one date field), or after
    "to"/"auf"/"na"/"на" the one fitting field not already claimed in the text."""
    fitting = [name for name, hint in hints.items() if value.kind in _ACCEPTS[hint.kind]]
    if len(fitting) == 1 and (value.kind in ("date", "digits", "decimal") or len(hints) == 1):
        return fitting[0]
    if reader.word(value.first - 1) not in reader.lang.change_to:
        return None
    if previous_field in fitting:  # "from five to nine": the new value of the old one's field
        return previous_field
    if not anything_before:
        return None  # "open 9 to 5": nothing in the text is about a field yet
    free = [name for name in fitting if name not in claimed]
    plain = [name for name in free if hints[name].kind != "id"]
    if len(plain) == 1:
        return plain[0]
    return free[0] if len(free) == 1 else None


# ---------------------------------------------------------------------------------------
# Schema hints


def _date_pattern(pattern: str) -> bool:
    """Whether a pattern spells a date: four digits, a dash, digits ("^[0-9]{4}-[0-9]{2}-…")."""
    digits = pattern.replace("\\d", "[0-9]")
    return "[0-9]{4}-[0-9]" in digits


def hints_from_schema(parameters: Mapping[str, Any]) -> dict[str, FieldHint]:
    """FieldHints for a tool's JSON-Schema `parameters` (type integer/number, format date or
    a date pattern, an id-like pattern of digits, else text)."""
    try:
        properties = parameters.get("properties", {}) if isinstance(parameters, Mapping) else {}
        if not isinstance(properties, Mapping):
            return {}
        return {
            str(name): FieldHint(_kind_of(spec if isinstance(spec, Mapping) else {}))
            for name, spec in properties.items()
        }
    except Exception:  # a malformed schema gives no hints rather than an error
        return {}


def _kind_of(spec: Mapping[str, Any]) -> FieldKind:
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    pattern = str(spec.get("pattern", ""))
    if spec.get("format") in ("date", "date-time") or _date_pattern(pattern):
        return "date"
    if kind == "integer":
        return "integer"
    if kind == "number":
        return "number"
    if pattern and re.fullmatch(r"\^?(\\d|\[0-9\])[{+*\d,}]*\$?", pattern):
        return "id"
    return "text"


# ---------------------------------------------------------------------------------------
# "The change was made"


@functools.cache
def _phrases(code: str, table: str) -> tuple[tuple[str, ...], ...]:
    source = lex.DONE if table == "done" else lex.NOT_DONE
    return tuple(tuple(fold(w) for w in re.findall(r"[^\W\d_]+", p)) for p in source[code])


def _find(words: Sequence[str], phrase: Sequence[str], start: int, stop: int) -> int:
    n = len(phrase)
    for i in range(max(start, 0), min(stop, len(words)) - n + 1):
        if tuple(words[i : i + n]) == tuple(phrase):
            return i
    return -1


def _occurrences(
    words: Sequence[str], where: Mapping[str, list[int]], phrase: Sequence[str]
) -> Iterator[int]:
    """Where `phrase` starts in `words`, in order; `where` maps each word to its positions."""
    n = len(phrase)
    for i in where.get(phrase[0], ()):
        if n == 1 or tuple(words[i : i + n]) == tuple(phrase):
            yield i


_NUMBER_WORD = "nnn"  # a number in digits, as the lexicon's phrases write it
# Words that start a new clause ("updated, but not shipped"); hr "a" and ru "а" are "but".
_CLAUSE_WORDS = {
    "en": frozenset({"but", "however"}),
    "de": frozenset({"aber", "doch", "jedoch"}),
    "hr": frozenset({"ali", "a", "no"}),
    "ru": frozenset({"но", "а", "однако"}),
}


CACHED_TEXT_CHARS = 500
"""Agents say the same lines in call after call, and every call is read by several rules:
short sentences are read once per process (a bounded cache: at most 4,096 entries of at
most this many characters, so hostile input cannot grow it)."""


def claims_done(text: str, language: str) -> bool:
    """The sentence states that a requested change was made / booked / is done (affirmative,
    not negated, not a future promise, offer or question)."""
    if isinstance(text, str) and len(text) <= CACHED_TEXT_CHARS:
        return _claims_done_cached(text, language)
    return _claims_done(text, language)


@functools.lru_cache(maxsize=4096)
def _claims_done_cached(text: str, language: str) -> bool:
    return _claims_done(text, language)


def _claims_done(text: str, language: str) -> bool:
    try:
        code = _language_code(language)
        if not _may_claim_done(text, code):
            return False
        return any(_clause_done(c, code) for c in _clauses(_tokenise(text), code))
    except Exception:  # unreadable text states nothing
        return False


def _clauses(tokens: list[_Token], code: str) -> Iterator[list[str]]:
    """The clauses of each sentence that is not a question, as folded words."""
    sentence: list[_Token] = []
    for token in [*tokens, _Token("punct", ".", ".", -1, -1)]:
        if not _is_stop(token):
            sentence.append(token)
            continue
        if token.text != "?":
            clause: list[str] = []
            for item in sentence:
                if item.kind == "punct" or item.text in _CLAUSE_WORDS[code]:
                    if clause:
                        yield clause
                    clause = []
                elif item.kind == "word":
                    clause.append(item.text)
                elif item.kind in ("digits", "dec"):
                    clause.append(_NUMBER_WORD)
            if clause:
                yield clause
        sentence = []


_AFTER_DONE = 3


@functools.cache
def _done_first_words(code: str) -> frozenset[str]:
    return frozenset(phrase[0] for phrase in _phrases(code, "done") if phrase)


@functools.cache
def _by_first_word(code: str, table: str) -> dict[str, tuple[tuple[str, ...], ...]]:
    index: dict[str, list[tuple[str, ...]]] = {}
    for phrase in _phrases(code, table):
        if phrase:
            index.setdefault(phrase[0], []).append(phrase)
    return {word: tuple(phrases) for word, phrases in index.items()}


def _starting_here(
    code: str, table: str, where: Mapping[str, list[int]]
) -> Iterator[tuple[str, ...]]:
    """The table's phrases whose first word is in the clause: only they can occur in it, and
    a lexicon has dozens of phrases where a clause has a handful of words."""
    index = _by_first_word(code, table)
    for word in where:
        yield from index.get(word, ())


_LETTERS = re.compile(r"[^\W\d_]+")


def _may_claim_done(text: str, code: str) -> bool:
    """Whether any word of the text can start a completion phrase: without one no clause
    claims anything, and most of what an agent says has none. Every word the tokeniser
    reads is a run of letters found here too, so this never rules out a claim."""
    first_words = _done_first_words(code)
    return any(fold(word) in first_words for word in _LETTERS.findall(text))


def _clause_done(words: list[str], code: str) -> bool:
    """A completion word with no negation, future or offer before it in the clause, nor
    right after it ("done yet", "updated soon will be")."""
    first_words = _done_first_words(code)
    if not any(word in first_words for word in words):
        return False
    where: dict[str, list[int]] = {}
    for i, word in enumerate(words):
        where.setdefault(word, []).append(i)
    negations: set[int] = set()
    for phrase in _starting_here(code, "not", where):
        negations.update(_occurrences(words, where, phrase))
    first_negation = min(negations, default=len(words))
    for phrase in _starting_here(code, "done", where):
        for at in _occurrences(words, where, phrase):
            if at > first_negation:
                break
            after = at + len(phrase)
            if at < first_negation and not any(
                k in negations for k in range(after, after + _AFTER_DONE)
            ):
                return True
    return False


# ---------------------------------------------------------------------------------------
# Mentions


def mentions_value(text: str, value: Any, language: str) -> bool:
    """Whether the sentence states `value` (digits, number words, dates in any form)."""
    try:
        return _mentions(text, value, language)
    except Exception:  # unreadable text states nothing
        return False


def _mentions(text: str, value: Any, language: str) -> bool:
    if not isinstance(text, str) or value is None or isinstance(value, bool):
        return False
    wanted = _wanted(value)
    if wanted is None:
        return _mentions_text(text, str(value))
    kind, target = wanted
    for found in _read_values(text, language, _reference_for(target, kind)):
        if _matches(found, kind, target):
            return True
    return False


def _wanted(value: Any) -> tuple[str, str] | None:
    """How a value is looked for: ("date", ISO), ("digits", s), ("decimal", s), or None."""
    if isinstance(value, date):
        return "date", value.isoformat()[:10]
    if isinstance(value, int):
        return "digits", str(value)
    if isinstance(value, float | Decimal):
        return "decimal", _decimal_text(str(value))
    text = str(value).strip()
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return "date", text
    if re.fullmatch(r"[0-9]+", text):
        return "digits", text
    if re.fullmatch(r"[0-9]+[.,][0-9]+", text):
        return "decimal", _decimal_text(text.replace(",", "."))
    return None


def _reference_for(target: str, kind: str) -> date | None:
    if kind == "date":  # a date said without its year is read in the wanted date's year
        try:
            return date.fromisoformat(target)
        except ValueError:
            return None
    return None


def _matches(found: _Value, kind: str, target: str) -> bool:
    if kind == "date":
        return found.kind == "date" and found.value == target
    if kind == "decimal":
        return found.kind == "decimal" and found.value == target
    if found.kind not in ("int", "digits"):
        return False
    if found.value == target or target in found.parts:
        return True
    # Leading zeros are kept for ids ("0800"); a plain count compares as a number.
    return not target.startswith("0") and found.value.lstrip("0") == target.lstrip("0") != ""


def _mentions_text(text: str, value: str) -> bool:
    wanted = [fold(w) for w in re.findall(r"[^\W_]+", value)]
    if not wanted:
        return False
    words = [fold(w) for w in re.findall(r"[^\W_]+", text)]
    return _find(words, wanted, 0, len(words)) >= 0
