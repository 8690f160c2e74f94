"""Candidate pairs for tier 1's pair rules, found without comparing every pair of sentences.

Two sentences whose content words overlap by a share `t` or more (Jaccard) must have a word
in common among the rarer words of each: sort each set's words from the rarest in the whole
prompt to the most common; if J(x, y) >= t then the first |x| - ceil(t |x|) + 1 words of x
and the first |y| - ceil(t |y|) + 1 words of y share a word (prefix filtering, as in the
AllPairs and PPJoin set-similarity joins). The most common words ("caller", "order") fall
in the part not indexed, so a sentence is compared only with the few that share one of its
rarer words, and the work grows with the prompt's length, not with its square. Sizes prune
too: J >= t needs t |y| <= |x| <= |y| / t. The search is exact: it returns a superset of
the pairs at or above `t`, which the rule then checks as before.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

# Float noise must never shorten a prefix (that could miss a pair); a longer one is safe.
_EPSILON = 1e-9


def rarity(sets: Iterable[frozenset[str]]) -> dict[str, int]:
    """Each word's rank, rarest first (ties by the word itself, so the order is stable)."""
    counts = Counter(word for words in sets for word in words)
    ordered = sorted(counts, key=lambda word: (counts[word], word))
    return {word: rank for rank, word in enumerate(ordered)}


class OverlapIndex:
    """Sets added one by one; which earlier ones may overlap a new one by `threshold`."""

    def __init__(self, threshold: float, rank: dict[str, int]) -> None:
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], not {threshold}")
        self.threshold = threshold
        self._rank = rank
        # word -> set size -> ids: the size filter then picks whole lists, not single ids.
        self._postings: dict[str, dict[int, list[int]]] = {}
        self._prefixes: dict[frozenset[str], list[str]] = {}

    def _prefix(self, words: frozenset[str]) -> list[str]:
        prefix = self._prefixes.get(words)
        if prefix is None:
            size = len(words)
            length = size - math.ceil(self.threshold * size - _EPSILON) + 1
            ordered = sorted(words, key=self._rank.__getitem__)
            prefix = self._prefixes[words] = ordered[: max(0, min(size, length))]
        return prefix

    def candidates(self, words: frozenset[str]) -> list[int]:
        """Ids of earlier sets that may have Jaccard >= threshold with `words`, ascending."""
        if not words:
            return []
        size, t = len(words), self.threshold
        sizes = range(math.ceil(t * size - _EPSILON), math.floor(size / t + _EPSILON) + 1)
        lists = [
            ids
            for word in self._prefix(words)
            for by_size in (self._postings.get(word),)
            if by_size is not None
            for n in sizes
            for ids in (by_size.get(n),)
            if ids is not None
        ]
        if not lists:
            return []
        return sorted(set().union(*lists)) if len(lists) > 1 else list(lists[0])

    def add(self, key: int, words: frozenset[str]) -> None:
        """Index `words` under `key`; keys must be added in ascending order."""
        for word in self._prefix(words):
            self._postings.setdefault(word, {}).setdefault(len(words), []).append(key)
