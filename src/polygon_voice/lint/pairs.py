"""Tier 1 rules on pairs of sentences: contradictions and near-duplicates."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from polygon_voice.lint.lexicon import WordLists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.rules import Rule, stem, topic_words
from polygon_voice.lint.text import Prompt, Sentence

W_CONTRADICTION = 0.5
W_DUPLICATE = 0.34  # three restated rules make the axis 1
OPPOSITE_OVERLAP = 0.5  # share of the two rules' topic words they have in common
DUPLICATE_OVERLAP = 0.55
DUPLICATE_RATIO = 0.8  # difflib's similarity of the two sentences as written
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
    """Opposite directives on the same action, and different numbers for the same thing."""
    findings = []
    for i, first in enumerate(rules):
        for later in rules[i + 1 :]:
            shared = first.topic & later.topic
            if (
                first.negative != later.negative
                and len(shared) >= MIN_TOPIC
                and jaccard(first.topic, later.topic) >= OPPOSITE_OVERLAP
            ):
                findings.append(
                    _pair(prompt, first.sentence, later.sentence, "opposite-directives", shared)
                )
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
            elif before[0] != value and before[1] is not sentence:
                findings.append(
                    _pair(
                        prompt, before[1], sentence, "conflicting-numbers", {match.group(2).lower()}
                    )
                )
    return findings


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
    """Sentences that say the same thing again (same polarity, mostly the same words)."""
    findings = []
    topics = [topic_words(s, lists) for s in prompt.sentences]
    negative = [lists.negative.search(s.text) is not None for s in prompt.sentences]
    flagged: set[int] = set()
    for j, later in enumerate(prompt.sentences):
        for i in range(j):
            if len(topics[i]) < MIN_TOPIC + 1 or len(topics[j]) < MIN_TOPIC + 1:
                continue
            if negative[i] != negative[j] or j in flagged:
                continue
            ratio = SequenceMatcher(None, prompt.sentences[i].text.lower(), later.text.lower())
            if (
                jaccard(topics[i], topics[j]) >= DUPLICATE_OVERLAP
                or ratio.ratio() >= DUPLICATE_RATIO
            ):
                flagged.add(j)
                first = prompt.sentences[i]
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
    return findings


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
