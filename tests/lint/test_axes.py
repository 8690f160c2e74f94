"""Tier 1 and 2 on crafted prompts: each axis positive and negative, spans, stable scores."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.lint import LintReport, lint

ROOT = Path(__file__).resolve().parents[2]
GOOD = (ROOT / "examples" / "order_line" / "prompt.md").read_text(encoding="utf-8")
BAD = (ROOT / "examples" / "prompts" / "bad_prompt.md").read_text(encoding="utf-8")
FILLER = "The caller talks to us about the weather and the news of the day in the town. " * 12


def marked(report: LintReport, text: str, axis: str) -> list[str]:
    return [text[f.start : f.end] for f in report.axes[axis].findings]  # type: ignore[index]


def test_the_good_example_prompt_is_clean() -> None:
    report = lint(GOOD, max_tier=2)
    assert {axis: r.score for axis, r in report.axes.items()} == dict.fromkeys(report.axes, 0.0)


def test_the_bad_example_prompt_fails_every_axis() -> None:
    everything = lint(BAD, max_tier=2, min_confidence=0)
    assert all(r.score >= 0.5 for r in everything.axes.values()), everything.axes
    # At the default cut, diluted attention's findings (right once in ten on the corpus's
    # dev part) are counted, not reported; the other axes still fail.
    report = lint(BAD, max_tier=2)
    assert report.axes["diluted_attention"].score == 0
    assert report.below_confidence > 0
    assert all(r.score >= 0.5 for a, r in report.axes.items() if a != "diluted_attention")


def test_scores_are_stable_run_to_run() -> None:
    assert lint(BAD, max_tier=2) == lint(BAD, max_tier=2)


def test_overload_counts_rules_past_ten() -> None:
    many = " ".join(f"Always mention item {i} to the caller." for i in range(16))
    report = lint(many, max_tier=1)
    assert report.axes["overload"].score == 0.3  # (16 - 10) / 20
    assert marked(report, many, "overload") == ["Always mention item 10 to the caller."]
    assert lint("Always greet the caller. Never invent a date.", max_tier=1).axes[
        "overload"
    ].score == (0.0)


def test_overload_marks_a_sentence_that_stacks_hard_rules() -> None:
    text = "You must always greet callers and never interrupt them."
    assert marked(lint(text, max_tier=1), text, "overload") == [text]


def test_a_key_rule_in_the_middle_of_a_long_prompt_is_buried() -> None:
    rule = "It is important: never read out the card number."
    text = f"{FILLER}{rule} {FILLER}"
    every = {"max_tier": 1, "min_confidence": 0.0}  # the rule is under the default cut
    assert marked(lint(text, **every), text, "diluted_attention") == [rule]
    assert lint(text, max_tier=1).axes["diluted_attention"].findings == []
    # A hard rule not marked as key is one of many; it is not flagged for its place.
    plain = "Never read out the card number."
    assert lint(f"{FILLER}{plain} {FILLER}", **every).axes["diluted_attention"].score == 0
    # The same rule at the start, or in a short prompt, is where the model sees it.
    assert lint(f"{rule} {FILLER}{FILLER}", **every).axes["diluted_attention"].score == 0
    assert lint(f"Hello there. {rule} Bye now.", **every).axes["diluted_attention"].score == 0


def test_related_rules_far_apart_are_scattered() -> None:
    first, later = "Ask for the order number first.", "Repeat the order number slowly."
    text = f"{first} {FILLER}{FILLER}{later}"
    findings = lint(text, max_tier=1, min_confidence=0).axes["diluted_attention"].findings
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [("scattered-topic", later)]


def test_opposite_directives_contradict() -> None:
    text = "Always confirm the order number.\nNever confirm the order number."
    report = lint(text, max_tier=1)
    assert marked(report, text, "contradiction") == ["Never confirm the order number."]
    finding = report.axes["contradiction"].findings[0]
    assert (finding.line, finding.column, finding.start) == (2, 1, 33)
    clean = "Always confirm the order number.\nNever invent a delivery date."
    assert lint(clean, max_tier=1).axes["contradiction"].score == 0


def test_different_numbers_for_the_same_thing_contradict() -> None:
    text = "Keep answers under 2 sentences. Answers may run to four sentences."
    assert marked(lint(text, max_tier=1), text, "contradiction") == [
        "Answers may run to four sentences."
    ]
    assert lint("Keep answers under 2 sentences.", max_tier=1).axes["contradiction"].score == 0


@pytest.mark.parametrize(
    ("language", "text", "vague"),
    [
        ("en", "Respond appropriately and try to help, etc.", ["appropriately", "try to", "etc."]),
        ("de", "Antworte angemessen und hilf bei Bedarf.", ["angemessen", "bei Bedarf"]),
        ("hr", "Odgovori prikladno i pomozi po potrebi.", ["prikladno", "po potrebi"]),
        ("ru", "Отвечай уместно и помогай при необходимости.", ["уместно", "при необходимости"]),
    ],
)
def test_vague_wording_per_language(language: str, text: str, vague: list[str]) -> None:
    report = lint(text, max_tier=1)
    assert report.language == language
    assert marked(report, text, "ambiguity") == vague


def test_precise_wording_is_not_ambiguous() -> None:
    assert lint("Ask for the order number. Say goodbye.", max_tier=1).axes["ambiguity"].score == 0


def test_restating_a_rule_is_redundant() -> None:
    text = "Be friendly and professional with every caller. Check the date. " * 1
    text += "Always be friendly and professional with each caller."
    assert marked(lint(text, max_tier=1), text, "redundancy") == [
        "Always be friendly and professional with each caller."
    ]
    assert (
        lint("Be friendly with callers. Check the delivery date.", max_tier=1)
        .axes["redundancy"]
        .score
        == 0
    )


def test_tier_two_marks_jargon_but_not_code_or_names() -> None:
    pytest.importorskip("wordfreq")
    text = "Log the PII for Northwind with `update_order_idempotent` as YYYY-MM-DD."
    report = lint(text, max_tier=2, min_confidence=0)  # jargon is under the default cut
    assert 2 in report.tiers_run
    assert [f.kind for f in report.axes["ambiguity"].findings] == ["jargon"]
    assert marked(report, text, "ambiguity") == ["PII"]


def test_tiers_past_max_tier_or_without_a_model_are_skipped_and_said() -> None:
    report = lint("Ask for the order number.", max_tier=1)
    assert report.tiers_run == [1]
    assert [s.tier for s in report.tiers_skipped] == [2, 3, 4]
    report = lint("Ask for the order number.")
    assert 4 in [s.tier for s in report.tiers_skipped]
    assert "POLYGON_JUDGE_MODEL" in report.tiers_skipped[-1].reason


def test_without_the_lemmatiser_the_rules_fall_back_and_say_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from polygon_voice.lint import engine, topics

    text = "Always offer refunds to unhappy callers. Never offer a refund."
    assert lint(text, max_tier=1).notes == []
    monkeypatch.setattr(engine, "lemmatiser_available", lambda: False)
    monkeypatch.setattr(topics, "lemmatiser_available", lambda: False)
    topics._lemmatise.cache_clear()
    topics.lexicon.cache_clear()
    try:
        report = lint(text, max_tier=1)
        assert report.notes
        assert "pip install simplemma" in report.notes[0]
        # The English suffix strip still matches "refunds" with "refund".
        assert marked(report, text, "contradiction") == ["Never offer a refund."]
    finally:
        topics._lemmatise.cache_clear()
        topics.lexicon.cache_clear()
