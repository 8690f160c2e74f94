"""Tier 1 rules on pairs of clauses, compared by lemmas and synonym groups (lint/topics.py).

They find what the exact-word rules of pairs.py miss: a rule said again or contradicted in
other words ("ask for" / "request"; "offer a refund" / "refunds are not given"), a rule
weakened elsewhere, in the same words or others of their family ("you must confirm" /
"confirming is optional"), a thing said free and given a price, a prohibition without
exception against a rule it overrides in some cases ("transfer VIP callers" / "never
transfer calls after 6 pm"), numbers in words against digits ("two" / "3"), and brevity
against full detail. Each place is marked once per axis, and never where pairs.py marked
it already. The thresholds were fitted on the corpus's dev part (docs/lint.md).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import defaultdict
from collections.abc import Callable, Iterator

from polygon_voice.lint.model import Finding
from polygon_voice.lint.numbers import half_hours_in, minutes_of, numbers_in
from polygon_voice.lint.rules import Rule
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.lint.topics import (
    STEM_LENGTH,
    Clause,
    Lexicon,
    clauses,
    first_condition,
    stem_of,
    topic_of,
)

W_CONTRADICTION = 0.5
W_DUPLICATE = 0.34
# Opposite or weakened rules: this many topic words in common, and this share of the
# smaller clause's topic (fitted on dev: labelled pairs share 0.5-1.0, unrelated ones
# on one subject mostly under 0.5).
OPPOSITE_SHARED = 2
OPPOSITE_SHARE = 0.6
WEAKENED_SHARE = 0.5
# A rule and its opposite conflict when one holds in every case ("always", "never ...
# any"); on dev, a plain rule against a plain prohibition was more often two cases (P 0.92
# -> 0.95, one conflict of 114 lost).
REWORDED_NEEDS_ALL_CASES = True
# Two plain rules, one a prohibition, name one case when they share this many topic words
# and this share of the smaller one's (dev: 0.7 found 3 more conflicts than 0.8, and 2
# more false ones).
SAME_RULE_SHARED = 3
SAME_RULE_SHARE = 0.8
# Two conditions are one case when they share this share of the smaller one's words.
SAME_CASE_SHARE = 0.6
# A thing free in one rule and priced in another: this many words of it in common, and
# this share of the smaller clause's.
FREE_SHARED = 1
FREE_SHARE = 0.5  # of the smaller clause's words (dev: 0 -> 0.5 kept 3 of 5 found, 0 of 4 false)
# Restatements: more in common, and the same action (ask / tell / confirm ...) when both
# name one; without a shared action, a higher bar.
DUPLICATE_SHARED = 3
DUPLICATE_SHARE = 0.6  # cross-validated on two halves of dev: precision up on both (docs/lint.md)
DUPLICATE_OBJECTS = 2
DUPLICATE_WIDER = 0.4
DUPLICATE_SHARED_NO_ACTION = 4
DUPLICATE_SHARE_NO_ACTION = 0.7
# Two statements (no order in either): more words in common still.
STATEMENT_SHARED = 5
# Different numbers for one thing conflict on one subject: this many other topic words
# in common (fitted on dev: 1 flagged days in unrelated rules of the same prompt).
NUMBER_CONTEXT = 2
# Two spans of time in other units ("48 hours" / "a week"): one more word in common (dev:
# precision 0.83 -> 0.86 on contradictions, no conflict lost).
SPAN_CONTEXT_OTHER_UNITS = 3
# Actions whose blanket prohibition overrides a case-specific rule (conditional conflict).
CONDITIONAL_ACTIONS = frozenset({"~transfer", "~weiterleiten", "~prebaciti", "~перевести"})
# A word in this many clauses or more is not looked up for candidates: it says little
# about what a rule is about, and would make the search quadratic on long prompts.
COMMON_WORD = 40
# Any one action forbidden without exception against a rule asking for it: on this many
# things in common besides the verb (one made most of its false findings on dev).
CONDITIONAL_OBJECTS = 2


# A judgement call ("if it seems fair") loosens the rule said just before it: within this
# many sentences, on one word in common.
DISCRETION_REACH = 1


def _share(a: frozenset[str], b: frozenset[str]) -> tuple[int, float]:
    shared = len(a & b)
    return shared, shared / max(1, min(len(a), len(b)))


def _candidates(units: list[Clause]) -> Iterator[tuple[Clause, Clause]]:
    """(earlier, later) pairs sharing a topic word that is not too common, in later order."""
    postings: dict[str, list[int]] = defaultdict(list)
    for j, unit in enumerate(units):
        earlier: set[int] = set()
        for word in unit.topic:
            ids = postings[word]
            if len(ids) < COMMON_WORD:
                earlier.update(ids)
            ids.append(j)
        for i in sorted(earlier):
            if units[i].sentence is not unit.sentence or units[i].start != unit.start:
                yield units[i], unit


def _acted_on(unit: Clause) -> frozenset[str]:
    """What the rule's main clause acts on: its topic without the case it names and its
    verbs; the case's words when the main clause names nothing ("if a caller needs a new
    bin, order *it*")."""
    things = unit.topic - unit.actions
    return (things - unit.condition) or things


