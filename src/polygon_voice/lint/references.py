"""Tier 1's unclear references: a condition naming two things, then an order on "it".

"If the caller has a contract and a SIM-only add-on, cancel it first": "it" is either. The
rule looks for a sentence opening with a case ("if", "wenn", "ako", "если"), two things
joined in it ("and", "or", "und", "i", "и"), and the object pronoun of one thing right
after the verb of the clause after it (docs/lint.md). Plural pronouns ("change them") refer
to both, and pronouns of a person ("tell him") to the caller the case is about: both are
left alone.
"""

from __future__ import annotations

import re

from polygon_voice.lint.lexicon import VagueReadings, WordLists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.lint.vague import GERMAN_INDEFINITE, LETTERS

W_REFERENCE = 0.1
_MAIN_FROM = re.compile(r",")  # a condition put first ends at a comma
_INDEFINITE = re.compile(GERMAN_INDEFINITE, re.IGNORECASE)


def unclear_references(prompt: Prompt, lists: WordLists) -> list[Finding]:
    """A finding on each main clause whose pronoun may mean either of two things its
    condition names."""
    r = lists.vague_readings
    findings = []
    for sentence in prompt.sentences:
        place = _pronoun_after_pair(prompt.text, sentence, r)
        if place is None:
            continue
        start, end, pronoun = place
        findings.append(
            prompt.finding(
                "ambiguity",
                start,
                end,
                tier=1,
                kind="unclear-reference",
                weight=W_REFERENCE,
                message=f'"{pronoun}" may mean either of the two things the condition names; '
                "name the one you mean",
            )
        )
    return findings


def _pronoun_after_pair(
    text: str, sentence: Sentence, r: VagueReadings
) -> tuple[int, int, str] | None:
    """(start, end, pronoun) of the main clause, when the sentence opens with a case that
    names two things and the clause after it refers to one of them."""
    opener = r.opens_case.match(text, sentence.start, sentence.end)
    if opener is None:
        return None
    for comma in _MAIN_FROM.finditer(text, opener.end(), sentence.end):
        condition = (opener.end(), comma.start())
        if not _names_two(text, condition, r):
            continue
        pronoun = _pronoun_in(text, comma.end(), sentence.end, r)
        if pronoun is not None:
            clause_end = text.find(",", pronoun.end(), sentence.end)
            end = sentence.end if clause_end < 0 else clause_end
            start = (
                comma.end() + len(text[comma.end() : end]) - len(text[comma.end() : end].lstrip())
            )
            return start, end, pronoun.group()
    return None


def _names_two(text: str, span: tuple[int, int], r: VagueReadings) -> bool:
    """Whether "and" / "or" joins two things in the condition: in English before an
    article ("a contract and a SIM card"), in German before an article or a noun
    ("Ausweis und Reisepass"); in Croatian and Russian, which have no articles, any."""
    for pair in r.pairs.finditer(text, *span):
        nxt = LETTERS.search(text, pair.end(), span[1])
        if nxt is None:
            continue
        word = nxt.group()
        if r.language == "en" and not r.determiners.fullmatch(word):
            continue
        if r.language == "de" and not _german_thing(word, r):
            continue
        return True
    return False


def _german_thing(word: str, r: VagueReadings) -> bool:
    """A noun (capitalised) or an article: "und Reisepass", "und eine Ersatzlieferung"."""
    return word[0].isupper() or bool(r.definite.fullmatch(word) or _INDEFINITE.fullmatch(word))


def _pronoun_in(text: str, start: int, end: int, r: VagueReadings) -> re.Match[str] | None:
    """The pronoun right after the clause's first word, its verb ("cancel it", "provjeri
    ga", "отправьте её"), in lower case (German "sie", not the "Sie" of address): the
    object of the order. Further on, "it" mostly means something the clause named itself."""
    words = list(LETTERS.finditer(text, start, end))[:2]
    if len(words) == 2 and words[1].group().islower() and r.pronouns.fullmatch(words[1].group()):
        return words[1]
    return None
