"""What a rule is about, and which way it points: lemmas, synonym groups, polarity.

Two rules are compared by their topic: content words reduced to their lemma (simplemma,
a dictionary lemmatiser for en/de/hr/ru; without it a crude English suffix strip, said in
the output), then mapped to a synonym group of the language's lexicon, so "ask for",
"request" and "make sure you get" are one action and "customer" and "caller" one person.
A sentence is cut into clauses at ";" and contrast words ("but", "aber", "ali", "но"),
and each clause gets a polarity: a prohibition ("never", "do not"), a weakened rule
("optional", "if possible"), or a plain directive. A negation inside a subordinate clause
("ask for it if they have not given it") is not the rule's polarity.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Literal

from polygon_voice.lint.lexicon import WordLists, _pattern, word_lists
from polygon_voice.lint.numbers import WORD as _WORD
from polygon_voice.lint.text import Prompt, Sentence

Polarity = Literal["pos", "neg", "weak"]
# simplemma's code for Croatian is the Serbo-Croatian dictionary.
_SIMPLEMMA_CODE = {"en": "en", "de": "de", "hr": "hbs", "ru": "ru"}
LEMMATISER_HINT = "pip install simplemma (the rules by lemma then find more, in de/hr/ru most)"
_CODE = re.compile(r"`[^`\n]*`|\{[^}\n]*\}")
_QUOTED_NAME = re.compile(r'"[^"\n]{1,60}"|„[^“”\n]{1,60}[“”]|“[^”\n]{1,60}”|«[^»\n]{1,60}»')
_NOT_A_PROHIBITION = frozenset({"without", "ohne", "bez", "без"})
# "No" before these words bounds or prices a rule, it does not forbid: "at no charge",
# "no more than two", "no later than 6 pm".
_NO_BEFORE = re.compile(
    r"\s+(?:charge|cost|extra|later|earlier|sooner|more|less|fewer|matter)\b", re.IGNORECASE
)


# Case endings of nouns and the nominative they come from, for words the dictionary does
# not list in that form (tried in order; the first base form it knows wins).
_ENDINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "hr": (("ajte", "ati"), ("ite", "iti"), ("aju", "ati"), ("iju", "iti"), ("aj", "ati"),
           ("uje", "ivati"), ("uje", "ovati"), ("uje", "avati"), ("uju", "ivati"),
           ("uju", "ovati"), ("uju", "avati"),
           ("ama", "a"), ("ima", ""), ("om", ""), ("oj", "a"), ("e", "a"), ("i", "iti"), ("i", "a"),
           ("u", "a"), ("a", ""), ("i", ""), ("u", ""), ("e", "")),
    "ru": (("ами", "а"), ("ами", ""), ("ах", "а"), ("ой", "а"), ("ом", ""), ("ы", "а"),  # noqa: RUF001
           ("и", "а"), ("и", "я"), ("у", "а"), ("е", "а"), ("а", ""), ("у", ""), ("е", "")),  # noqa: RUF001
}  # fmt: skip


# Croatian imperatives of "-ati" verbs, when the dictionary lacks them: the infinitive; and
# the present of the "-irati" verbs, a class open to every borrowed verb ("rezervira",
# "registriraju"), whose ending says which verb it is.
_ORDER_ENDINGS = {
    "hr": (("irajte", "irati"), ("iraju", "irati"), ("iraj", "irati"), ("ira", "irati"),
           ("ajte", "ati"), ("aj", "ati")),
}  # fmt: skip


def lemmatiser_available() -> bool:
    return importlib.util.find_spec("simplemma") is not None


@functools.cache
def _lemmatise(language: str) -> Callable[[str], str]:
    if not lemmatiser_available():
        return _stem if language == "en" else str.lower
    lemmatizer = _lemmatizer()
    code = _SIMPLEMMA_CODE[language]
    endings = _ENDINGS.get(language, ())
    known = _known_words()

    @functools.lru_cache(maxsize=65536)
    def lemma(word: str) -> str:
        # As written: German nouns are looked up capitalised.
        if endings and not known(word, code):
            # An inflected form the dictionary lacks ("rezervacije"): the base form it
            # would have, if the dictionary knows that one ("rezervacija").
            low = word.lower()
            for ending, base in endings:
                if low.endswith(ending) and len(low) - len(ending) >= 3:
                    candidate = low[: len(low) - len(ending)] + base
                    if known(candidate, code):
                        return str(lemmatizer.lemmatize(candidate, lang=code)).lower()
            for ending, base in _ORDER_ENDINGS.get(language, ()):
                if low.endswith(ending) and len(low) - len(ending) >= 4:
                    # An order the dictionary lacks ("preusmjeravaj"): its ending says it
                    # is one, and of which infinitive.
                    return low[: len(low) - len(ending)] + base
        return str(lemmatizer.lemmatize(word, lang=code)).lower()

    return lemma


@functools.cache
def _lemmatizer() -> Any:
    """simplemma's lemmatiser, its dictionaries read from tries cached on disk.

    Decoding a language's dictionary takes 1.5-2.5 s (Russian, German), too slow for every
    lint; with marisa-trie and platformdirs installed, simplemma keeps each language's
    dictionary as a trie in the user's cache folder, built once (a few seconds) and then
    opened in milliseconds. Without them, the plain dictionaries are read (same lemmas).
    """
    simplemma: Any = importlib.import_module("simplemma")
    try:
        strategies: Any = importlib.import_module("simplemma.strategies")
        dictionaries: Any = importlib.import_module("simplemma.strategies.dictionaries")
        factory = dictionaries.TrieDictionaryFactory()
    except (ImportError, AttributeError):
        return simplemma
    strategy = strategies.DefaultStrategy(dictionary_factory=factory)
    return simplemma.Lemmatizer(lemmatization_strategy=strategy)


@functools.cache
def _known_words() -> Callable[[str, str], bool]:
    """Whether simplemma's dictionary of a language lists a word form (the same tries)."""
    simplemma: Any = importlib.import_module("simplemma")
    try:
        strategies: Any = importlib.import_module("simplemma.strategies")
        dictionaries: Any = importlib.import_module("simplemma.strategies.dictionaries")
        lookup = strategies.DictionaryLookupStrategy(
            dictionary_factory=dictionaries.TrieDictionaryFactory()
        )
    except (ImportError, AttributeError):
        return lambda word, code: bool(simplemma.is_known(word, lang=code))
    return lambda word, code: lookup.get_lemma(word, code) is not None


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class Lexicon:
    """One language's topic lists, compiled."""

    language: str
    lists: WordLists
    canonical: dict[str, str]  # lemma -> group name
    actions: frozenset[str]  # group names that are directive verbs
    phrases: re.Pattern[str] | None  # multi-word group members, as written
    phrase_group: dict[str, str]
    weak: re.Pattern[str]
    exception: re.Pattern[str]
    # The hard markers and the firm words ("has to", "solely", "ausnahmslos": a duty as
    # firm as a "must") in one pattern.
    firm: re.Pattern[str]
    without: re.Pattern[str]  # an exception to a prohibition only ("never ... without consent")
    every: re.Pattern[str]  # "at every booking": the rule holds in every case
    universal: re.Pattern[str]
    subordinate: re.Pattern[str]
    contrast: re.Pattern[str]
    brevity: re.Pattern[str]
    detail: re.Pattern[str]
    numbers: dict[str, int]
    durations: dict[str, int]  # time units (topic words) in minutes
    working_days: frozenset[str]  # "working", "radni": the day is a working day
    half_hour: re.Pattern[str]
    limits: re.Pattern[str]
    intro: re.Pattern[str]
    generic: frozenset[str]
    stop: frozenset[str]
    restrictive: re.Pattern[str]
    units: frozenset[str]  # topic words that measure (days, per person): not what is counted
    answer_units: frozenset[str]  # what an answer's length is counted in (sentences, words)
    free: re.Pattern[str]  # "free of charge", "gebührenfrei", "besplatno", "бесплатно"
    priced: re.Pattern[str]  # "costs", "berechnet", "naplaćuje se", "стоит"

    def is_imperative(self, word: str) -> bool:
        """Whether a clause's first word gives an order: a listed imperative, or a directive
        verb in the form an order takes (English: the base form, so "books" describes)."""
        if word in self.lists.imperative:
            return True
        base = self.lemma(word)
        if self.canonical.get(base, "") not in self.actions:
            return False
        return self.language != "en" or base == word

    def lemma(self, word: str) -> str:
        return _lemmatise(self.language)(word)


