"""Tier 1: deterministic rules, always on. The weights are the score formula (docs/lint.md)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from polygon_voice.lint.lexicon import WordLists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.text import Prompt, Sentence
from polygon_voice.lint.vague import vague as vague  # its own module; called as rules.vague

# Overload: a voice agent follows about ten simultaneous rules well; past that, each further
# one costs. CONSTRAINT_SPAN more rules take the axis from 0 to 1.
CONSTRAINT_LIMIT = 10
CONSTRAINT_SPAN = 20
STACKED_MARKERS = 3  # three hard markers in one sentence is three rules in one breath
W_STACKED = 0.15
# Diluted attention: "lost in the middle" matters only once the prompt is long.
LONG_PROMPT_WORDS = 200
MIDDLE = (0.25, 0.75)
W_BURIED = 0.3
SCATTER_GAP = 0.4  # same-topic rules further apart than this share of the prompt
W_SCATTERED = 0.15
PAIR_WORDS = 40  # topic words past which a rule's word pairs are too many to table


@dataclass(frozen=True)
class Rule:
    """A sentence that tells the agent what to do, with its polarity and topic words."""

    sentence: Sentence
    markers: int
    strong: bool
    negative: bool
    topic: frozenset[str]
    key: bool = False


def rules_of(prompt: Prompt, lists: WordLists) -> list[Rule]:
    """Each sentence that is an instruction: a marker ("must", "never") or an imperative verb."""
    found = []
    for sentence in prompt.sentences:
        strong = len(lists.strong.findall(sentence.text))
        first = sentence.words[0] if sentence.words else ""
        if not strong and first not in lists.imperative:
            continue
        found.append(
            Rule(
                sentence=sentence,
                markers=strong,
                strong=strong > 0,
                negative=lists.negative.search(sentence.text) is not None,
                topic=topic_words(sentence, lists),
                key=lists.key.search(sentence.text) is not None,
            )
        )
    return found


def topic_words(sentence: Sentence, lists: WordLists) -> frozenset[str]:
    """Content words, lightly stemmed, so "orders" and "order" name the same thing."""
    return frozenset(stem(w) for w in sentence.words if w not in lists.stop and len(w) > 2)


def stem(word: str) -> str:
    """A crude suffix strip; enough to compare the topics of two sentences."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def overload(prompt: Prompt, rules: list[Rule]) -> list[Finding]:
    """Too many rules at once, and sentences that pack several hard rules together."""
    findings = []
    if len(rules) > CONSTRAINT_LIMIT:
        first_extra = rules[CONSTRAINT_LIMIT].sentence
        weight = min(1.0, (len(rules) - CONSTRAINT_LIMIT) / CONSTRAINT_SPAN)
        findings.append(
            prompt.finding(
                "overload",
                first_extra.start,
                first_extra.end,
                tier=1,
                kind="too-many-rules",
                weight=weight,
                message=f"{len(rules)} instructions; past {CONSTRAINT_LIMIT} each one more "
                f"competes for the model's attention (this is number {CONSTRAINT_LIMIT + 1})",
            )
        )
    for rule in rules:
        if rule.markers >= STACKED_MARKERS:
            s = rule.sentence
            findings.append(
                prompt.finding(
                    "overload",
                    s.start,
                    s.end,
                    tier=1,
                    kind="stacked-rules",
                    weight=W_STACKED,
                    message=f"{rule.markers} hard rules in one sentence; split them",
                )
            )
    return findings


def diluted(
    prompt: Prompt, rules: list[Rule], keep: Callable[[Rule, Rule], bool] | None = None
) -> list[Finding]:
    """Key rules in the middle of a long prompt, and rules on one topic far apart (those
    `keep` accepts, when given: the engine asks for one action on one thing)."""
    if prompt.word_count < LONG_PROMPT_WORDS or not prompt.text:
        return []
    findings = []
    size = len(prompt.text)
    for rule in rules:
        where = rule.sentence.start / size
        # A key rule is one marked as such (important, immediately, emergency): marking
        # every hard rule mid-prompt flagged most of a long prompt (dev: precision 0.06).
        if rule.key and MIDDLE[0] <= where <= MIDDLE[1]:
            s = rule.sentence
            findings.append(
                prompt.finding(
                    "diluted_attention",
                    s.start,
                    s.end,
                    tier=1,
                    kind="buried-key-rule",
                    weight=W_BURIED,
                    message=f"key rule at {where:.0%} of a {prompt.word_count}-word prompt, "
                    "where models attend least; move it to the start or the end",
                )
            )
    findings.extend(_scattered(prompt, rules, size, keep))
    return findings


def _scattered(
    prompt: Prompt,
    rules: list[Rule],
    size: int,
    keep: Callable[[Rule, Rule], bool] | None = None,
) -> list[Finding]:
    """Each rule sharing two topic words with an earlier rule far before it, marked once
    (and only where `keep(first, later)` holds, when given)."""
    findings = []
    for j, i in _first_sharing_two(rules):
        first, later = rules[i], rules[j]
        if keep is not None and not keep(first, later):
            continue
        shared = first.topic & later.topic
        gap = (later.sentence.start - first.sentence.end) / size
        # The first rule sharing two words is also the farthest back: if it is not far
        # enough, no other is.
        if gap <= SCATTER_GAP:
            continue
        line, _ = prompt.position(first.sentence.start)
        s = later.sentence
        findings.append(
            prompt.finding(
                "diluted_attention",
                s.start,
                s.end,
                tier=1,
                kind="scattered-topic",
                weight=W_SCATTERED,
                message=f"same topic ({', '.join(sorted(shared)[:3])}) as line {line}, "
                f"{gap:.0%} of the prompt away; keep related rules together",
            )
        )
    return findings


def _first_sharing_two(rules: list[Rule]) -> list[tuple[int, int]]:
    """(j, i) for each rule j and the first earlier rule i sharing two topic words with it.

    "Shares two words" is "shares a pair of words": the first rule holding each pair is
    kept in a table, so each rule costs its own pairs, not a pass over all earlier rules.
    A rule with more than PAIR_WORDS topic words (a run-on paragraph) would have too many
    pairs; it is compared with the earlier rules directly, and they with it.
    """
    first_with: dict[tuple[str, str], int] = {}
    wide: list[int] = []  # rules with too many words for the pair table
    found = []
    for j, rule in enumerate(rules):
        words = sorted(rule.topic)
        if len(words) <= PAIR_WORDS:
            pairs = list(itertools.combinations(words, 2))
            hits = [first_with[pair] for pair in pairs if pair in first_with]
            hits += [k for k in wide if len(rules[k].topic & rule.topic) >= 2][:1]
            for pair in pairs:
                first_with.setdefault(pair, j)
        else:
            hits = [k for k in range(j) if len(rules[k].topic & rule.topic) >= 2][:1]
            wide.append(j)
        if hits:
            found.append((j, min(hits)))
    return found