def _judgement_pairs(units: list[Clause]) -> Iterator[tuple[Clause, Clause]]:
    """Each clause left to the agent's judgement with the clauses just before it: it may
    name what it loosens in another word ("pack the glass" / "let them wrap it
    themselves"), sharing no topic word the index would find it by."""
    for j, unit in enumerate(units):
        if not unit.discretion:
            continue
        for first in reversed(units[max(0, j - 8) : j]):
            if not _next_to(first, unit):
                break
            if first.sentence is not unit.sentence:
                yield first, unit


def _opposed(a: Clause, b: Clause) -> str | None:
    """The kind of conflict between two instruction clauses, or None."""
    if a.describes_callers or b.describes_callers or a.describes_tool or b.describes_tool:
        return None
    if a.sentence is b.sentence:
        # "Never book surgery by phone; book a consultation first": one sentence that says
        # a rule and its way out is a deliberate contrast, not a slip.
        return None
    polarities = {a.polarity, b.polarity}
    if "weak" in polarities and len(polarities) == 2:
        return "modal-weakening" if _weakens(a, b) else None
    if not (a.instruction and b.instruction):
        return None
    # By stems: the dictionary lacks many inflected forms ("primatelja", "preusmjeravaj"),
    # and one form in each rule is one word all the same. Without the reasons given: two
    # rules on one thing are opposite whatever each says of why.
    shared, share = _share(a.rule_stems, b.rule_stems)
    if (a.exception or b.exception) and not (_always_without(a, b) or _named_without(a, b)):
        return None
    objects = len((a.topic & b.topic) - a.actions - b.actions)
    # What both rules act on, not only the case one of them names ("when the caller asks
    # about a debt under 100 euros, offer to pay in full" / "never grant a debt write-off").
    acted_on = len(_acted_on(a) & _acted_on(b))
    # Two words on one thing, not only the same verb: "ask which items" and "customers
    # ask about orders" are not about one rule.
    about_one_thing = objects >= 1 and shared >= OPPOSITE_SHARED
    # "Ask for the number" and "never confirm the number" are two actions, not opposites.
    other_actions = bool(a.actions and b.actions and not a.actions & b.actions)
    if polarities == {"pos", "neg"}:
        negative = a if a.polarity == "neg" else b
        positive = b if negative is a else a
        if positive.restricted:
            return None  # "read only the last four digits" agrees with "never read the number"
        if about_one_thing and acted_on and not other_actions and share >= OPPOSITE_SHARE:
            if _cases_overlap(positive, negative):
                return "reworded-directives"
            return None
        both = a.actions & b.actions
        # A transfer that one rule asks for always (or in some cases) and another forbids
        # in some cases; or any one action on one thing that a rule forbids without
        # exception ("never give a credit to ..." / "credits are given for every ...").
        if a.conditional and b.conditional and not _same_case(a, b):
            return None  # two rules each for some cases: not known to meet
        if both & CONDITIONAL_ACTIONS and (negative.universal or positive.strong):
            return "conditional-conflict"
        if both and objects >= CONDITIONAL_OBJECTS and negative.universal:
            return "conditional-conflict"
    return None