def _durations(
    table: dict[str, int], canonical: dict[str, str], lemma: Callable[[str], str]
) -> dict[str, int]:
    """Time units in minutes, by each topic word a unit may become: its synonym group, or
    its lemma, also as a noun ("Stunde": lower-cased, German "stunde" reads as "stunden")."""
    found: dict[str, int] = {}
    for word, minutes in table.items():
        for form in (word, lemma(word.capitalize()).lower(), lemma(word)):
            found.setdefault(canonical.get(form, form), int(minutes))
    return found


@functools.cache
def lexicon(language: str) -> Lexicon:
    raw = tomllib.loads(resources.files(__package__).joinpath("lexicon.toml").read_text("utf-8"))
    section = raw[f"{language}_topics"]
    lemma = _lemmatise(language)
    canonical: dict[str, str] = {}
    phrase_group: dict[str, str] = {}
    actions = set()
    for kind in ("actions", "synonyms"):
        for group in section[kind]:
            name = "~" + group[0].replace(" ", "_")
            if kind == "actions":
                actions.add(name)
            for member in group:
                if " " in member:
                    phrase_group[member.lower()] = name
                else:
                    canonical.setdefault(lemma(member), name)
                    canonical.setdefault(member.lower(), name)
    lists = word_lists(language)
    phrases = _pattern(sorted(phrase_group)) if phrase_group else None
    stop = {lemma(w) for w in lists.stop} | set(lists.stop)
    return Lexicon(
        language=language,
        lists=lists,
        canonical=canonical,
        actions=frozenset(actions),
        phrases=phrases,
        phrase_group=phrase_group,
        weak=_pattern(section["weak"]),
        exception=_pattern(section["exception"]),
        firm=_pattern([*raw[language]["strong"], *section["firm"]]),
        without=_pattern(section["without"]),
        every=_pattern(section["every"]),
        universal=_pattern(section["universal"]),
        subordinate=_pattern(section["subordinate"]),
        contrast=_pattern(section["contrast"]),
        brevity=_pattern(section["brevity"]),
        detail=_pattern(section["detail"]),
        numbers={k.lower(): int(v) for k, v in section["numbers"].items()},
        durations=_durations(section["durations"], canonical, lemma),
        working_days=frozenset(lemma(w) for w in section["working_days"]),
        half_hour=_pattern(section["half_hour"]),
        limits=_pattern(section["limits"]),
        intro=_pattern(section["intro"]),
        generic=frozenset("~" + g for g in section["generic"]),
        stop=frozenset(stop),
        restrictive=_pattern(section["restrictive"]),
        units=frozenset(canonical.get(lemma(w), lemma(w)) for w in section["units"])
        | frozenset(section["units"]),
        answer_units=frozenset(canonical.get(lemma(w), lemma(w)) for w in section["answer_units"]),
        free=_pattern(section["free"]),
        priced=_pattern(section["priced"]),
    )


@dataclass(frozen=True)
class Clause:
    """A clause of a sentence: its place, topic, actions and polarity."""

    sentence: Sentence
    start: int
    end: int
    text: str
    topic: frozenset[str]
    actions: frozenset[str]
    polarity: Polarity
    strong: bool
    exception: bool
    universal: bool
    instruction: bool
    describes_callers: bool = False
    conditional: bool = False  # a subordinate clause limits it: "if ...", "before ...", "who ..."
    restricted: bool = False  # "only the last four digits": it narrows, it does not widen
    condition: frozenset[str] = frozenset()  # the topic of its subordinate clauses
    orders: bool = False  # the clause itself gives an order (not only its sentence)
    # Its topic words' own lemmas, before synonym groups: "provjeriti" (in the group of
    # "confirm") and the noun "provjera" are akin (lint/conflicts.py).
    forms: frozenset[str] = frozenset()
    # A prohibition whose only exception is a "without" ("never send it without consent").
    only_without: bool = False
    without_what: frozenset[str] = frozenset()  # what it is done without ("consent")
    tools: frozenset[str] = frozenset()  # the tools it names: `book_visit`, cancel_order
    rule_topic: frozenset[str] = frozenset()  # the topic without a reason given after it
    # A tool's signature and what it does ("book_engineer(account_id, slot): books a
    # visit"): a description, no rule.
    describes_tool: bool = False
    # Left to the agent's judgement ("you may accept it if it seems fair"): a permission,
    # so it weakens a prohibition as much as a duty.
    discretion: bool = False
    judged: frozenset[str] = frozenset()  # the topic of that judgement call and its case

    @functools.cached_property
    def rule_stems(self) -> frozenset[str]:
        """The stems of what the rule itself is about, its reason left out."""
        return frozenset(stem_of(w) for w in self.rule_topic)

    @functools.cached_property
    def stems(self) -> frozenset[str]:
        """The topic by word stems (stem_of): for comparing two rules' subjects when one
        says "cancellations" and the other "cancel"."""
        return frozenset(stem_of(w) for w in self.topic)


# A lemma's first letters name its family: "cancellation" / "cancel", "verlängern" /
# "Verlängerung", "rezervacije" / "rezervacijom" (forms the dictionary lacks) share six.
STEM_LENGTH = 6


def stem_of(word: str) -> str:
    """A topic word cut to its stem; synonym groups and quoted names stay whole."""
    if word.startswith(("~", "\u00ab")) or len(word) <= STEM_LENGTH:
        return word
    return word[:STEM_LENGTH]


# English particles a verb of a group phrase may be parted from: "read the number *back*",
# "put the caller *through*", "write it *down*".
_PARTICLES = frozenset({"back", "through", "down", "over", "up", "out", "off", "on", "in"})
# How many words may stand between such a verb and its particle.
_PARTICLE_GAP = 5


@functools.cache
def _parted_phrases(language: str) -> re.Pattern[str] | None:
    """A pattern of the lexicon's two-word group phrases of a verb and a particle, with up
    to _PARTICLE_GAP words between them."""
    verbs: dict[str, set[str]] = {}
    for phrase in lexicon(language).phrase_group:
        words = phrase.split()
        if len(words) == 2 and words[1] in _PARTICLES:
            verbs.setdefault(words[1], set()).add(words[0])
    if not verbs:
        return None
    alternatives = [
        rf"(?P<v{k}>{'|'.join(sorted(map(re.escape, vs)))})(?P<g{k}>(?:\s+(?!{p}\b)[\w'\u2019-]+)"
        rf"{{1,{_PARTICLE_GAP}}}?)\s+(?P<p{k}>{p})"
        for k, (p, vs) in enumerate(sorted(verbs.items()))
    ]
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


