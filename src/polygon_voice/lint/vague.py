# ruff: noqa: RUF001, RUF002
"""Tier 1's vague wording: the lexicon's words, read where they stand (docs/lint.md).

A vague word is a flaw where it leaves the agent without a decision: "offer a few
alternatives", "if needed, send a technician". The same word is no flaw in a name or a
quote, where the prompt makes it exact next to it ("soon, within two days"), where it picks
out one thing ("the relevant form", "eine bestimmte Uhrzeit"), or where it is no hedge at
all (the noun "attempt", ru "может быть перенесена": can be moved). Hedged cases and
judgement words bound only what the agent does, so they count only in a clause that gives
an order; a case left to an impression ("if the caller seems upset") is vague too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

from polygon_voice.lint.lexicon import VagueReadings, WordLists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.numbers import numbers_in
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.lint.topics import lexicon

W_VAGUE = 0.1
# Quoted text is a name or a citation, not the prompt's own wording: the tariff "Heating
# on demand", the slogan «Always the right choice». Straight double quotes, German „…“,
# English “…”, guillemets either way; a quote never runs past its line.
_QUOTED = re.compile(r'`[^`\n]*`|"[^"\n]*"|„[^“”\n]*[“”]|“[^”\n]*”|«[^»\n]*»|»[^«\n]*«')
# "the kind of room", "what sort of card": a kind, not a hedge ("kind of late").
_KIND_OF = re.compile(r"(?:the|a|what|which|this|that|any|every)\s+$", re.IGNORECASE)
# A run of letters: the words the readings count (no hyphenated compounds needed here).
LETTERS = re.compile(r"[^\W\d_]+")
# How far after a vague word the prompt may make it exact ("a few days, at most three").
_EXACT_WITHIN = 60
_FREE_WORDS = 2  # words between them ("möglichst knapp, höchstens zwei Sätze")
# What sets a specification off: a comma, a colon, a bracket, a dash.
_SET_OFF = re.compile(r"[,;:(\u2013\u2014-]")
_CLAUSE_END = re.compile(r"[,;:.!?\u2013\u2014]")
# Infinitives, which name the action a "try" or an "enough" governs.
_INFINITIVE = {
    "en": re.compile(r"^to$"),
    "de": re.compile(r"^zu$"),
    "hr": re.compile(r"^(?:da|\w+(?:ti|ći))$"),
    "ru": re.compile(r"^\w+(?:ть|ти|чь|ться|тись)$"),
}
_ATTEMPT_REACH = 8  # words after "try" within which its action must follow
# "a certain X" with the indefinite article (German), or the Croatian and Russian singular,
# is one particular X; the plural ("bestimmte Fälle", "određeni slučajevi") is "some".
# The German indefinite article and "kein" in every case ending.
GERMAN_INDEFINITE = r"k?ein(?:e[mnrs]?)?"
_AFTER_GERMAN_INDEFINITE = re.compile(
    rf"(?:^|\W){GERMAN_INDEFINITE}\s+(?:ganz\s+)?$", re.IGNORECASE
)
_SINGULAR_ENDINGS = {
    "hr": ("en", "a", "o", "og", "oga", "om", "omu", "oj", "u"),
    "ru": ("ый", "ий", "ая", "ое", "ого", "ому", "ой", "ую", "ом"),
}
_AMBIGUOUS_NUMBER = {"hr": ("i",), "ru": ("ым",)}  # sg or pl: the noun after decides
_LOOK_PARTICLES = frozenset(
    {"up", "at", "for", "into", "after", "through", "over", "on", "in", "again", "out"}
)


@dataclass(frozen=True)
class _Context:
    """What the readings of one prompt need: its text, lists, and where orders stand."""

    text: str
    lists: WordLists
    readings: VagueReadings
    in_order: Callable[[int], bool]
    orders_between: Callable[[int, int], bool]


def vague(
    prompt: Prompt, lists: WordLists, orders: list[tuple[int, int]] | None = None
) -> list[Finding]:
    """Words of the language's vague-wording lexicon read as vague where they stand (see
    the module); words bound to orders only inside `orders`, the sorted (start, end) of the
    parts that give orders (everywhere when None)."""
    text = prompt.text
    quoted = _Spans([m.span() for m in _QUOTED.finditer(text)])
    spans = None if orders is None else _Spans(orders)
    ctx = _Context(
        text=text,
        lists=lists,
        readings=lists.vague_readings,
        in_order=(lambda _offset: True) if spans is None else spans.holds,
        orders_between=(lambda _a, _b: True) if spans is None else spans.meets,
    )
    findings = []
    for sentence in prompt.sentences:
        places = [m for m in _candidates(ctx, sentence) if not quoted.holds(m.start())]
        for match in places:
            findings.append(_finding(prompt, match.start(), match.end(), match.group()))
        taken = [m.span() for m in places]
        for start, end in _impressions(ctx, sentence):
            if not quoted.holds(start) and not any(a < end and start < b for a, b in taken):
                findings.append(_finding(prompt, start, end, text[start:end]))
    return findings


def _finding(prompt: Prompt, start: int, end: int, said: str) -> Finding:
    word = " ".join(said.split())
    return prompt.finding(
        "ambiguity",
        start,
        end,
        tier=1,
        kind="vague-wording",
        weight=W_VAGUE,
        message=f'"{word}" has more than one reading; say exactly what you mean',
    )


class _Spans:
    """Sorted, non-overlapping (start, end) spans: which one holds an offset, by search."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = spans
        self._starts = [a for a, _ in spans]

    def holds(self, offset: int) -> bool:
        k = bisect.bisect_right(self._starts, offset) - 1
        return k >= 0 and offset < self._spans[k][1]

    def meets(self, start: int, end: int) -> bool:
        """Whether a span overlaps start..end."""
        k = bisect.bisect_right(self._starts, start) - 1
        if k >= 0 and start < self._spans[k][1]:
            return True
        return k + 1 < len(self._spans) and self._starts[k + 1] < end