def _weakens(a: Clause, b: Clause) -> bool:
    """Whether one of two clauses makes optional what the other requires or forbids.

    "Only if the caller asks" weakens a "must": an exception is the weakening here. A
    prohibition is weakened only by a permission left to the agent's judgement ("never book
    pets into cabins" / "you may allow a small dog if it seems reasonable"): "you do not
    have to" agrees with it. A rule holding in every case ("grundsätzlich", "any") is firm
    as a "must" is."""
    weak = a if a.polarity == "weak" else b
    firm = b if weak is a else a
    # A policy said as a statement ("tickets are not exchanged, as a rule") is loosened by
    # a judgement call as much as an order is.
    if not (firm.instruction or (weak.discretion and firm.universal)):
        return False
    if firm.polarity == "neg" and not weak.discretion:
        return False
    if not (firm.strong or (weak.discretion and (firm.universal or firm.polarity == "neg"))):
        return False
    # By word families: a "must" and its weakening often name one thing in two word
    # forms ("rezervacije" / "rezervaciji", "provjeriti" / "provjera").
    shared, share = _shared_forms(firm, weak)
    if shared >= OPPOSITE_SHARED and share >= WEAKENED_SHARE:
        return True
    # A judgement call right after the rule it loosens points back to it ("Damage must be
    # reported within seven days. If a customer calls later, you may still accept the claim
    # if it seems fair."): one word of the rule in common is enough there.
    return weak.discretion and _next_to(firm, weak) and shared >= 1


def _next_to(first: Clause, later: Clause) -> bool:
    return 0 <= later.sentence.index - first.sentence.index <= DISCRETION_REACH


def _always_without(a: Clause, b: Clause) -> bool:
    """A prohibition excepted only by a "without" against a rule that holds always: they
    meet where the "without" is missing ("never redirect a parcel without consent" /
    "always redirect the parcel to the locker")."""
    negative, positive = (a, b) if a.polarity == "neg" else (b, a)
    return (
        {a.polarity, b.polarity} == {"pos", "neg"}
        and negative.only_without
        # "Always book ..." or "book *any* animal": it holds in every case.
        and (positive.strong or positive.universal)
        and not positive.exception
        # "Children must be with an adult" names what the other is not done without.
        and not _supplies_without(negative, positive)
    )


def _shared_forms(firm: Clause, weak: Clause) -> tuple[int, float]:
    """Topic stems in common between a rule and its weakening, a word counting when the
    other says it in another form too ("must check the identity" / "checking the identity
    is optional"): the larger count, either way round, over the smaller topic."""
    akin = len({f for f in firm.forms if any(_akin(f, g) for g in weak.forms)})
    shared = max(len(firm.stems & weak.stems), akin)
    return shared, shared / max(1, min(len(firm.stems), len(_weakened(weak))))


def _weakened(weak: Clause) -> frozenset[str]:
    """What a weakening makes optional: its topic without the case it names ("you may skip
    the reminder *if the caller is in a hurry*"). Not when the weakening is that case
    itself ("only if the stock ran out"): then the case is what the rule is about."""
    if weak.discretion:
        # "..., if it seems to you that the caller is struggling": the judgement's case.
        kept = weak.topic - weak.condition - weak.judged
        return frozenset(stem_of(w) for w in kept) or weak.stems
    if weak.exception or not weak.conditional:
        return weak.stems
    return frozenset(stem_of(w) for w in weak.topic - weak.condition) or weak.stems


# A word inside a longer one of this length or more is of its family ("фотографировать" /
# "сфотографировать", "Gebühr" / "Umbuchungsgebühr").
AKIN_INSIDE = 7


def _akin(a: str, b: str) -> bool:
    """Two lemmas of one family: one word, one stem (stem_of), or the shorter inside the
    longer."""
    if a == b or (stem_of(a) == stem_of(b) and min(len(a), len(b)) > STEM_LENGTH):
        return True
    short, long = sorted((a, b), key=len)
    return len(short) >= AKIN_INSIDE and short in long


