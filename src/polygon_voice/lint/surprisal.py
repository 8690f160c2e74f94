"""Tier 2: how surprising each word and sentence is under a unigram language model.

The model is wordfreq's word-frequency list for the language (the `noise` extra; the same
lists recognition noise uses). Its limits, plainly: a unigram model scores each word on its
own, so it sees rare words (jargon, acronyms, invented terms) but not an unusual combination
of common words, word order, or whether a word fits its context; and a word is only as rare
as web and subtitle text makes it ("refund" is common there, an internal code name is not).
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from polygon_voice.lint import wordlists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.text import Prompt, Sentence

# A word rarer than this Zipf value (about once in 3 million words) reads as jargon.
JARGON_ZIPF = 2.5
# A sentence whose words average more than this many bits reads as unusual phrasing;
# ordinary instructions average 9 to 11 (measured on the example prompts).
UNUSUAL_BITS = 14.0
# Inflected languages spread a word's frequency over its forms, so their ordinary sentences
# cost more bits: the limit is shifted by how far each language's median sentence lies from
# English's on the corpus's dev part (median bits per word: en 9.9, de 9.6, hr 13.2,
# ru 12.9; docs/lint.md).
UNUSUAL_BITS_BY_LANGUAGE = {"en": 14.0, "de": 14.0, "hr": 17.5, "ru": 17.0}
MIN_WORDS = 4
UNKNOWN_FREQUENCY = 1e-9  # a word not in the list at all
W_JARGON = 0.05
W_UNUSUAL = 0.1
_WORDFREQ_CODE = {"en": "en", "de": "de", "ru": "ru", "hr": "sh"}  # Croatian: Serbo-Croatian
SMALL_LISTS = frozenset({"sh"})  # wordfreq has only its small list (Zipf >= 3) for these
SMALL_LIST_FLOOR = 1e-6  # Zipf 3: the least frequency of a small list
# Code, placeholders and format masks (YYYY-MM-DD) are names the model is told, not wording.
TOKEN = re.compile(
    r"`[^`\n]*`|\{[^}\n]*\}|\b[A-Z]{1,4}(?:[-/.:][A-Z]{1,4})+\b|[^\W\d_]+(?:['\u2019][^\W\d_]+)?"
)


def unavailable() -> str | None:
    """Why tier 2 cannot run here, or None."""
    if importlib.util.find_spec("wordfreq") is None:
        # Imported only here: the noise package is not needed to read word frequencies.
        from polygon_voice.noise.languages import INSTALL_HINT

        return f"needs wordfreq (the `noise` extra): {INSTALL_HINT}"
    return None


def bits(word: str, language: str) -> float:
    """Surprisal of one word in bits: -log2 of its frequency.

    A word in no list costs 30 bits, except in a language that has only wordfreq's small
    list (Croatian): that list stops at Zipf 3, so a word missing from it is not known to
    be rare, only to be rarer than Zipf 3; it costs that much (about 20 bits), and is not
    marked as jargon (tier 2 then marks only words that are in the list and rare).
    """
    code = _WORDFREQ_CODE[language]
    frequency = wordlists.frequency(word, code)
    if frequency <= 0 and code in SMALL_LISTS:
        return -math.log2(SMALL_LIST_FLOOR)
    return -math.log2(max(frequency, UNKNOWN_FREQUENCY))


@dataclass(frozen=True)
class Scale:
    """How one model's surprisal is reported: a word over `word_bits` is flagged as `kind`,
    a sentence averaging over `sentence_bits` per word as unusual phrasing."""

    word_bits: float
    sentence_bits: float
    kind: str
    word_weight: float
    word_message: Callable[[str, float], str]
    sentence_note: str


WordScore = Callable[[re.Match[str], Sentence], float | None]
"""A word's surprisal in bits, or None for a word that is not wording (code, a name)."""