Reading = Callable[[_Context, Sentence, re.Match[str]], bool]


def _candidates(ctx: _Context, sentence: Sentence) -> list[re.Match[str]]:
    """The sentence's lexicon matches that read as vague, earliest first. Where two
    overlap, the longer one is read and the other dropped ("as appropriate" is a hedged
    case, not the word "appropriate")."""
    r = ctx.readings
    lists: list[tuple[re.Pattern[str], Reading]] = [
        (ctx.lists.vague, _vague_anywhere),
        (ctx.lists.vague_in_rules, _how_often),
        (r.cases, _hedged_case),
        (r.judgement, _judgement),
        (r.particular, _particular),
        (r.attempt, _attempt),
        (r.parenthetical, _parenthetical),
    ]
    found = [
        (match, reads)
        for pattern, reads in lists
        for match in pattern.finditer(ctx.text, sentence.start, sentence.end)
    ]
    found.sort(key=lambda p: (p[0].start(), -p[0].end()))
    kept: list[tuple[re.Match[str], Reading]] = []
    for match, reads in found:
        if not kept or match.start() >= kept[-1][0].end():
            kept.append((match, reads))
    return [
        match
        for match, reads in kept
        if not _set_phrase(ctx, sentence, match) and reads(ctx, sentence, match)
    ]


