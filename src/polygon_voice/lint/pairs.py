"""Tier 1 rules on pairs of sentences: contradictions and near-duplicates."""

from __future__ import annotations

import functools
import re
from difflib import SequenceMatcher

from polygon_voice.lint.index import OverlapIndex, rarity
from polygon_voice.lint.lexicon import LANGUAGES, WordLists, word_lists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.rules import Rule, stem, topic_words
from polygon_voice.lint.text import Prompt, Sentence

W_CONTRADICTION = 0.5
W_DUPLICATE = 0.34  # three restated rules make the axis 1
OPPOSITE_OVERLAP = 0.5  # share of the two rules' topic words they have in common
DUPLICATE_OVERLAP = 0.55
DUPLICATE_RATIO = 0.8  # difflib's similarity of the two sentences as written
# Two sentences are compared only when their content words overlap by this share or more:
# what lets an index find the pairs (lint/index.py) instead of trying all of them.
CANDIDATE_OVERLAP = 0.5
MIN_TOPIC = 2
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        (
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        )
    )
}
_COUNT = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?|[A-Za-z]+)(?=\s+([^\W\d_]{3,}))")


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def contradictions(prompt: Prompt, rules: list[Rule]) -> list[Finding]:
    """Opposite directives on the same action, and different numbers for the same thing.

    Each instruction is marked once, against the first earlier one it contradicts.
    """
    findings = []
    index = OverlapIndex(OPPOSITE_OVERLAP, rarity(rule.topic for rule in rules))
    # An instruction said again word for word decides exactly as its first saying: only the
    # first of each (topic, polarity) is indexed, so a repeated prompt costs no more pairs.
    firsts: dict[tuple[frozenset[str], bool], int] = {}
    for j, later in enumerate(rules):
        for i in index.candidates(later.topic):
            first = rules[i]
            shared = first.topic & later.topic
            if (
                first.negative != later.negative
                and len(shared) >= MIN_TOPIC
                and jaccard(first.topic, later.topic) >= OPPOSITE_OVERLAP
            ):
                findings.append(
                    _pair(prompt, first.sentence, later.sentence, "opposite-directives", shared)
                )
                break
        key = (later.topic, later.negative)
        if key not in firsts:
            firsts[key] = j
            index.add(j, later.topic)
    findings.extend(_numbers(prompt))
    return findings


def _numbers(prompt: Prompt) -> list[Finding]:
    # Every sentence, not only rules: "Answers may run to 4 sentences" loosens a rule too.
    seen: dict[str, tuple[str, Sentence]] = {}
    findings = []
    for sentence in prompt.sentences:
        for match in _COUNT.finditer(sentence.text):
            value, noun = match.group(1).lower(), stem(match.group(2).lower())
            if not value[0].isdigit():
                if value not in _NUMBER_WORDS:
                    continue
                value = str(_NUMBER_WORDS[value])
            before = seen.get(noun)
            if before is None:
                seen[noun] = (value, sentence)
            elif (
                before[0] != value
                and before[1] is not sentence
                and _one_subject(before[1], sentence, noun)
            ):
                findings.append(
                    _pair(
                        prompt, before[1], sentence, "conflicting-numbers", {match.group(2).lower()}
                    )
                )
    return findings


def _one_subject(first: Sentence, later: Sentence, noun: str) -> bool:
    """Whether two sentences counting one noun say more in common than the noun: "up to 10
    working days" for a dispute and "5 working days" for a new card are two things (on the
    corpus's dev part, the noun alone made 10 of this rule's 18 false findings)."""
    stop = _all_stop_words()
    words = [
        {stem(w) for w in s.words if len(w) > 3 and w not in stop} - {noun} for s in (first, later)
    ]
    return bool(words[0] & words[1])


@functools.cache
def _all_stop_words() -> frozenset[str]:
    # The rule reads digits in any language: the function words of all four are left out.
    return frozenset(w for lang in LANGUAGES for w in word_lists(lang).stop)


def _pair(
    prompt: Prompt, first: Sentence, later: Sentence, kind: str, shared: set[str] | frozenset[str]
) -> Finding:
    line, _ = prompt.position(first.start)
    what = "says the opposite of" if kind == "opposite-directives" else "gives another number than"
    return prompt.finding(
        "contradiction",
        later.start,
        later.end,
        tier=1,
        kind=kind,
        weight=W_CONTRADICTION,
        message=f'{what} line {line} about {", ".join(sorted(shared)[:3])}: "{_short(first.text)}"',
    )


def duplicates(prompt: Prompt, lists: WordLists) -> list[Finding]:
    """Sentences that say the same thing again (same polarity, mostly the same words).

    Each is marked once, against the first earlier sentence it repeats. Only sentences whose
    content words overlap by CANDIDATE_OVERLAP are compared at all (found by an index, not
    by trying every pair); the character ratio then decides among those.
    """
    sentences = prompt.sentences
    topics = [topic_words(s, lists) for s in sentences]
    negative = [lists.negative.search(s.text) is not None for s in sentences]
    lowered = [s.text.lower() for s in sentences]
    index = OverlapIndex(CANDIDATE_OVERLAP, rarity(topics))
    firsts: set[tuple[str, bool]] = set()
    findings = []
    for j, later in enumerate(sentences):
        if len(topics[j]) < MIN_TOPIC + 1:
            continue  # too few content words to say the same thing twice
        # One matcher per later sentence: difflib keeps its index of the second text.
        matcher = SequenceMatcher(None, "", lowered[j])
        for i in index.candidates(topics[j]):
            if negative[i] == negative[j] and _repeats(topics[i], topics[j], lowered[i], matcher):
                first = sentences[i]
                line, _ = prompt.position(first.start)
                findings.append(
                    prompt.finding(
                        "redundancy",
                        later.start,
                        later.end,
                        tier=1,
                        kind="near-duplicate",
                        weight=W_DUPLICATE,
                        message=f'says again what line {line} says: "{_short(first.text)}"',
                    )
                )
                break
        # A sentence said again word for word decides as its first saying (see above).
        if (lowered[j], negative[j]) not in firsts:
            firsts.add((lowered[j], negative[j]))
            index.add(j, topics[j])
    return findings


def _repeats(
    first: frozenset[str], later: frozenset[str], first_text: str, matcher: SequenceMatcher[str]
) -> bool:
    """Content-word overlap of DUPLICATE_OVERLAP, or CANDIDATE_OVERLAP and the same text."""
    shared = len(first & later)
    overlap = shared / (len(first) + len(later) - shared)
    if overlap >= DUPLICATE_OVERLAP:
        return True
    if overlap < CANDIDATE_OVERLAP:
        return False
    matcher.set_seq1(first_text)
    # The quick ratios are upper bounds of the ratio: most pairs stop at them, cheaply.
    return (
        matcher.real_quick_ratio() >= DUPLICATE_RATIO
        and matcher.quick_ratio() >= DUPLICATE_RATIO
        and matcher.ratio() >= DUPLICATE_RATIO
    )


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