def _join_particles(text: str, lex: Lexicon) -> str:
    """English group phrases with their particle put back by the verb: "read the number
    back" -> "read back the number", so that it is the phrase of its group."""
    pattern = _parted_phrases(lex.language)
    if pattern is None:
        return text

    def join(match: re.Match[str]) -> str:
        k = next(i for i in range(len(match.groups())) if match.group(f"v{i}") is not None)
        return f"{match.group(f'v{k}')} {match.group(f'p{k}')}{match.group(f'g{k}')}"

    return pattern.sub(join, text)


def _markers(lex: Lexicon) -> tuple[re.Pattern[str], ...]:
    """The words of polarity, limits and emphasis, which a topic leaves out."""
    return (
        lex.firm,
        lex.weak,
        lex.lists.negative,
        lex.universal,
        lex.limits,
    )


def topic_of(text: str, lex: Lexicon) -> tuple[frozenset[str], frozenset[str]]:
    """(topic, actions): lemmas mapped to their synonym group; actions among them. The
    words of polarity ("must", "optional", "обязан", "nije nužno") say which way a rule
    points, not what it is about: they are left out."""
    plain = _CODE.sub(" ", text)
    found: set[str] = set()
    # A quoted name is one name: the tariff «Домашний плюс» is not the tariff «Домашний».
    for match in _QUOTED_NAME.finditer(plain):
        found.add("\u00ab" + " ".join(_WORD.findall(match.group().lower())) + "\u00bb")
    plain = _QUOTED_NAME.sub(" ", plain)
    for marker in _markers(lex):
        plain = marker.sub(" ", plain)
    if lex.language == "en":
        plain = _join_particles(plain, lex)
    if lex.phrases is not None:
        for match in lex.phrases.finditer(plain):
            found.add(lex.phrase_group[" ".join(match.group().lower().split())])
        plain = lex.phrases.sub(" ", plain)
    found.update(group for group, _ in _content_words(plain, lex))
    found -= lex.generic
    return frozenset(found), frozenset(found & lex.actions)


def _content_words(plain: str, lex: Lexicon) -> list[tuple[str, str]]:
    """(synonym group or lemma, lemma) of each content word of `plain`."""
    if lex.language == "de":
        plain = join_separable(plain)
    found = []
    for word in _WORD.findall(plain):
        low = word.lower()
        if low in lex.stop or len(low) < 3:
            continue
        base = lex.lemma(word)
        if base in lex.stop:
            continue
        group = (
            lex.canonical.get(base)
            or lex.canonical.get(low)
            or _passive_group(base, lex)
            or _homograph_group(low, lex)
        )
        if group is None:
            base = _perfective(base, lex)
            group = lex.canonical.get(base)
        if group is None and lex.language == "de":
            parts = compound_parts(word)
            if parts:
                # "Zählernummer" and "die Nummer des Zählers" name one thing.
                found.extend(_content_words(" ".join(parts), lex))
                continue
        found.append((group or _head_group(base, lex), base))
    return found


# A German compound's parts are this long at least (shorter ones are prefixes and endings:
# "Ver-", "-ung").
_PART = 4
_COMPOUND = 9  # letters of the shortest compound split
_LINKED = 5  # a modifier longer than this may end in a linking "s"
# Parts that are prefixes of words more often than words of a compound ("Übergabe").
_NOT_A_MODIFIER = frozenset(
    {"über", "unter", "hinter", "wider", "gegen", "durch", "nach", "ober", "vorder", "außen",
     "innen", "rück", "miss", "fort", "weiter", "wieder", "zurück", "heraus", "hinaus",
     "zusammen", "dazu", "darum", "davon", "selbst",
     # Parts and degrees say how much of a thing, not which: "Teilkasko", "Gesamtbetrag".
     "teil", "voll", "halb", "ganz", "gesamt", "haupt", "neben", "sonder", "extra"}
)  # fmt: skip


@functools.lru_cache(maxsize=16384)
def compound_parts(word: str) -> tuple[str, ...]:
    """A German compound's two parts, when both are words of the dictionary: "Zählernummer"
    -> ("Zähler", "Nummer"), "Bibliotheksausweis" -> ("Bibliothek", "Ausweis"),
    "Lieferadresse" -> ("liefern", "Adresse"), "Router-Neustart" -> ("Router", "Neustart");
    () for any other word. The longest head wins (the first split from the left)."""
    if "-" in word:
        pieces = tuple(p for p in word.split("-") if len(p) >= 3)
        return pieces if len(pieces) >= 2 else ()
    if len(word) < _COMPOUND or not word[:1].isupper() or not lemmatiser_available():
        return ()
    known = _known_words()
    whole = _noun_lemma(word).lower()
    heads = [
        (k, word[k:].capitalize())
        for k in range(_PART, len(word) - _PART + 1)
        if _is_head(word[k:].capitalize(), whole, known)
    ]
    # A noun first ("Zähler-stand"), a verb's stem only when no noun fits ("Liefer-adresse").
    for verbs in (False, True):
        for k, head in heads:
            modifier = _modifier(word[:k], known, verbs)
            if modifier:
                # A head that is a compound too: "Tierarztrechnung" is Tier, Arzt, Rechnung.
                return (modifier, *(compound_parts(head) or (head,)))
    return ()


def _noun_lemma(word: str) -> str:
    """simplemma's lemma as it gives it: capitalised for a German noun."""
    return str(_lemmatizer().lemmatize(word, lang="de"))


def _is_head(head: str, whole: str, known: Callable[[str, str], bool]) -> bool:
    """A noun the compound ends in, and its lemma too ("Fahrerinnen" is a "Fahrerin", not a
    "Fahre" of "Rinnen": its lemma does not end in "rinne")."""
    if not known(head, "de"):
        return False
    lemma = _noun_lemma(head)
    return lemma[:1].isupper() and (whole.endswith(head.lower()) or whole.endswith(lemma.lower()))


def _modifier(text: str, known: Callable[[str, str], bool], verbs: bool) -> str:
    """The word a compound's first part stands for: a noun as written or without its
    linking "s" ("Sendungs-"); with `verbs`, a verb's stem ("Liefer-" of "liefern",
    "Zustell-" of "zustellen")."""
    low = text.lower()
    if low in _NOT_A_MODIFIER:
        return ""
    if verbs:
        forms = [low + "n", low + "en"]
    else:
        # A linking "s" after a word of five letters or more: "Geburts-", "Sendungs-"
        # ("Preis-" and "Haus-" keep theirs).
        linked = text[:-1] if low.endswith("s") and len(text) > _LINKED else ""
        forms = [f for f in (linked, text) if f and _noun_lemma(f)[:1].isupper()]
    for form in forms:
        plain = len(form) >= _PART and form.lower() not in _NOT_A_MODIFIER
        # A verb's stem is no noun's ("liefern", not "Liefer").
        if plain and known(form, "de") and not (verbs and _noun_lemma(form)[:1].isupper()):
            return form
    return ""