def _cases_overlap(positive: Clause, negative: Clause) -> bool:
    """Whether a rule and a prohibition can meet in one case. A prohibition limited to
    some cases ("never take payment before the caller agrees") meets only a rule that
    holds in every case ("always take payment ..."); two rules each limited to some
    cases are not known to meet."""
    if negative.conditional and positive.conditional:
        # Two rules each for some cases meet when their cases are one ("always arrange a
        # visit before a quote" / "never arrange a visit before a quote").
        return _same_case(positive, negative)
    if negative.conditional:
        return positive.strong
    if positive.conditional:
        # A prohibition without a condition holds in every case, so it meets a rule for
        # some ("Do not connect outside callers to rooms" / "put callers through to a
        # room when they give the guest's name").
        return True
    # Two plain rules on one thing in nearly the same words are one case ("Tell callers
    # the rough price on the phone" / "Do not tell callers the rough price on the phone").
    # By stems, as the rules are compared ("prijavu" / "prijavljuju").
    shared, share = _share(positive.rule_stems, negative.rule_stems)
    if shared >= SAME_RULE_SHARED and share >= SAME_RULE_SHARE:
        return True
    # A prohibition of the whole of what a rule asks for: "Recommend the cheapest tariff" /
    # "Do not recommend a tariff" (all the prohibition names is in the rule).
    if shared >= OPPOSITE_SHARED and negative.rule_stems <= positive.rule_stems:
        return True
    # Else one of them must hold in every case: "always offer ..." or "never ... any".
    return positive.strong or negative.universal or not REWORDED_NEEDS_ALL_CASES


def cases_meet(lex: Lexicon) -> Callable[[Sentence, Sentence], bool]:
    """Whether two sentences' rules can apply at once: not when each holds in its own case
    (both conditional, on different conditions)."""

    # A sentence meets many others on a long prompt: read each once.
    read: dict[str, Clause] = {}

    def whole(sentence: Sentence) -> Clause:
        if sentence.text not in read:
            read[sentence.text] = _whole(sentence, lex)
        return read[sentence.text]

    def meet(a: Sentence, b: Sentence) -> bool:
        first, second = whole(a), whole(b)
        if _supplies_without(first, second) or _supplies_without(second, first):
            return False
        return not (first.conditional and second.conditional) or _same_case(first, second)

    return meet


def _supplies_without(prohibition: Clause, rule: Clause) -> bool:
    """A rule that names what a prohibition is not done without agrees with it ("never
    book a child ticket without an adult ticket" / "child tickets are booked with an adult
    ticket"); one that says the same "without" names the thing, not the exception."""
    return (
        prohibition.only_without
        and bool(prohibition.without_what & rule.topic)
        and not _named_without(prohibition, rule)
    )


def _named_without(a: Clause, b: Clause) -> bool:
    """Both rules say the same "without": it is part of what they name ("the tyre cover
    without excess"), not an exception to either."""
    excepted = [c for c in (a, b) if c.exception]
    return (
        bool(a.without_what)
        and a.without_what == b.without_what
        and all(c.only_without or c.polarity != "neg" for c in excepted)
    )


def _whole(sentence: Sentence, lex: Lexicon) -> Clause:
    return clauses(Prompt(sentence.text), lex)[0]


def _same_case(a: Clause, b: Clause) -> bool:
    """Whether two conditional rules name one case: their conditions share most words."""
    shared, share = _share(a.condition, b.condition)
    return shared >= 1 and share >= SAME_CASE_SHARE


def _repeated(a: Clause, b: Clause) -> bool:
    if a.polarity != b.polarity or a.sentence is b.sentence:
        return False
    if a.describes_callers or b.describes_callers:
        return False  # "Customers call to book or cancel" is who calls, not a rule
    if a.tools and b.tools and not a.tools & b.tools:
        return False  # "cancel it with `cancel_booking`" / "book it with `make_booking`"
    if a.describes_tool or b.describes_tool:
        return False  # "book_engineer(slot): books a visit" says what a tool does
    if _narrows(a, b) or _narrows(b, a):
        return False
    shared, share = _share(a.stems, b.stems)  # by stems, as in _opposed
    if a.actions and b.actions:
        # A short rule said again whole ("Ask for X." / "Request X.") shares all it has.
        enough = shared >= DUPLICATE_SHARED or (shared >= 2 and a.topic == b.topic)
        # The same thing, not only the same verb: its objects are most of the shorter
        # rule's, and a fair part of the longer one's (a list of ten things sharing two
        # with a short rule is another rule).
        objects = (a.topic & b.topic) - a.actions - b.actions
        wider = len(a.topic & b.topic) / max(len(a.topic), len(b.topic))
        return (
            bool(a.actions & b.actions)
            and enough
            and share >= DUPLICATE_SHARE
            and (len(objects) >= DUPLICATE_OBJECTS or share == 1.0)
            and wider >= DUPLICATE_WIDER
        )
    both_rules = a.instruction and b.instruction
    # Said again whole: all of the shorter rule's words ("Take one booking per caller per
    # call" / "Remember: one booking per caller per call").
    whole = shared >= DUPLICATE_SHARED and share == 1.0 and a.orders and b.orders
    if both_rules:
        return whole or (
            shared >= DUPLICATE_SHARED_NO_ACTION and share >= DUPLICATE_SHARE_NO_ACTION
        )
    # A policy stated twice in nearly the same words ("Late patients are moved to another
    # time" / "A patient who is late is moved to another time"): a statement repeated is
    # a rule repeated, when it says nearly all of it again.
    return (
        not (a.instruction or b.instruction)
        and _said(a)
        and _said(b)
        and shared >= STATEMENT_SHARED
        and share >= DUPLICATE_SHARE_NO_ACTION
    )


