"""Lint's pruned pair search finds exactly what comparing every pair finds; any prompt text
gives a clean report or a clean error, in bounded time.

The references below are the pair rules written the obvious way (every earlier sentence
tried, the first match kept), against which the indexed search (lint/index.py) is checked
on small random prompts made of a few overlapping words, so that overlaps, restatements,
opposite polarities and near-equal spellings are common.
"""

from __future__ import annotations

import time
from difflib import SequenceMatcher
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.lint import lint, rules
from polygon_voice.lint.index import OverlapIndex, rarity
from polygon_voice.lint.lexicon import word_lists
from polygon_voice.lint.pairs import (
    CANDIDATE_OVERLAP,
    DUPLICATE_OVERLAP,
    DUPLICATE_RATIO,
    MIN_TOPIC,
    OPPOSITE_OVERLAP,
    contradictions,
    duplicates,
    jaccard,
)
from polygon_voice.lint.rules import SCATTER_GAP, Rule, rules_of, topic_words
from polygon_voice.lint.text import Prompt

EN = word_lists("en")
STARTS = ["Always", "Never", "Ask", "Confirm", "Do not", "The", "Check"]
# Few words, some spelled nearly alike, so that pairs overlap by every share.
WORDS = [
    "order",
    "orders",
    "number",
    "caller",
    "callers",
    "date",
    "data",
    "refund",
    "card",
    "the",
    "to",
    "and",
    "delivery",
    "address",
]
sentence = st.builds(
    lambda start, words: " ".join([start, *words]) + ".",
    st.sampled_from(STARTS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=7),
)
prompts = st.builds(
    lambda parts, breaks: "".join(
        p + ("\n\n" if b else " ") for p, b in zip(parts, breaks, strict=False)
    ),
    st.lists(sentence, min_size=1, max_size=40),
    st.lists(st.booleans(), min_size=40, max_size=40),
)
word_sets = st.lists(st.frozensets(st.sampled_from(WORDS), max_size=8), max_size=30)


def every_pair_contradictions(prompt: Prompt, found: list[Rule]) -> list[tuple[int, str]]:
    marked = []
    for j, later in enumerate(found):
        for first in found[:j]:
            shared = first.topic & later.topic
            if (
                first.negative != later.negative
                and len(shared) >= MIN_TOPIC
                and jaccard(first.topic, later.topic) >= OPPOSITE_OVERLAP
            ):
                line, _ = prompt.position(first.sentence.start)
                about = ", ".join(sorted(shared)[:3])
                marked.append(
                    (later.sentence.start, f"says the opposite of line {line} about {about}")
                )
                break
    return marked


def every_pair_duplicates(prompt: Prompt) -> list[tuple[int, int]]:
    sentences = prompt.sentences
    topics = [topic_words(s, EN) for s in sentences]
    negative = [EN.negative.search(s.text) is not None for s in sentences]
    marked = []
    for j, later in enumerate(sentences):
        for i in range(j):
            if min(len(topics[i]), len(topics[j])) < MIN_TOPIC + 1 or negative[i] != negative[j]:
                continue
            overlap = jaccard(topics[i], topics[j])
            ratio = SequenceMatcher(None, sentences[i].text.lower(), later.text.lower()).ratio()
            if overlap >= DUPLICATE_OVERLAP or (
                overlap >= CANDIDATE_OVERLAP and ratio >= DUPLICATE_RATIO
            ):
                marked.append((later.start, prompt.position(sentences[i].start)[0]))
                break
    return marked


def every_pair_scattered(prompt: Prompt, found: list[Rule]) -> list[tuple[int, str]]:
    marked = []
    size = len(prompt.text)
    for j, later in enumerate(found):
        for first in found[:j]:
            shared = first.topic & later.topic
            gap = (later.sentence.start - first.sentence.end) / size
            if len(shared) >= 2 and gap > SCATTER_GAP:
                line, _ = prompt.position(first.sentence.start)
                marked.append((later.sentence.start, f"line {line}"))
                break
    return sorted(marked)


@settings(max_examples=150, deadline=None)
@given(word_sets, st.sampled_from([OPPOSITE_OVERLAP, DUPLICATE_OVERLAP, 0.3, 1.0]))
def test_the_index_never_misses_a_pair_at_its_threshold(
    sets: list[frozenset[str]], threshold: float
) -> None:
    index = OverlapIndex(threshold, rarity(sets))
    for j, words in enumerate(sets):
        candidates = index.candidates(words)
        assert candidates == sorted(set(candidates))
        wanted = {i for i in range(j) if jaccard(sets[i], words) >= threshold}
        assert wanted <= set(candidates)
        index.add(j, words)


@settings(max_examples=150, deadline=None)
@given(prompts)
def test_pruned_pair_rules_find_exactly_what_every_pair_finds(text: str) -> None:
    prompt = Prompt(text)
    found = rules_of(prompt, EN)
    opposite = [f for f in contradictions(prompt, found) if f.kind == "opposite-directives"]
    assert [(f.start, f.message.split(': "')[0]) for f in opposite] == every_pair_contradictions(
        prompt, found
    )
    dups = duplicates(prompt, EN)
    assert [(f.start, int(f.message.split()[4])) for f in dups] == every_pair_duplicates(prompt)


@settings(max_examples=100, deadline=None)
@given(prompts, st.integers(min_value=2, max_value=6))
def test_scattered_rules_match_every_pair_with_wide_rules_too(text: str, pair_words: int) -> None:
    # A small PAIR_WORDS sends many rules down the wide path (compared one by one).
    prompt = Prompt(text)
    found = rules_of(prompt, EN)
    with mock.patch.object(rules, "PAIR_WORDS", pair_words):
        scattered = rules._scattered(prompt, found, len(prompt.text))
    got = sorted((f.start, f.message.split(" as ")[1].split(",")[0]) for f in scattered)
    assert got == every_pair_scattered(prompt, found)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_any_text_lints_cleanly_and_quickly(text: str) -> None:
    started = time.perf_counter()
    report = lint(text, max_tier=1, env={})  # no exception of any kind
    assert set(report.axes) == {
        "overload",
        "diluted_attention",
        "contradiction",
        "ambiguity",
        "redundancy",
    }
    for axis in report.axes.values():
        assert 0.0 <= axis.score <= 1.0
        assert all(0 <= f.start <= f.end <= len(text) for f in axis.findings)
    assert time.perf_counter() - started < 2.0


def test_a_repeated_prompt_costs_no_more_pairs_than_its_first_copy() -> None:
    # 200 copies of a contradicting pair: each copy is marked once, against the first.
    text = "Always confirm the order number. Never confirm the order number. " * 200
    prompt = Prompt(text)
    found = rules_of(prompt, EN)
    marked = contradictions(prompt, found)
    assert len(marked) == len(found) - 1
    assert {f.message for f in marked} == {
        'says the opposite of line 1 about confirm, number, order: "Never confirm the order '
        'number."',
        'says the opposite of line 1 about confirm, number, order: "Always confirm the order '
        'number."',
    }