# The particles a German verb leaves at the end of its clause ("Nehmen Sie die Nummer
# auf", "Lesen Sie die Bedingungen vor"): the verb is the particle and the verb together.
_SEPARABLE = frozenset(
    {"an", "auf", "aus", "ab", "bei", "ein", "mit", "nach", "vor", "zu", "zurück", "weiter",
     "heraus", "hin", "her", "fest", "durch", "um", "weg", "los", "dar", "fort", "hinzu",
     "vorbei", "zusammen", "wieder", "bereit", "frei", "statt", "teil", "entgegen"}
)  # fmt: skip
_PIECE = re.compile(r"[^.;:!?()\n\u2013\u2014]+")
# Where a clause may end inside a piece: a comma, or an "und" / "oder" joining two verbs.
_CHUNK_END = re.compile(r",|\s(?:und|oder|sowie)\s")
_TOKEN = re.compile(r"[^\W\d_]+")
# How many words before its particle a separable verb is looked for.
_SEPARABLE_REACH = 12


def join_separable(text: str) -> str:
    """German clauses with their separable verbs joined: "Nehmen Sie Namen und Nummer auf"
    -> "aufnehmen Sie Namen und Nummer", "Sagen Sie nichts zu" -> "zusagen Sie nichts";
    a particle ending a clause joins the nearest verb before it that the dictionary knows
    with it."""
    if not lemmatiser_available():
        return text
    return _PIECE.sub(lambda m: _join_in(m.group()), text)


def _join_in(piece: str) -> str:
    tokens = list(_TOKEN.finditer(piece))
    ends = {m.start() for m in _CHUNK_END.finditer(piece)} | {len(piece)}
    edits: list[tuple[int, int, str]] = []
    used: set[int] = set()
    for i, token in enumerate(tokens):
        if i == 0 or token.group().lower() not in _SEPARABLE:
            continue
        # The particle ends its clause: only spaces before the next comma, "und" or end.
        clause_end = min(e for e in ends if e >= token.end())
        if piece[token.end() : clause_end].strip():
            continue
        verb = _separable_verb(tokens, i, used)
        if verb is not None:
            k, joined = verb
            used.add(k)
            edits += [
                (tokens[k].start(), tokens[k].end(), joined),
                (token.start(), token.end(), ""),
            ]
    for a, b, replacement in sorted(edits, reverse=True):
        piece = piece[:a] + replacement + piece[b:]
    return piece


def _separable_verb(tokens: list[re.Match[str]], at: int, used: set[int]) -> tuple[int, str] | None:
    """The nearest word before the particle `tokens[at]` that joins it into a verb the
    dictionary knows ("nimmst" + "zurück" -> "zurücknehmen"), with that verb."""
    particle = tokens[at].group().lower()
    known = _known_words()
    lemma = _lemmatise("de")
    for k in range(at - 1, max(-1, at - 1 - _SEPARABLE_REACH), -1):
        word = tokens[k].group()
        if k in used or (k > 0 and not word.islower()) or word.lower() in _SEPARABLE:
            continue
        for base in (word.lower(), lemma(word.lower())):
            verb = particle + base
            if base.endswith(("en", "ern", "eln")) and known(verb, "de"):
                return k, verb
    return None


# Imperfective verbs made from a perfective by a suffix, and the perfective's ending: ru
# "вызывать" / "вызвать", "записывать" / "записать"; hr "zapisivati" / "zapisati",
# "davati" / "dati". One action in two aspects is one topic word.
_IMPERFECTIVE = {
    "ru": (("ывать", "ать"), ("ывать", "вать"), ("ивать", "ать"), ("ивать", "вать")),
    "hr": (("ivati", "ati"), ("avati", "ati")),
}


def _perfective(base: str, lex: Lexicon) -> str:
    """The perfective of an imperfective lemma, when the dictionary knows it; else `base`."""
    code = _SIMPLEMMA_CODE[lex.language]
    for ending, perfective in _IMPERFECTIVE.get(lex.language, ()):
        if base.endswith(ending) and len(base) - len(ending) >= 3 and lemmatiser_available():
            candidate = base[: -len(ending)] + perfective
            if _known_words()(candidate, code):
                return candidate
    return base


def _homograph_group(word: str, lex: Lexicon) -> str | None:
    """The directive group of a Croatian imperative the dictionary reads as a noun:
    "provjeri" (check!) is read as "provjera", the verb "provjeriti" is in the group of
    "confirm"."""
    if lex.language != "hr" or not word.endswith(("i", "ite")) or not lemmatiser_available():
        return None
    verb = _homograph_verb(word)
    group = lex.canonical.get(verb)
    return group if group in lex.actions and _known_words()(verb, "hbs") else None


def _homograph_verb(word: str) -> str:
    """The "-iti" infinitive a Croatian imperative comes from: "provjeri(te)" ->
    "provjeriti"."""
    return word.removesuffix("te")[:-1] + "iti"


def _passive_group(base: str, lex: Lexicon) -> str | None:
    """The group of a Russian passive by its active verb: "не сообщаются" (are not told)
    is "сообщать", "назначаться" is "назначать"."""
    if lex.language == "ru" and base.endswith(("ться", "тись")):
        return lex.canonical.get(base[:-2])
    return None


def forms_of(text: str, lex: Lexicon) -> frozenset[str]:
    """The lemmas of the topic words of `text`, before synonym groups (persons and calls
    left out, as from the topic)."""
    plain = _QUOTED_NAME.sub(" ", _CODE.sub(" ", text))
    for marker in _markers(lex):
        plain = marker.sub(" ", plain)
    return frozenset(base for group, base in _content_words(plain, lex) if group not in lex.generic)


# The shortest head of a German compound looked up (shorter tails are mostly endings:
# "-ung"); its modifier is one letter shorter at least.
_HEAD = 4


def _head_group(word: str, lex: Lexicon) -> str:
    """A German compound's synonym group by its head, the last part ("Umbuchungsgebühr"
    is a "Gebühr", a price); the word itself when its head has no group."""
    if lex.language != "de":
        return word
    for k in range(_HEAD - 1, len(word) - _HEAD + 1):
        group = lex.canonical.get(word[k:])
        if group is not None and group not in lex.actions:
            return group
    return word


def _main_clause_negative(text: str, lex: Lexicon) -> bool:
    """A negation that belongs to the rule, not to a subordinate clause before it."""
    for match in lex.lists.negative.finditer(text):
        if match.group().lower() in _NOT_A_PROHIBITION:
            continue  # "never ... without an adult": a condition, not the rule's polarity
        if match.group().lower() == "no" and _NO_BEFORE.match(text, match.end()):
            continue
        if lex.limits.match(text, match.start()):
            continue  # "не больше двух", "not more than two": a bound, not a prohibition
        if _reported(text[: match.start()], lex):
            continue  # "tell members that cancellations cannot be done": what to say
        if _negates_a_manner(text, match, lex):
            continue  # "block it at once, without asking (не спрашивая)": how, not whether
        if _asks_whether(text, match, lex):
            continue  # "уточни, не было ли аллергии": a question, not a prohibition
        before = text[: match.start()]
        opener = None
        for sub in lex.subordinate.finditer(before):
            if sub.group().lower() not in _ARTICLES:
                opener = sub
        # "if they have not given it": the opener's clause runs until a comma.
        if opener is not None and "," not in before[opener.end() :]:
            continue
        return True
    return False