def _said(unit: Clause) -> bool:
    """A statement made as a sentence, not a title ("Dienstanweisung Kartenservice — ...")."""
    return unit.sentence.text.rstrip().endswith((".", "!", ";", ":"))


def _narrows(firm: Clause, other: Clause) -> bool:
    """A rule for some cases against one for all ("enter the plate if the caller knows it"
    / "you must enter the plate for every order"): the second weakens the first, it does
    not say it again."""
    return firm.strong and not firm.conditional and other.conditional and not other.strong


class _Taken:
    """The places already marked on one axis, looked up by the sentence they start in (a
    check per pair must not scan every earlier mark: long prompts have thousands)."""

    def __init__(self, prompt: Prompt, earlier: list[Finding], axis: str) -> None:
        self._starts = [s.start for s in prompt.sentences]
        self._spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for f in earlier:
            if f.axis == axis:
                self.add((f.start, f.end))

    def _where(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset) - 1

    def add(self, span: tuple[int, int]) -> None:
        self._spans[self._where(span[0])].append(span)

    def free(self, span: tuple[int, int]) -> bool:
        # A mark starts in the span's sentence or the one before (a mark of several
        # sentences reaches at most into the next one in practice).
        where = self._where(span[0])
        near = self._spans.get(where, []) + self._spans.get(where - 1, [])
        return all(span[1] <= a or span[0] >= b for a, b in near)


def contradictions(
    prompt: Prompt, lex: Lexicon, earlier: list[Finding], units: list[Clause] | None = None
) -> list[Finding]:
    """Reworded, weakened and conditional conflicts; numbers; brevity against detail.

    `units`: the prompt's clauses, when already cut (the engine cuts them once)."""
    units = clauses(prompt, lex) if units is None else units
    taken = _Taken(prompt, earlier, "contradiction")
    findings = []
    for first, later in itertools.chain(_candidates(units), _judgement_pairs(units)):
        span = (later.start, later.end)
        if not taken.free(span):
            continue
        kind = _opposed(first, later)
        if kind is None:
            continue
        taken.add(span)
        findings.append(_finding(prompt, first, later, kind, "contradiction"))
    findings.extend(_numbers(prompt, lex, units, taken))
    findings.extend(_brevity(prompt, lex, units, taken))
    findings.extend(_free_and_priced(prompt, lex, units, taken))
    return findings


def _free_and_priced(
    prompt: Prompt, lex: Lexicon, units: list[Clause], taken: _Taken
) -> list[Finding]:
    """A thing said to be free in one rule and given a price in another ("the replacement
    card is always free" / "a replacement card costs £15"); marked on the later one."""
    findings = []
    free: list[Clause] = []
    priced: list[Clause] = []
    for unit in units:
        is_free = lex.free.search(unit.text) is not None
        is_priced = not is_free and _has_price(unit, lex)
        # "Costs nothing" is negated and says free; another negation denies, it prices nothing.
        if not (is_free or is_priced) or (unit.polarity == "neg" and not is_free):
            continue
        span = (unit.start, unit.end)
        others = priced if is_free else free
        match = next((o for o in others if _one_thing_priced(o, unit, lex)), None)
        if match is not None and taken.free(span):
            taken.add(span)
            findings.append(_finding(prompt, match, unit, "free-vs-price", "contradiction"))
        (free if is_free else priced).append(unit)
    return findings


