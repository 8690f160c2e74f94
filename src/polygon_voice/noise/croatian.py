"""Croatian number words, written here because num2words has no Croatian.

(Its Serbian output is not Croatian spelling: "hiljadu" for "tisuću", "dvesta" for "dvjesto".)
Cardinal numbers in the nominative, as standard Croatian writes them: "sto dvadeset pet",
"dvije tisuće", "pet tisuća". Variants a caller may also say are listed by `variants`.
"""

from __future__ import annotations

UNITS = ("nula", "jedan", "dva", "tri", "četiri", "pet", "šest", "sedam", "osam", "devet")
TEENS = (
    "deset",
    "jedanaest",
    "dvanaest",
    "trinaest",
    "četrnaest",
    "petnaest",
    "šesnaest",
    "sedamnaest",
    "osamnaest",
    "devetnaest",
)
TENS = (
    "",
    "",
    "dvadeset",
    "trideset",
    "četrdeset",
    "pedeset",
    "šezdeset",
    "sedamdeset",
    "osamdeset",
    "devedeset",
)
HUNDREDS = (
    "",
    "sto",
    "dvjesto",
    "tristo",
    "četiristo",
    "petsto",
    "šesto",
    "sedamsto",
    "osamsto",
    "devetsto",
)
# Accepted spellings besides the ones above ("dvjesta" and "trista" are standard too).
HUNDRED_VARIANTS = {"dvjesto": "dvjesta", "tristo": "trista"}
# "tisuća" is feminine: one and two take their feminine forms before it.
FEMININE = {"jedan": "jedna", "dva": "dvije"}
MAX = 999_999


def croatian_number(n: int) -> str:
    """The Croatian words of 0 <= n <= 999 999."""
    if not 0 <= n <= MAX:
        raise ValueError(f"Croatian number words cover 0 to {MAX:,}, not {n}")
    if n == 0:
        return UNITS[0]
    thousands, rest = divmod(n, 1000)
    words = _thousands(thousands) if thousands else []
    if rest:
        words += _below_thousand(rest)
    return " ".join(words)


def variants(n: int) -> list[str]:
    """Other ways to write 0 <= n <= 999: feminine/neuter forms, "dvjesta", "dvadeset i pet"."""
    canonical = croatian_number(n)
    words = canonical.split()
    found = [canonical]
    last = words[-1]
    for other in (FEMININE.get(last), "jedno" if last == "jedan" else None):
        if other:
            found.append(" ".join([*words[:-1], other]))
    hundreds = HUNDRED_VARIANTS.get(words[0])
    if hundreds:
        found += [" ".join([hundreds, *f.split()[1:]]) for f in list(found)]
    tens_and_unit = len(words) >= 2 and words[-2] in TENS[2:] and last in UNITS[1:]
    if tens_and_unit:
        found += [" ".join([*f.split()[:-1], "i", f.split()[-1]]) for f in list(found)]
    return list(dict.fromkeys(found))


def _below_thousand(n: int) -> list[str]:
    hundreds, rest = divmod(n, 100)
    words = [HUNDREDS[hundreds]] if hundreds else []
    if 10 <= rest <= 19:
        return [*words, TEENS[rest - 10]]
    tens, unit = divmod(rest, 10)
    if tens:
        words.append(TENS[tens])
    if unit:
        words.append(UNITS[unit])
    return words


def _thousands(count: int) -> list[str]:
    if count == 1:
        return ["tisuću"]
    words = _below_thousand(count)
    if words[-1] in FEMININE:
        words[-1] = FEMININE[words[-1]]
    return [*words, thousand_form(count)]


def thousand_form(count: int) -> str:
    """'tisuća' after 5-20, 'tisuće' after 2-4 (not 12-14), as Croatian agrees with the count."""
    if count % 10 in (2, 3, 4) and count % 100 not in (12, 13, 14):
        return "tisuće"
    return "tisuća"