# Particles that make a negated verb an indirect question: ru "не было ли", hr "nije li".
_QUESTION_PARTICLE = {"ru": re.compile(r"\s+\w+\s+ли\b"), "hr": re.compile(r"\s*li\b")}


def _asks_whether(text: str, negation: re.Match[str], lex: Lexicon) -> bool:
    """Whether a negation opens an indirect question ("уточни, не было ли аллергии", "pitaj
    nije li već platio"): it asks, it forbids nothing."""
    particle = _QUESTION_PARTICLE.get(lex.language)
    return particle is not None and particle.match(text, negation.end()) is not None


# Endings of an adverbial participle (ru "спрашивая", "уточнив"; hr "pitajući"; en "asking"),
# and the finite forms that end alike (ru past tense "спрашивала").
_PARTICIPLE_ENDINGS = {
    "en": ("ing",),
    "ru": ("я", "а", "в", "вши", "вшись", "ясь"),  # noqa: RUF001
    "hr": ("ući", "vši"),
}
_FINITE_ENDINGS = {"ru": ("ла", "ть", "ться")}
_NEXT_WORD = re.compile(r"\s+([^\W\d_]+)")


def _negates_a_manner(text: str, negation: re.Match[str], lex: Lexicon) -> bool:
    """Whether a negation opens a participle phrase set off by a comma ("..., не спрашивая
    кодовое слово", "..., ne pitajući"): it says how the rule is done, the rule itself is not
    negated."""
    if not text[: negation.start()].rstrip().endswith(","):
        return False
    endings = _PARTICIPLE_ENDINGS.get(lex.language)
    word = _NEXT_WORD.match(text, negation.end())
    if endings is None or word is None:
        return False
    form = word.group(1).lower()
    if not form.endswith(endings) or form.endswith(_FINITE_ENDINGS.get(lex.language, ())):
        return False
    base = lex.lemma(form)
    return base != form and base.endswith(_INFINITIVE.get(lex.language, ("",)))


# German relative pronouns are also its articles: not taken as openers here.
_ARTICLES = frozenset({"der", "die", "das"})


def _condition_topic(text: str, lex: Lexicon) -> frozenset[str]:
    """The topic of the clause's subordinate parts ("before giving a quote")."""
    main = set(_WORD.findall(_main_clause(text, lex)))
    rest = " ".join(w for w in _WORD.findall(text) if w not in main)
    return topic_of(rest, lex)[0] if rest else frozenset()


def _main_clause(text: str, lex: Lexicon) -> str:
    """`text` without its subordinate clauses, each taken to run from its opener ("if",
    "who", "wenn", "ako", "если") to the next comma."""
    kept = []
    at = german_verb_first_condition(text, lex)
    for match in lex.subordinate.finditer(text):
        if match.start() < at or match.group().lower() in _ARTICLES:
            continue
        kept.append(text[at : match.start()])
        at = _subordinate_end(text, match.end(), lex)
    kept.append(text[at:])
    return " ".join(kept)


# After a German verb put first, these make it an order or a question to the agent
# ("Nennen Sie", "Frag du"), not a condition.
_GERMAN_ADDRESS = frozenset({"sie", "du", "dich", "dir", "ihr", "euch"})
# Words first in a German sentence that read as verbs but open no condition ("Bitte ...").
_NOT_A_CONDITION_VERB = frozenset({"bitte", "danke"})


def german_verb_first_condition(text: str, lex: Lexicon) -> int:
    """Where a German condition said with its verb first ends ("*Wünscht der Empfänger
    einen Ablageort,* setzen Sie ihn", "*Meldet eine Kundin den Verlust,* sperren Sie"):
    the offset after its comma, or 0. A verb first and then "Sie" or "du" is an order."""
    if lex.language != "de":
        return 0
    words = _WORD.findall(text[:40])
    comma = text.find(",")
    if len(words) < 2 or comma < 0 or words[1].lower() in _GERMAN_ADDRESS:
        return 0
    first = words[0]
    if not first[:1].isupper() or first.lower() in _NOT_A_CONDITION_VERB:
        return 0
    if _du_imperative(first, lex):
        return 0  # "Antworte knapp, ...": an order in the Du-Form
    base = _noun_lemma(first) if lemmatiser_available() else first
    finite = first.lower().endswith(("t", "te", "ten", "en")) and base[:1].islower()
    return comma + 1 if finite and base.endswith(("en", "ern", "eln")) else 0


def _subordinate_end(text: str, start: int, lex: Lexicon) -> int:
    """Where a subordinate clause opened before `start` ends: at the next comma; in Croatian
    and Russian also before the main clause's imperative, when the comma was left out
    ("Korisnicima koji prijete raskidom ponudi popust": the relative clause ends at
    "ponudi", whose ending is an order's, not a relative clause's)."""
    comma = text.find(",", start)
    end = len(text) if comma < 0 else comma
    endings = _IMPERATIVE_ENDINGS.get(lex.language)
    if endings is None:
        return end
    for word in _WORD.finditer(text, start, end):
        if _imperative_form(word.group().lower(), endings, lex):
            return word.start()
    return end


# The group of "tell" in each language (the second action group of lexicon.toml), and
# the word that opens what is told: a negation after both is said, not forbidden.
_TELL_GROUPS = frozenset({"~tell", "~sagen", "~reći", "~сказать"})
_THAT = re.compile(r"(?<!\w)(?:that|dass|da|что)(?!\w)", re.IGNORECASE)


def _reported(before: str, lex: Lexicon) -> bool:
    """Whether `before` (a clause up to a negation) is an order to tell something that ...:
    "Tell the caller that ...", "Sagen Sie, dass ...", "Recite da ...", "Скажите, что ..."."""
    thats = list(_THAT.finditer(before))
    if not thats:
        return False
    that = thats[-1]
    _, actions = topic_of(before[: that.start()], lex)
    return bool(actions & _TELL_GROUPS) and _gives_order(before[: that.start()], lex)


def _cuts(sentence: Sentence, lex: Lexicon) -> list[tuple[int, int]]:
    """Offsets (in the sentence) of its clauses: cut at ";" and at contrast words."""
    text = sentence.text
    points = [0]
    for match in re.finditer(r";\s*|\s+[-\u2013\u2014]\s+", text):
        points.append(match.end())
    for match in re.finditer(r":\s+", text):
        # "Messages are switched off for privacy: send no messages to patients": the
        # reason before the colon is not the rule's subject. A list after one stays.
        rest = text[match.end() :].split(";", 1)[0]
        if lex.lists.strong.match(rest) or _gives_order(rest, lex):
            points.append(match.end())
    for match in _RULE_JOINT.finditer(text):
        # "you must X, must Y, must not Z": each hard marker after a comma (or an "and")
        # opens a rule of its own, with its own polarity; "..., only if" stays a condition.
        rest = text[match.end() :]
        # "If the caller asks, tell them ...": the order after a leading condition is
        # that condition's rule, not a rule of its own.
        here = max(p for p in points if p <= match.start())
        opener = lex.subordinate.match(text[here:].lstrip())
        after_condition = opener is not None and opener.group().lower() not in _ARTICLES
        # "Search cars, and book with `create_rental`" is two orders; "Callers book cars,
        # change bookings and ask about ..." one subject's list of verbs.
        opens_rule = not after_condition and (
            lex.lists.strong.match(rest) is not None
            or (
                lex.language == "en"
                and match.group().startswith(",")
                and _opens_order(rest, lex)
                and _gives_order(text[here : match.start()], lex)
            )
        )
        if opens_rule and not (lex.weak.match(rest) or lex.exception.match(rest)):
            points.append(match.end())
    for match in lex.contrast.finditer(text):
        # A contrast word opens a clause only after a comma, or mid-sentence for "but".
        head = text[: match.start()].rstrip()
        if head and (head.endswith(",") or match.group().lower() in {"but", "aber", "ali", "но"}):
            points.append(match.start())
    points = sorted(set(points))
    pieces = []
    for a, b in zip(points, [*points[1:], len(text)], strict=True):
        chunk = text[a:b]
        stripped = chunk.strip(" ,;")
        if len(_WORD.findall(stripped)) < 2:
            continue
        offset = a + chunk.index(stripped)
        pieces.append((offset, offset + len(stripped)))
    return pieces or [(0, len(text))]