def _has_price(unit: Clause, lex: Lexicon) -> bool:
    if lex.priced.search(unit.text) is None:
        return False
    return any(_money(unit.text[max(0, a - 1) : b + 8]) for _, a, b in numbers_in(unit.text, lex))


def _one_thing_priced(a: Clause, b: Clause, lex: Lexicon) -> bool:
    """Whether two clauses price one thing: a word of what is priced in common (not the
    words of price and money), in two sentences, neither an exception to the other."""
    if a.sentence is b.sentence or a.exception or b.exception:
        return False
    plain = lex.units | {"~money", "~price"} | a.actions | b.actions

    def what(unit: Clause) -> frozenset[str]:
        # What is priced: the topic without the words of price, money and the verbs.
        return frozenset(
            w for w in unit.topic - plain if not (lex.free.fullmatch(w) or lex.priced.fullmatch(w))
        )

    # By stems: "zamjenska kartica" / "zamjena kartice" name one thing.
    what_a, what_b = (frozenset(stem_of(w) for w in what(u)) for u in (a, b))
    shared, share = _share(what_a, what_b)
    return shared >= FREE_SHARED and share >= FREE_SHARE


def duplicates(
    prompt: Prompt, lex: Lexicon, earlier: list[Finding], units: list[Clause] | None = None
) -> list[Finding]:
    """Rules said again in other words: the same action on the same thing."""
    units = clauses(prompt, lex) if units is None else units
    taken = _Taken(prompt, earlier, "redundancy")
    findings = []
    for first, later in _candidates(units):
        span = (later.start, later.end)
        if taken.free(span) and _repeated(first, later):
            taken.add(span)
            findings.append(_finding(prompt, first, later, "paraphrase-rule", "redundancy"))
    return findings


def _number_keys(unit: Clause, lex: Lexicon) -> list[tuple[int, frozenset[str], frozenset[str]]]:
    """Each number of the clause: (value, what it counts, the words around it).

    What it counts is the topic of the two words right after it ("two plans", "three
    reminder texts", "5 working days") or money ("£500", "three hundred pounds"); the
    words around are two either side.
    """
    text = unit.text
    found = []
    for value, start, end in numbers_in(text, lex):
        after = re.split(r"[.,;:!?()]", text[end : end + 40], maxsplit=1)[0].split()
        counted = _counted(after, lex) | _money(text[max(0, start - 1) : end + 8])
        around = _around(text, start, lex)
        found.append((value, frozenset(counted), frozenset(around | counted)))
    minute = frozenset(w for w, minutes in lex.durations.items() if minutes == 1)
    for start, _ in half_hours_in(text, lex):
        found.append((30, minute, _around(text, start, lex) | minute))
    # Spans of time are compared whatever their units ("two weeks" / "30 days"): they
    # share a word to be found by.
    return [
        (value, counted, around | _SPAN if minutes_of(value, counted, lex) is not None else around)
        for value, counted, around in found
    ]


_SPAN = frozenset({"~span"})


def _around(text: str, start: int, lex: Lexicon) -> frozenset[str]:
    """The topic of the two words before a number."""
    return _topic(" ".join(text[max(0, start - 30) : start].split()[-2:]), lex)


def _counted(after: list[str], lex: Lexicon) -> frozenset[str]:
    """What a number counts: the word after it; the next too when that one only measures
    ("5 working days", "radnih dana"); in German the first noun of the two ("zwei freie
    Termine")."""
    if lex.language == "de":
        nouns = [w for w in after[:2] if w[:1].isupper()]
        return _topic(nouns[0], lex) if nouns else frozenset()
    first = _topic(" ".join(after[:1]), lex)
    if first and first <= lex.units:
        return first | _topic(" ".join(after[1:2]), lex)
    return first


def _topic(text: str, lex: Lexicon) -> frozenset[str]:
    return topic_of(text, lex)[0]


def _money(text: str) -> frozenset[str]:
    low = text.lower()
    signs = ("£", "€", "$", "eur", "euro", "pound", "dollar", "kn", "руб", "₽")  # noqa: RUF001
    return frozenset({"~money"}) if any(s in low for s in signs) else frozenset()