def _set_phrase(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """Inside a set phrase that says something exact ("as soon as the caller confirms"), or
    "the kind of" X."""
    start, end = match.span()
    window = (max(sentence.start, start - 20), min(sentence.end, end + 20))
    for phrase in ctx.readings.precise.finditer(ctx.text, *window):
        if phrase.start() <= start and end <= phrase.end():
            return True
    return match.group().lower().endswith(" of") and bool(
        _KIND_OF.search(ctx.text[max(sentence.start, start - 8) : start])
    )


# --- the readings, one per list --------------------------------------------------------


def _vague_anywhere(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """Quantities and hedges: vague in rules and descriptions alike, unless made exact or
    given as what is typical ("обычно это занимает пару минут": an estimate, said so)."""
    return not _made_exact(ctx, sentence, match) and not _typical(ctx, sentence, match)


def _typical(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """Whether a word of how often stands before it in its clause ("usually a few days")."""
    before = ctx.text[sentence.start : match.start()]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    return ctx.lists.vague_in_rules.search(before, cut) is not None


def _how_often(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """How often: vague in an order ("usually confirm"), not in reported content inside it
    ("ask which doctor they usually see"), nor made exact ("in der Regel 45 Minuten")."""
    if not ctx.in_order(match.start()):
        return False
    return not _in_complement(ctx, sentence, match) and not _made_exact(ctx, sentence, match)


def _hedged_case(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """ "If needed": vague in an order, unless a condition right after says which case
    ("по возможности, если житель не торопится")."""
    # A hedge opening a sentence bounds its verb, an order to the agent even where the
    # verb's form does not show it (hr "Po potrebi uputi putnika": uputi is also "he refers").
    if not _bounds_order(ctx, sentence, match) and match.start() != sentence.start:
        return False
    after = ctx.text[match.end() : sentence.end]
    set_off = re.match(r"\s*[,;:(\u2013\u2014-]\s*", after)
    if set_off is None:
        return True
    at = set_off.end()
    said = ctx.readings.bounds.match(after, at)  # "if possible, that is if ..."
    if said is not None:
        at = said.end() + len(after[said.end() :]) - len(after[said.end() :].lstrip(" ,"))
    return ctx.readings.opens_case.match(after, at) is None


def _judgement(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """ "Appropriate": vague where it bounds an order; not "the relevant reference" (the one
    that fits, picked out by the article), nor "dovoljno je reći X" (what suffices, named:
    an infinitive after it; Croatian and Russian, whose infinitives show it)."""
    if not _bounds_order(ctx, sentence, match):
        return False
    words = LETTERS.findall(ctx.text, max(sentence.start, match.start() - 12), match.start())
    if words and ctx.readings.definite.fullmatch(words[-1]):
        return False
    return ctx.readings.language in ("en", "de") or not _infinitive_after(
        ctx, sentence, match.end(), reach=2
    )


def _particular(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """ "Bestimmt", "određen", "определённый": vague as "some" (plural), not as "a
    particular X" (German after "ein", the Croatian and Russian singular)."""
    language = ctx.readings.language
    if language == "de":
        before = ctx.text[max(sentence.start, match.start() - 12) : match.start()]
        return not _AFTER_GERMAN_INDEFINITE.search(before)
    word = match.group().lower()
    ambiguous = _AMBIGUOUS_NUMBER.get(language, ())
    if word.endswith(ambiguous):
        return not _singular_noun_after(ctx, sentence, match.end(), language)
    return not word.endswith(_SINGULAR_ENDINGS.get(language, ()))


def _singular_noun_after(ctx: _Context, sentence: Sentence, offset: int, language: str) -> bool:
    """Whether the next word is a singular noun: Croatian masculine nouns end in a
    consonant in the singular ("neki član") and in -i in the plural ("neki članovi");
    Russian datives plural end in -ам/-ям ("определённым клиентам")."""
    nxt = LETTERS.search(ctx.text, offset, sentence.end)
    if nxt is None:
        return False
    noun = nxt.group().lower()
    if language == "ru":
        return not noun.endswith(("ам", "ям"))
    return noun != "od" and noun[-1] not in "aeiou"  # "neki od korisnika": some of them


def _attempt(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """ "Try": vague as a verb governing an action ("try to calm them", "pokušajte ga
    smiriti"); not the noun ("the next attempt", "novi pokušaj dostave", "den nächsten
    Versuch"), not forbidden ("do not try to resolve it": do not resolve it)."""
    before = ctx.text[max(sentence.start, match.start() - 16) : match.start()]
    if ctx.lists.negative.search(before):
        return False
    words = LETTERS.findall(before)
    if words and ctx.readings.determiners.fullmatch(words[-1]):
        return False  # "the next attempt", "svaki novi pokušaj"
    if ctx.readings.language == "de" and match.group()[0].isupper() and words:
        return False  # a capital after a word: the noun Versuch
    # English "try to" holds its "to"; elsewhere the action must follow.
    return ctx.readings.language == "en" or _infinitive_after(
        ctx, sentence, match.end(), reach=_ATTEMPT_REACH
    )


def _parenthetical(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """ "Может быть, ..." set off by a comma is a hedge; "может быть перенесена" (can be
    moved), "возможно только с чеком" (is possible) are not."""
    after = ctx.text[match.end() : sentence.end].lstrip()
    before = ctx.text[sentence.start : match.start()].rstrip()
    return after.startswith(",") or (before.endswith(",") and _CLAUSE_END.match(after) is not None)


# --- what the readings share ----------------------------------------------------------


def _bounds_order(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """Whether the word stands in an order, or ends one: an order is cut before its reason
    ("as", "because"), and "as appropriate", "as needed" start with that "as"."""
    if ctx.in_order(match.start()):
        return True
    before = ctx.text[sentence.start : match.start()].rstrip()
    if before and ctx.in_order(sentence.start + len(before) - 1):
        return True
    # "Then respond appropriately": an order verb after a word of sequence.
    words = [w.lower() for w in LETTERS.findall(before)]
    while words and ctx.readings.sequence.fullmatch(words[0]):
        words.pop(0)
    return bool(words) and words[0] in ctx.lists.imperative


def _made_exact(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """A number right after the vague word, or set off or bounded a word or two after
    ("soon, within two days", "in der Regel innerhalb von 30 Minuten"): made exact."""
    window = ctx.text[match.end() : min(sentence.end, match.end() + _EXACT_WITHIN)]
    found = numbers_in(window, lexicon(ctx.readings.language))
    if not found:
        return False
    gap = window[: min(start for _, start, _ in found)]
    if not gap.strip():
        return True
    bound = ctx.readings.bounds.search(gap)
    bounded = bound is not None and not gap[bound.end() :].strip()
    free = LETTERS.findall(gap if not bounded or bound is None else gap[: bound.start()])
    return len(free) <= _FREE_WORDS and (bounded or _SET_OFF.search(gap) is not None)


def _in_complement(ctx: _Context, sentence: Sentence, match: re.Match[str]) -> bool:
    """Whether the word stands in reported content: a "that" / "which" clause of its own
    clause ("Учитывайте, что пациенты часто ...": how the patients are)."""
    before = ctx.text[sentence.start : match.start()]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    return ctx.readings.complements.search(before, cut) is not None


def _infinitive_after(ctx: _Context, sentence: Sentence, offset: int, reach: int) -> bool:
    """Whether an infinitive follows within `reach` words (the action governed)."""
    infinitive = _INFINITIVE.get(ctx.readings.language)
    if infinitive is None:
        return False
    words = LETTERS.findall(ctx.text, offset, sentence.end)[:reach]
    return any(infinitive.match(w.lower()) for w in words)


# --- cases decided by an impression ---------------------------------------------------


def _impressions(ctx: _Context, sentence: Sentence) -> list[tuple[int, int]]:
    """(start, end) of each condition decided by an impression: "if the guest seems
    unsure", "wenn der Schaden größer wirkt", "ako gost djeluje nezadovoljno", "если клиент
    кажется заинтересованным" — from the word that opens the case to its end."""
    r = ctx.readings
    found = []
    for verb in r.impressions.finditer(ctx.text, sentence.start, sentence.end):
        opener = _case_before(ctx, sentence, verb.start())
        if opener is None or not _has_predicate(ctx, sentence, verb):
            continue
        # The case bounds an order; in a permission ("you may skip it if the caller seems
        # rushed") or a description it decides nothing the agent must do.
        if not ctx.orders_between(opener, sentence.end) or r.permissions.search(
            ctx.text, sentence.start, sentence.end
        ):
            continue
        tail = _CLAUSE_END.search(ctx.text, verb.end(), sentence.end)
        found.append((opener, tail.start() if tail else sentence.end))
    return found


_CASE_WORDS = 8  # the most words between "if" and its impression verb


def _case_before(ctx: _Context, sentence: Sentence, offset: int) -> int | None:
    """Where the condition holding the verb at `offset` opens: its "if" in the same clause
    (no comma between), or the verb itself opening a German sentence ("Wirkt der Anrufer
    verärgert, ...")."""
    before = ctx.text[sentence.start : offset]
    cut = max((m.end() for m in _CLAUSE_END.finditer(before)), default=0)
    openers = list(ctx.readings.opens_case.finditer(before, cut))
    if openers:
        start = openers[-1].start()
        if len(LETTERS.findall(before, start)) <= _CASE_WORDS:
            return sentence.start + start
    if ctx.readings.language == "de" and not before.strip():
        return offset
    return None


def _has_predicate(ctx: _Context, sentence: Sentence, verb: re.Match[str]) -> bool:
    """Whether the verb says how something seems: a word after it ("seems unsure", not
    "if the alarm sounds," nor "look up"), or in German before it ("verärgert wirkt")."""
    after = LETTERS.search(ctx.text, verb.end(), sentence.end)
    gap = ctx.text[verb.end() : after.start()] if after else ""
    if ctx.readings.language == "de" and not ctx.text[sentence.start : verb.start()].strip():
        return after is not None  # "Wirkt der Anrufer verärgert"
    if ctx.readings.language == "de":
        before = LETTERS.findall(ctx.text, sentence.start, verb.start())
        return bool(before) and before[-1].islower() and before[-1] != "nicht"
    if after is None or gap.strip():
        return False
    return not (ctx.readings.language == "en" and after.group().lower() in _LOOK_PARTICLES)