# Where one rule of a sentence may end and the next begin: a comma, or a coordinating
# "and" (en, de, hr, ru), before the next rule's first word.
_RULE_JOINT = re.compile(r"(?:,\s+(?:(?:and|und|i|te|и)\s+)?|\s+(?:and|und|i|te|и)\s+)")


def _opens_order(rest: str, lex: Lexicon) -> bool:
    """Whether `rest` starts with an English order: "..., and give the caller the number"."""
    words = _WORD.findall(rest[:40])
    return bool(words) and lex.is_imperative(words[0].lower())


# Words that give a reason, not a case: "keep it short, because callers drive" holds always.
_CAUSAL = frozenset({"because", "since", "weil", "da", "jer", "потому", "так как"})
# Imperative endings where the dictionary form says nothing of the mood: Croatian
# "pročitaj", "recite", "odgovarajte"; Russian "отвечайте", "зачитай", "перечислите".
_IMPERATIVE_ENDINGS = {
    "hr": ("ajte", "ijte", "ite", "aj", "ij", "i"),
    "ru": ("йте", "ите", "ьте", "ай", "яй", "уй", "и", "ь", "ись"),
}
# Finite forms that end like an imperative: Russian past plural "сказали", "починили"
# (a vowel before "-ли"; "перечисли" is an order), second person "скажешь" (their lemma is
# an infinitive too).
_NOT_IMPERATIVE_ENDINGS = {"ru": ("али", "яли", "ели", "или", "ыли", "оли", "ули", "шь")}


_REASON = re.compile(
    r"(?<!\w)(?:because|since|as|weil|denn|da|jer|jerbo|потому|так как|ибо)(?!\w)", re.IGNORECASE
)


# A reason given after a rule: its words say why, not what the rule is about.
_GIVEN_REASON = re.compile(
    r"(?<!\w)(?:because|weil|denn|jer|jerbo|потому что|так как|ибо|поскольку)(?!\w)",
    re.IGNORECASE,
)
# A reason or a purpose after a comma: what it says does not set the rule's polarity ("...,
# so the customer does not have to wait"; "..., damit niemand warten muss"; "..., da ne
# mora čekati"; "..., чтобы клиенту не пришлось ждать").
_AFTER_THE_RULE = {
    lang: re.compile(rf",\s*(?:{words})(?!\w)", re.IGNORECASE)
    for lang, words in {
        "en": "because|since|so that|so",
        "de": "weil|denn|da|damit|sodass|so dass",
        "hr": "jer|kako bi|da bi|tako da",
        "ru": "потому что|так как|поскольку|чтобы|ибо",
    }.items()
}


def _polarity_part(text: str, lex: Lexicon) -> str:
    """The clause up to a reason or purpose set off by a comma."""
    found = _AFTER_THE_RULE[lex.language].search(text)
    return text[: found.start()] if found else text


# A colon after a whole rule, before an explanation: "Prices are not given by phone: the
# dentist sets them after an examination". (A colon before a list of what the rule is
# about, "ask for: name, date", has no rule before it.)
_EXPLAINING_COLON = re.compile(r":\s+(?=\S)")


def _rule_part(text: str, lex: Lexicon) -> str:
    """The clause without the reason or explanation given after its rule: up to a
    "because", or up to a colon that follows a rule complete in itself (a polarity of its
    own and a thing besides its verb)."""
    reason = _GIVEN_REASON.search(text)
    if reason:
        text = text[: reason.start()]
    colon = _EXPLAINING_COLON.search(text)
    if colon is None:
        return text
    head = text[: colon.start()]
    topic, actions = topic_of(head, lex)
    marked = lex.lists.negative.search(head) or lex.lists.strong.search(head)
    if marked and len(topic) >= 2 and topic - actions:
        return head
    return text


def _clause_orders(text: str, polarity: Polarity, lex: Lexicon) -> bool:
    """Whether the clause itself gives an order: a hard marker, a prohibition or a
    weakening, or an imperative (not only the sentence around it)."""
    strong = lex.lists.strong.search(text) is not None
    return strong or polarity != "pos" or _gives_order(text, lex)


def ordering_spans(units: list[Clause], lex: Lexicon) -> list[tuple[int, int]]:
    """The places (start, end) that give orders: each instruction clause up to its reason,
    if it gives one ("keep the call short; callers are often driving" orders only the
    first part)."""
    spans = []
    for unit in units:
        # The clause itself, not the sentence it is in, must give the order.
        if unit.orders:
            reason = _REASON.search(unit.text)
            end = unit.start + reason.start() if reason else unit.end
            spans.append((unit.start, end))
    return spans


def _gives_order(text: str, lex: Lexicon) -> bool:
    """Whether the clause's main part opens with an order: after a leading condition
    ("When a guest asks, describe ..."), an imperative verb; in German the verb before
    "Sie" ("Antworten Sie"); in Croatian and Russian an imperative ending."""
    words = _WORD.findall(_main_clause(text, lex))
    if not words:
        return False
    first = words[0].lower()
    if lex.is_imperative(first):
        return True
    if lex.language == "de":
        if _du_imperative(words[0], lex):
            return True
        return _german_address(words, lex)
    # Anywhere in the main clause: "полностью зачитайте", "detaljno mu opiši", "какие
    # нужны документы, подробно перечислите" (prompts speak to the agent in the imperative).
    endings = _IMPERATIVE_ENDINGS.get(lex.language, ())
    return bool(endings) and any(_imperative_form(w.lower(), endings, lex) for w in words)


# How far into a German main clause its verb may stand before "Sie" or "du": after a
# phrase put first ("Auf Nachfrage nennen Sie", "Für das Gespräch berechnest du").
_GERMAN_VERB_WITHIN = 5
# After an order's verb in the Du-Form: "Fass dich kurz", "Halte deine Antworten kurz".
_GERMAN_REFLEXIVE = frozenset({"dich", "dir", "dein", "deine", "deinen", "deinem", "deiner"})


def _german_address(words: list[str], lex: Lexicon) -> bool:
    """A German order by its verb and the agent addressed: "Antworten Sie", "Auf Nachfrage
    nennen Sie", "berechnest du", "erzählst Du", "Fass dich kurz"."""
    if len(words) > 1 and words[1].lower() in _GERMAN_REFLEXIVE:
        return words[0].lower() not in lex.stop  # "Fass dich kurz", "Halte deine Antworten"
    for k in range(1, min(len(words), _GERMAN_VERB_WITHIN + 1)):
        verb = words[k - 1]
        if (not verb.islower() and k > 1) or verb.lower() in lex.stop:
            continue  # a noun, or an article or a pronoun before the subject
        if words[k] == "Sie" and verb.lower().endswith("en"):
            return True
        if words[k].lower() == "du" and verb.lower().endswith("st"):
            return True
    return False


