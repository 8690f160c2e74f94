"""Tier 1 rules on pairs of sentences: contradictions and near-duplicates."""

from __future__ import annotations

from collections.abc import Callable
from difflib import SequenceMatcher

from polygon_voice.lint.index import OverlapIndex, rarity
from polygon_voice.lint.lexicon import WordLists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.rules import STACKED_MARKERS, Rule, topic_words
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


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def contradictions(
    prompt: Prompt,
    rules: list[Rule],
    cases_meet: Callable[[Sentence, Sentence], bool] | None = None,
) -> list[Finding]:
    """Opposite directives on the same action, in nearly the same words.

    Each instruction is marked once, against the first earlier one it contradicts; when
    `cases_meet` is given, only where it says the two rules can apply at once ("if the
    customer is over 75, always ..." / "if the meter is outside, never ..." cannot).
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
            # A sentence of stacked rules has one polarity per rule, not one for all: its
            # rules are compared clause by clause (conflicts.py), not here.
            stacked = max(first.markers, later.markers) >= STACKED_MARKERS
            if (
                not stacked
                and (cases_meet is None or cases_meet(first.sentence, later.sentence))
                and first.negative != later.negative
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
    return findings


def _pair(
    prompt: Prompt, first: Sentence, later: Sentence, kind: str, shared: set[str] | frozenset[str]
) -> Finding:
    line, _ = prompt.position(first.start)
    what = "says the opposite of"
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