def scan(prompt: Prompt, score: WordScore, scale: Scale) -> list[Finding]:
    """Surprising words and unusually worded sentences, whatever model scores the words."""
    findings = []
    for sentence in prompt.sentences:
        scores = []
        for match in TOKEN.finditer(prompt.text, sentence.start, sentence.end):
            word = match.group()
            if word[0] in "`{" or not word.isalpha():
                continue  # code and placeholders are names the model is told, not wording
            bits_here = score(match, sentence)
            if bits_here is None:
                continue
            scores.append(bits_here)
            if bits_here > scale.word_bits and len(word) > 2:
                findings.append(
                    prompt.finding(
                        "ambiguity",
                        match.start(),
                        match.end(),
                        tier=2,
                        kind=scale.kind,
                        weight=scale.word_weight,
                        message=scale.word_message(word, bits_here),
                    )
                )
        if len(scores) >= MIN_WORDS and sum(scores) / len(scores) > scale.sentence_bits:
            findings.append(
                prompt.finding(
                    "ambiguity",
                    sentence.start,
                    sentence.end,
                    tier=2,
                    kind="unusual-phrasing",
                    weight=W_UNUSUAL,
                    message=f"unusual wording: {sum(scores) / len(scores):.1f} bits per word "
                    f"{scale.sentence_note}",
                )
            )
    return findings


def surprisal(prompt: Prompt, language: str) -> list[Finding]:
    """Jargon words and sentences of unusual wording, as ambiguity findings.

    A word is scored by the commoner of its form and its lemma (an inflected form is as
    plain as its base word: "предлагайте" is "предлагать"), and a German compound by its
    two commonest parts when both are ordinary words ("Zahlungsdaten"). A rare word is
    marked once, where it first appears, and not at all when the prompt defines it
    ("HGK (Hanseatische Gesundheitskasse)").
    """
    from polygon_voice.lint.topics import lexicon

    lemma = lexicon(language).lemma
    flagged: set[str] = set()
    word_bits = -math.log2(10 ** (JARGON_ZIPF - 9))

    def score(match: re.Match[str], sentence: Sentence) -> float | None:
        token = match.group()
        # A capitalised word inside a sentence is a name (Northwind), not jargon;
        # an all-capitals one is an acronym, which a caller may not know.
        is_name = token[0].isupper() and match.start() != sentence.start
        if is_name and not (token.isupper() and len(token) > 1):
            return None
        low = token.lower()
        # Russian yo (U+0451) is written ye (U+0435) as often as not, and a word with it
        # would make wordfreq itself load (a second, for four words): read with ye.
        plain = low.replace("ё", "\u0435") if language == "ru" else low
        base = lemma(token).replace("ё", "\u0435") if language == "ru" else lemma(token)
        value = min(bits(plain, language), bits(base, language))
        if value > word_bits and language == "de":
            value = min(value, _compound_bits(low))
        if value > word_bits:
            if low in flagged or _defined(prompt.text, token):
                return word_bits  # counted in the sentence's average, not marked again
            flagged.add(low)
        return value

    scale = Scale(
        word_bits=word_bits,
        sentence_bits=UNUSUAL_BITS_BY_LANGUAGE.get(language, UNUSUAL_BITS),
        kind="jargon",
        word_weight=W_JARGON,
        word_message=lambda word, b: (
            f'"{word}" is rare ({b:.0f} bits): jargon the model or '
            "the caller may read differently; say it plainly or define it"
        ),
        sentence_note=f"(over {UNUSUAL_BITS_BY_LANGUAGE.get(language, UNUSUAL_BITS):g} for "
        f"{language}; ordinary instructions: 9 to 11 in English)",
    )
    return scan(prompt, score, scale)


COMPOUND_PART = 4  # letters of the shorter part of a German compound, at least
COMMON_PART_ZIPF = 3.0  # both parts at least this common: the compound reads plainly


def _compound_bits(word: str) -> float:
    """The bits of a German compound read as its two parts (the rarer part's), if both are
    ordinary words; else infinity. A linking "s" between the parts is allowed."""
    best = math.inf
    limit = -math.log2(10 ** (COMMON_PART_ZIPF - 9))
    for cut in range(COMPOUND_PART, len(word) - COMPOUND_PART + 1):
        head, tail = word[:cut], word[cut:]
        heads = [head] + ([head[:-1]] if head.endswith("s") and len(head) > COMPOUND_PART else [])
        tail_bits = bits(tail, "de")
        if tail_bits > limit:
            continue
        for part in heads:
            both = max(bits(part, "de"), tail_bits)
            if both <= limit:
                best = min(best, both)
    return best


def _defined(text: str, token: str) -> bool:
    """Whether the prompt spells the term out: "HGK (...)" or "(HGK)"."""
    return f"{token} (" in text or f"({token})" in text or f"{token} \u2013" in text