# German imperatives of the Du-Form that are not the infinitive's stem ("lesen" / "lies").
_DU_IRREGULAR = frozenset({"lies", "gib", "nimm", "sprich", "hilf", "sieh", "vergiss"})


def _du_imperative(word: str, lex: Lexicon) -> bool:
    """A German order in the Du-Form ("Frag nach ...", "Lies ... vor", "Nenne ..."): the
    verb's stem, with or without an "e". Read as written, so that a capitalised noun
    ("Sperre", "Reise") keeps its noun's lemma and is no order."""
    low = word.lower()
    if low in _DU_IRREGULAR:
        return True
    base = lex.lemma(word)
    if word[:1].isupper() and base != low and not base.endswith(("en", "ern", "eln")):
        # Read as the noun of another form ("Halte" as "Halt"): the word is no form of
        # that noun, so it is the verb's ("halten").
        base = lex.lemma(low)
    if base == low or not base.endswith(("en", "ern", "eln")):
        return False
    stem = base[:-2] if base.endswith("en") else base[:-1]
    return low.removesuffix("e") in {stem, stem.removesuffix("e")}


def _imperative_form(word: str, endings: tuple[str, ...], lex: Lexicon) -> bool:
    """A verb's form with an imperative ending: its lemma is an infinitive ("uređaj",
    "случай" end so too, and are nouns)."""
    if len(word) <= 3 or not word.endswith(endings):
        return False
    if word.endswith(_NOT_IMPERATIVE_ENDINGS.get(lex.language, ())):
        return False
    base = lex.lemma(word)
    if base.endswith(_INFINITIVE[lex.language]) and base != word:
        return True
    return _directive_homograph(word, base, lex)


def _directive_homograph(word: str, base: str, lex: Lexicon) -> bool:
    """A Croatian imperative the dictionary reads as a noun ("ponudi": the dative of
    "ponuda", and "offer!"): an order when its lemma is one of the directive verbs' group
    and the verb of its stem exists ("ponuditi")."""
    if lex.language != "hr" or not lemmatiser_available():
        return False  # no dictionary to ask whether the verb exists
    if lex.canonical.get(base, "") in lex.actions:
        return _known_words()(_homograph_verb(word), "hbs")
    # "provjeri": the noun "provjera" is no directive, its verb "provjeriti" is.
    return _homograph_group(word, lex) is not None


_INFINITIVE = {"hr": ("ti", "ći"), "ru": ("ть", "ться", "ти", "чь")}


# A case left to the agent's judgement: "if it seems fair", "as you see fit"; de "falls Ihnen
# das angemessen erscheint", "nach eigenem Ermessen"; hr "ako ti se to čini u redu", "po
# vlastitoj procjeni"; ru "когда сочтёте это уместным", "если ему покажется". Whatever the
# adjective, the rule is then the agent's to keep or drop: a weakening.
_DISCRETION: dict[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:if|when|where|as|whenever)\s+(?:it|this|that)\s+(?:seems|appears|feels)\b",
        r"\b(?:if|when|where|as)\s+(?:you|the\s+agent|they)\s+(?:think|feel|consider|deem"
        r"|judge|see\s+fit)",
        r"\bat\s+(?:your|its|the\s+agent's)\s+(?:own\s+)?discretion\b",
        r"\buse\s+your\s+(?:own\s+)?(?:discretion|judge?ment)\b",
    ),
    "de": (
        r"\b(?:wenn|falls|sofern|soweit)\b[^,.;:]{0,50}\b(?:erscheint|erscheinen|vorkommt)\b",
        r"\b(?:wenn|falls|sofern)\b[^,.;:]{0,40}\bfür\s+\w+\s+(?:hält|hältst|halten)\b",
        r"\bnach\s+(?:eigenem|ihrem|deinem|freiem|seinem)\s+ermessen\b",
        r"\bim\s+ermessen\b",
    ),
    "hr": (
        r"\b(?:ako|kad|kada|ukoliko)\s+(?:ti|mu|joj|vam|im)\s+se\b[^,.;:]{0,40}\bči(?:ni|ne)\b",
        r"\b(?:ako|kad|kada|ukoliko)\s+(?:smatraš|smatrate|smatra|procijeniš|procijenite"
        r"|procijeni|misliš|mislite|ocijeniš|ocijenite)\b",
        r"\bpo\s+(?:vlastitoj|svojoj|tvojoj|vašoj)\s+procjeni\b",
        r"\bpo\s+(?:svom|svojem|vlastitom)\s+nahođenju\b",
    ),
    "ru": (
        r"\b(?:если|когда|коли)\b[^,.;:]{0,40}\b(?:покаж\w+|сочт[её](?:те|шь|т)"
        r"|посчита(?:ете|ешь|ет))\b",
        r"\bпо\s+(?:своему|вашему|твоему|его)\s+усмотрению\b",  # noqa: RUF001
        r"\bна\s+(?:своё|свое|ваше|твоё|твое|его)\s+усмотрение\b",  # noqa: RUF001
    ),
}
_DISCRETION_RE = {
    lang: re.compile("|".join(parts), re.IGNORECASE) for lang, parts in _DISCRETION.items()
}


# A permission to leave a step out, or to do it in some case only: "you can also skip the
# check", "kannst du auch weglassen", "možeš i preskočiti", "можете и пропустить"; "the
# form can be sent later if ...", "kann mitgebracht werden, falls ...". Whatever stands
# between the modal and the verb, the step is then optional: a weakening.
_PERMITTED: dict[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:may|can)\b[^,.;:]{0,40}\b(?:skip|omit|leave\s+out|drop)\b",
        r"\b(?:can|may)\s+be\s+\w+\b[^.;:]{0,30}\b(?:if|when)\b",
        r"\bnice\s+to\s+do\b",
    ),
    "de": (
        r"\b(?:kannst|können|kann|darfst|dürfen|darf)\b[^,.;:]{0,50}\b(?:weglassen|überspringen"
        r"|auslassen|entfallen)\b",
        r"\b(?:kann|können|darf|dürfen)\b[^,.;:]{0,40}\bwerden,\s*(?:falls|wenn|sofern)\b",
    ),
    "hr": (
        r"\b(?:možeš|možete|može|smiješ|smijete|smije)\b[^,.;:]{0,40}\b(?:preskočiti|izostaviti"
        r"|ispustiti)\b",
        r"\bmože\s+se\b[^,.;:]{0,30},?\s*(?:ako|ukoliko)\b",
    ),
    "ru": (r"\b(?:можешь|можете|можно|вправе)\b[^,.;:]{0,40}\b(?:пропустить|опустить)\b",),
}
_PERMITTED_RE = {
    lang: re.compile("|".join(parts), re.IGNORECASE) for lang, parts in _PERMITTED.items()
}


def permits_leaving_out(text: str, lex: Lexicon) -> bool:
    """Whether the clause lets the agent leave its step out, or do it in some case only."""
    return _PERMITTED_RE[lex.language].search(text) is not None


def leaves_to_judgement(text: str, lex: Lexicon) -> bool:
    """Whether the clause leaves its rule to the agent's judgement ("if it seems fair")."""
    return _DISCRETION_RE[lex.language].search(text) is not None