def _numbers(prompt: Prompt, lex: Lexicon, units: list[Clause], taken: _Taken) -> list[Finding]:
    """Two clauses giving different numbers for one thing, on one subject."""
    keyed = [(u, _number_keys(u, lex)) for u in units]
    keyed = [(u, keys) for u, keys in keyed if keys]
    # Earlier numbered clauses by the words around their numbers: a clause is compared only
    # with those sharing one (not with every other), so a long prompt stays linear.
    by_word: dict[str, list[int]] = defaultdict(list)
    findings = []
    for j, (b, b_keys) in enumerate(keyed):
        words = {w for _, _, around in b_keys for w in around}
        earlier = sorted({i for w in words for i in by_word[w][:COMMON_WORD]})
        for w in words:
            by_word[w].append(j)
        for i in earlier:
            a, a_keys = keyed[i]
            if a.sentence is b.sentence or not taken.free((b.start, b.end)):
                continue
            if _numbers_conflict(lex, a, a_keys, b, b_keys):
                taken.add((b.start, b.end))
                findings.append(_finding(prompt, a, b, "conflicting-numbers", "contradiction"))
                break
        if len(findings) > 200:
            break  # a prompt of tables; enough said
    return findings


def _numbers_conflict(
    lex: Lexicon,
    a: Clause,
    a_keys: list[tuple[int, frozenset[str], frozenset[str]]],
    b: Clause,
    b_keys: list[tuple[int, frozenset[str], frozenset[str]]],
) -> bool:
    """Two different numbers of one thing. A thing counted ("two plans" / "four plans")
    is one thing when both numbers bound it ("at most", "up to") or the clauses share a
    word besides; a measure ("5 working days", "£50 per person") is of one thing only when
    what it measures is one: NUMBER_CONTEXT topic words in common besides the measure."""
    measures = lex.units | {"~money"}
    for (va, ca, ka), (vb, cb, kb) in itertools.product(a_keys, b_keys):
        span_a, span_b = minutes_of(va, ca, lex), minutes_of(vb, cb, lex)
        if span_a is not None and span_b is not None:
            # One span of time in two units ("24 hours" / "two working days"), or the
            # same span said twice ("one week" / "seven days").
            # The words right by the numbers count here: "ready within 24 hours" / "ready
            # in two working days" are one thing told by the word before each.
            subject = (a.topic & b.topic) - ca - cb - measures
            need = NUMBER_CONTEXT if ca & cb else SPAN_CONTEXT_OTHER_UNITS
            if span_a != span_b and len(subject) >= need:
                return True
            continue
        same = ca & cb
        if va == vb or not same:
            continue
        if same & lex.answer_units and (a.topic & b.topic) - ca - cb - measures:
            return True  # "answers under 2 sentences" / "answers may run to 4 sentences"
        subject = (a.topic & b.topic) - ca - cb - ka - kb - measures
        if same <= measures:
            if len(subject) >= NUMBER_CONTEXT:
                return True
            continue
        if a.actions and b.actions and not a.actions & b.actions:
            continue  # "offer at most two rooms" / "book no more than eight rooms"
        bounded = lex.limits.search(a.text) and lex.limits.search(b.text)
        if bounded or subject:
            return True
    return False


def _brevity(prompt: Prompt, lex: Lexicon, units: list[Clause], taken: _Taken) -> list[Finding]:
    """Brevity against full detail: in one sentence ("be concise and thorough"), or a rule
    that keeps every answer brief ("answer in at most two sentences") against one that asks
    for everything in full ("describe every room type in full")."""
    findings = []
    seen = set()
    brief: Clause | None = None
    for unit in units:
        s = unit.sentence
        if s.index not in seen:
            seen.add(s.index)
            if (
                lex.brevity.search(s.text)
                and _asks_detail(s.text, lex)
                and taken.free((s.start, s.end))
            ):
                taken.add((s.start, s.end))
                findings.append(
                    prompt.finding(
                        "contradiction",
                        s.start,
                        s.end,
                        tier=1,
                        kind="brevity-vs-detail",
                        weight=W_CONTRADICTION,
                        message="asks for brevity and for full detail at once; say which wins when",
                    )
                )
                continue
        if brief is None and _keeps_brief(unit, lex):
            brief = unit
    if brief is None:
        return findings
    for unit in units:
        span = (unit.start, unit.end)
        if (
            unit.sentence is not brief.sentence
            and unit.instruction
            and unit.polarity != "neg"
            and _asks_detail(unit.text, lex)
            and not lex.brevity.search(unit.sentence.text)
            and taken.free(span)
        ):
            taken.add(span)
            findings.append(_finding(prompt, brief, unit, "brevity-vs-detail", "contradiction"))
    return findings


