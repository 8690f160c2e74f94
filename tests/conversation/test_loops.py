"""LOOP-1/LOOP-2: overlap on normalised words, one-word replies included."""

from __future__ import annotations

import pytest

from polygon_voice.conversation import normalised_words, reply_overlap


def test_normalisation_strips_case_punctuation_and_diacritics() -> None:
    assert normalised_words("Ćao, ŽELIM kavu!") == ["cao", "zelim", "kavu"]


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ("Yes.", "Yes!", 1.0),
        ("Yes.", "No.", 0.0),
        (
            "one two three four five six seven eight nine ten",
            "one two three four five six seven eight nine",
            0.9,
        ),
        ("a b c d e f g h i j", "a b c d e f g h x y", 0.8),
        ("yes yes no", "yes no no", 2 / 3),
        ("", "", 0.0),
    ],
)
def test_overlap_is_the_multiset_share_of_the_longer_reply(
    first: str, second: str, expected: float
) -> None:
    assert reply_overlap(first, second) == pytest.approx(expected)
