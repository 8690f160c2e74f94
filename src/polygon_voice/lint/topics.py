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
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

from polygon_voice.lint.lexicon import WordLists, _pattern, word_lists
from polygon_voice.lint.text import Prompt, Sentence

Polarity = Literal["pos", "neg", "weak"]
# simplemma's code for Croatian is the Serbo-Croatian dictionary.
_SIMPLEMMA_CODE = {"en": "en", "de": "de", "hr": "hbs", "ru": "ru"}
LEMMATISER_HINT = "pip install simplemma (the rules by lemma then find more, in de/hr/ru most)"
_WORD = re.compile(r"[^\W\d_]+(?:[-'\u2019][^\W\d_]+)*")
_CODE = re.compile(r"`[^`\n]*`|\{[^}\n]*\}")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NOT_A_PROHIBITION = frozenset({"without", "ohne", "bez", "без"})


def lemmatiser_available() -> bool:
    return importlib.util.find_spec("simplemma") is not None


@functools.cache
def _lemmatise(language: str) -> Callable[[str], str]:
    if not lemmatiser_available():
        return _stem if language == "en" else str.lower
    lemmatizer = _lemmatizer()
    code = _SIMPLEMMA_CODE[language]

    @functools.lru_cache(maxsize=65536)
    def lemma(word: str) -> str:
        # As written: German nouns are looked up capitalised.
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
    universal: re.Pattern[str]
    subordinate: re.Pattern[str]
    contrast: re.Pattern[str]
    brevity: re.Pattern[str]
    detail: re.Pattern[str]
    numbers: dict[str, int]
    limits: re.Pattern[str]
    intro: re.Pattern[str]
    generic: frozenset[str]
    stop: frozenset[str]

    def lemma(self, word: str) -> str:
        return _lemmatise(self.language)(word)


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
        universal=_pattern(section["universal"]),
        subordinate=_pattern(section["subordinate"]),
        contrast=_pattern(section["contrast"]),
        brevity=_pattern(section["brevity"]),
        detail=_pattern(section["detail"]),
        numbers={k.lower(): int(v) for k, v in section["numbers"].items()},
        limits=_pattern(section["limits"]),
        intro=_pattern(section["intro"]),
        generic=frozenset("~" + g for g in section["generic"]),
        stop=frozenset(stop),
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


def topic_of(text: str, lex: Lexicon) -> tuple[frozenset[str], frozenset[str]]:
    """(topic, actions): lemmas mapped to their synonym group; actions among them."""
    plain = _CODE.sub(" ", text)
    found: set[str] = set()
    if lex.phrases is not None:
        for match in lex.phrases.finditer(plain):
            found.add(lex.phrase_group[" ".join(match.group().lower().split())])
        plain = lex.phrases.sub(" ", plain)
    for word in _WORD.findall(plain):
        low = word.lower()
        if low in lex.stop or len(low) < 3:
            continue
        base = lex.lemma(word)
        if base in lex.stop:
            continue
        found.add(lex.canonical.get(base, lex.canonical.get(low, base)))
    found -= lex.generic
    return frozenset(found), frozenset(found & lex.actions)


def _main_clause_negative(text: str, lex: Lexicon) -> bool:
    """A negation that belongs to the rule, not to a subordinate clause before it."""
    for match in lex.lists.negative.finditer(text):
        if match.group().lower() in _NOT_A_PROHIBITION:
            continue  # "never ... without an adult": a condition, not the rule's polarity
        before = text[: match.start()]
        opener = None
        for sub in lex.subordinate.finditer(before):
            opener = sub
        # "if they have not given it": the opener's clause runs until a comma.
        if opener is not None and "," not in before[opener.end() :]:
            continue
        return True
    return False


def _cuts(sentence: Sentence, lex: Lexicon) -> list[tuple[int, int]]:
    """Offsets (in the sentence) of its clauses: cut at ";" and at contrast words."""
    text = sentence.text
    points = [0]
    for match in re.finditer(r";\s*|\s+[-\u2013\u2014]\s+", text):
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


def clauses(prompt: Prompt, lex: Lexicon) -> list[Clause]:
    """Every clause of every sentence, in prompt order."""
    found = []
    for sentence in prompt.sentences:
        first = sentence.words[0] if sentence.words else ""
        sentence_strong = lex.lists.strong.search(sentence.text) is not None
        for a, b in _cuts(sentence, lex):
            text = sentence.text[a:b]
            topic, actions = topic_of(text, lex)
            weak = lex.weak.search(text) is not None
            negative = _main_clause_negative(text, lex)
            polarity: Polarity = "weak" if weak else "neg" if negative else "pos"
            found.append(
                Clause(
                    sentence=sentence,
                    start=sentence.start + a,
                    end=sentence.start + b,
                    text=text,
                    topic=topic,
                    actions=actions,
                    polarity=polarity,
                    strong=lex.lists.strong.search(text) is not None,
                    exception=lex.exception.search(text) is not None,
                    universal=lex.universal.search(text) is not None,
                    describes_callers=lex.intro.search(text) is not None,
                    instruction=sentence_strong
                    or first in lex.lists.imperative
                    or lex.canonical.get(lex.lemma(first), "") in lex.actions
                    or polarity != "pos",
                )
            )
    return found


def _number_word(word: str, lex: Lexicon) -> int | None:
    # "twenty-one": the parts add up.
    parts = [lex.numbers.get(part) for part in word.lower().split("-")]
    if not parts or any(p is None for p in parts):
        return None
    return sum(p for p in parts if p is not None)


def numbers_in(text: str, lex: Lexicon) -> list[tuple[int, int, int]]:
    """(value, start, end) of each number in `text`: digits or the language's number words."""
    found = [
        (int(float(m.group().replace(",", "."))), m.start(), m.end())
        for m in _NUMBER.finditer(text)
        if (m.start() == 0 or text[m.start() - 1] not in ":/-")
        and not (m.end() < len(text) and text[m.end()] in ":/")
    ]
    words = list(_WORD.finditer(text))
    k = 0
    while k < len(words):
        value = _number_word(words[k].group(), lex)
        if value is None:
            k += 1
            continue
        start, end = words[k].start(), words[k].end()
        # "three hundred": a multiplier word right after multiplies.
        while k + 1 < len(words) and text[end : words[k + 1].start()].strip() == "":
            nxt = _number_word(words[k + 1].group(), lex)
            if nxt is None or nxt < 100 or nxt <= value:
                break
            value, end, k = value * nxt, words[k + 1].end(), k + 1
        found.append((value, start, end))
        k += 1
    return sorted(found, key=lambda item: item[1])