# "without unnecessary detail", "без лишних подробностей": detail declined is brevity.
_DETAIL_DECLINED = re.compile(
    r"(?<!\w)(?:without|no|not|ohne|keine|nicht|bez|ne|без|не|никаких)(?:\s+\w+){0,2}\s*$",
    re.IGNORECASE,
)


def _asks_detail(text: str, lex: Lexicon) -> bool:
    """Whether the text asks for full detail, not only declines it."""
    return any(
        not _DETAIL_DECLINED.search(text[max(0, m.start() - 40) : m.start()])
        for m in lex.detail.finditer(text)
    )


def _keeps_brief(unit: Clause, lex: Lexicon) -> bool:
    """A rule that bounds every answer: brief, short, or at most N sentences or words. A
    condition after the bound does not limit it ("answer briefly, and let them ask on if
    something interests them"); one before it does ("if the caller is in a hurry, ...")."""
    if not unit.instruction or unit.polarity == "neg":
        return False
    brevity = lex.brevity.search(unit.text)
    opener = first_condition(unit.text, lex)
    if opener is not None and (brevity is None or opener.start() < brevity.start()):
        return False
    if brevity:
        return True
    bounded = lex.limits.search(unit.text) is not None
    return bounded and bool(_topic(unit.text, lex) & lex.answer_units)


_MESSAGES = {
    "reworded-directives": "says the opposite of line {line} in other words",
    "conditional-conflict": "forbids without exception what line {line} asks for in some cases",
    "modal-weakening": "makes optional what line {line} requires",
    "conflicting-numbers": "gives another number than line {line} for the same thing",
    "paraphrase-rule": "says again in other words what line {line} says",
    "brevity-vs-detail": "asks for full detail where line {line} keeps every answer brief",
    "free-vs-price": "gives a price for what line {line} says is free, or the other way",
}


def _finding(prompt: Prompt, first: Clause, later: Clause, kind: str, axis: str) -> Finding:
    line, _ = prompt.position(first.start)
    quoted = " ".join(first.text.split())
    quoted = quoted if len(quoted) <= 60 else quoted[:59] + "…"
    return prompt.finding(
        "contradiction" if axis == "contradiction" else "redundancy",
        later.start,
        later.end,
        tier=1,
        kind=kind,
        weight=W_CONTRADICTION if axis == "contradiction" else W_DUPLICATE,
        message=_MESSAGES[kind].format(line=line) + f': "{quoted}"',
    )


def numbers_over_repeats(prompt: Prompt, findings: list[Finding]) -> list[Finding]:
    """A rule said again with another number contradicts, it does not repeat: a redundancy
    finding on a place marked for conflicting numbers is dropped."""
    numbered = _Taken(
        prompt, [f for f in findings if f.kind == "conflicting-numbers"], "contradiction"
    )
    return [f for f in findings if f.axis != "redundancy" or numbered.free((f.start, f.end))]


# Two rules far apart are "related" when their lemmas and synonym groups (persons and
# calls left out) have this many words in common. Two words as written related most rules
# of a long prompt to each other (dev: 62 findings, precision 0.05); by lemma, 41 findings,
# recall 0.10 (three: 21 findings, recall 0.05). The axis stays weak at tier 1 (docs/lint.md).
SCATTER_SHARED = 2


def same_subject(lex: Lexicon) -> Callable[[Rule, Rule], bool]:
    """Whether two rules are about one thing: SCATTER_SHARED topic words in common, by
    lemmas and synonym groups."""

    @functools.lru_cache(maxsize=4096)
    def topic(text: str) -> frozenset[str]:
        return topic_of(text, lex)[0]

    def related(first: Rule, later: Rule) -> bool:
        return len(topic(first.sentence.text) & topic(later.sentence.text)) >= SCATTER_SHARED

    return related