def judgement_topic(text: str, lex: Lexicon) -> frozenset[str]:
    """The topic of a clause's judgement call and what follows it ("..., if it seems to
    you that the caller is in trouble"): the case, not what is loosened."""
    found = _DISCRETION_RE[lex.language].search(text)
    return topic_of(text[found.start() :], lex)[0] if found else frozenset()


# A tool's name: code in backticks, or a snake_case name ("otkazi_rezervaciju").
_TOOL_NAME = re.compile(r"`([^`\n]{1,80})`|(?<![\w`])([^\W\d_]\w*_\w+)")


# A tool's signature opening its line, then what it does: "book_engineer(slot): books a
# visit", "`umleiten(nummer, ziel)` leitet ... um" (code first, then the verb).
_TOOL_SIGNATURE = re.compile(
    r"[\s\-*•]*(?:`[^\W\d]\w*\([^()\n`]{0,120}\)`\s+(?=[^\W\d])"
    r"|`?[^\W\d]\w*\([^()\n]{0,120}\)`?\s*[:\u2013\u2014-])"
)


def tools_named(text: str) -> frozenset[str]:
    """The tools a clause names, each by its name before any arguments."""
    names = set()
    for match in _TOOL_NAME.finditer(text):
        name = (match.group(1) or match.group(2)).split("(")[0].strip().lower()
        if name:
            names.add(name)
    return frozenset(names)


def first_condition(text: str, lex: Lexicon) -> re.Match[str] | None:
    """The first word opening a subordinate clause that limits the rule ("if", "before",
    "who"), not a reason's ("because") or an article that looks like one ("die")."""
    for match in lex.subordinate.finditer(text):
        if match.group().lower() not in _CAUSAL | _ARTICLES:
            return match
    return None


def _without_what(text: str, match: re.Match[str] | None, lex: Lexicon) -> frozenset[str]:
    """The first topic word after a prohibition's "without": what it is not done without
    ("without an adult ticket", "ohne Unterschrift des Empfängers")."""
    if match is None:
        return frozenset()
    for word in text[match.end() :].split()[:4]:
        found = topic_of(word, lex)[0]
        if found:
            return found
    return frozenset()


# Pronouns that stand for a thing named before ("say *them*", "nimm *sie* zurück", "naruči
# *je*", "блокируй *её*").
_BACK_POINTERS = {
    "en": frozenset({"it", "them", "this", "these", "those", "one"}),
    "de": frozenset({"es", "sie", "ihn", "ihm", "ihnen", "diese", "dies", "dieses", "solche"}),
    "hr": frozenset({"ga", "je", "ih", "ju", "njega", "nju", "njih", "to", "tome", "toga"}),
    "ru": frozenset({"его", "её", "ее", "их", "это", "этого", "этом", "него", "неё", "них"}),  # noqa: RUF001
}
# A clause that points back names this many things of its own at most.
_POINTER_THINGS = 1


def _only_firms(text: str, topic: frozenset[str], polarity: Polarity, lex: Lexicon) -> bool:
    """A clause that says only that something is a duty ("das ist Pflicht", "to je
    obavezno", "это обязательно"): a hard marker and at most one word of its own."""
    if polarity != "pos" or len(topic) > _POINTER_THINGS:
        return False
    return lex.firm.search(text) is not None


def _points_back(text: str, things: frozenset[str], lex: Lexicon) -> bool:
    """Whether a clause names (almost) nothing itself and points back to what the clause
    before it names, by a pronoun."""
    if len(things) > _POINTER_THINGS:
        return False
    pronouns = _BACK_POINTERS.get(lex.language, frozenset())
    # German "Sie" addresses the agent; only the lower-case "sie" is a thing.
    words = {w if lex.language == "de" else w.lower() for w in _WORD.findall(text)}
    return bool(words & pronouns)


def clauses(prompt: Prompt, lex: Lexicon) -> list[Clause]:
    """Every clause of every sentence, in prompt order."""
    found: list[Clause] = []
    for sentence in prompt.sentences:
        first = sentence.words[0] if sentence.words else ""
        sentence_strong = lex.firm.search(sentence.text) is not None
        for a, b in _cuts(sentence, lex):
            text = sentence.text[a:b]
            topic, _ = topic_of(text, lex)
            # What a rule is about, not why: "never quote costs, because each treatment is
            # billed differently" is about quoting costs.
            rule_text = _rule_part(text, lex)
            rule_topic = topic if rule_text == text else topic_of(rule_text, lex)[0]
            # The rule's action is the main clause's verb: in "if a member asks whether
            # ...", "tell every caller who asks about ...", asking is the caller's.
            actions = topic_of(_main_clause(text, lex), lex)[1]
            discretion = leaves_to_judgement(text, lex)
            ruled = _polarity_part(text, lex)
            weak = (
                discretion or lex.weak.search(ruled) is not None or permits_leaving_out(ruled, lex)
            )
            negative = _main_clause_negative(ruled, lex)
            polarity: Polarity = "weak" if weak else "neg" if negative else "pos"
            ordered = _gives_order(text, lex) or lex.is_imperative(first)
            forms = forms_of(text, lex)
            previous = found[-1] if found and found[-1].sentence is sentence else None
            if weak and previous is not None and len(topic - actions) <= 1:
                # "..., but does not have to", "nije obavezna": a weakening cut off from
                # what it weakens, which the clause before names.
                topic, forms = topic | previous.topic, forms | previous.forms
            elif previous is not None and _points_back(text, rule_topic - actions, lex):
                # "Claim numbers go by email only; never say *them* on the phone": the
                # clause acts on what the one before names.
                things = previous.rule_topic - previous.actions
                topic, rule_topic = topic | things, rule_topic | things
                forms = forms | previous.forms
            if previous is not None and _only_firms(text, topic, polarity, lex):
                # "Ask for the pet's name and age - that is mandatory": the duty is the
                # clause before's.
                found[-1] = replace(previous, strong=True)
            without_match = lex.without.search(text)
            without = polarity == "neg" and without_match is not None
            found.append(
                Clause(
                    sentence=sentence,
                    start=sentence.start + a,
                    end=sentence.start + b,
                    text=text,
                    topic=topic,
                    actions=actions,
                    polarity=polarity,
                    strong=lex.firm.search(text) is not None or lex.every.search(text) is not None,
                    exception=lex.exception.search(text) is not None or without,
                    only_without=without and lex.exception.search(text) is None,
                    without_what=_without_what(text, without_match, lex),
                    universal=lex.universal.search(text) is not None,
                    # "Customers call about refunds" says who calls; "Ask at the start of
                    # every call about tickets" is an order all the same.
                    describes_callers=lex.intro.search(text) is not None and not ordered,
                    instruction=sentence_strong or ordered or polarity != "pos",
                    conditional=first_condition(text, lex) is not None
                    or german_verb_first_condition(text, lex) > 0,
                    condition=_condition_topic(text, lex),
                    orders=_clause_orders(text, polarity, lex),
                    restricted=lex.restrictive.search(text) is not None,
                    forms=forms,
                    tools=tools_named(text),
                    rule_topic=rule_topic,
                    describes_tool=_TOOL_SIGNATURE.match(sentence.text) is not None,
                    discretion=discretion,
                    judged=judgement_topic(text, lex) if discretion else frozenset(),
                )
            )
    return found
