"""Invariants of recognition noise, over generated utterances in all four languages."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.noise import distort, distorted, read_digits
from polygon_voice.noise.croatian import croatian_number
from polygon_voice.noise.lexicon import lexicon
from polygon_voice.noise.text import split_words
from tests.noise.strategies import language_and_utterance, languages, levels, seeds

# The first example of a language loads its word list (a fraction of a second).
SLOW_FIRST = settings(deadline=None)


@SLOW_FIRST
@given(language_and_utterance(), levels, seeds)
def test_the_same_inputs_give_the_same_heard_text(
    spoken: tuple[str, str], level: float, seed: int
) -> None:
    language, text = spoken
    first = distort(text, level, language, seed)
    assert distort(text, level, language, seed) == first
    assert distorted(text, level, language, seed) == (first.heard, first.edits)


@SLOW_FIRST
@given(st.text(), languages, seeds)
def test_level_zero_is_the_identity_for_any_text(text: str, language: str, seed: int) -> None:
    heard = distort(text, 0.0, language, seed)
    assert heard.heard == text
    assert heard.edits == []
    assert heard.wer == 0.0


@SLOW_FIRST
@given(st.text(), languages, levels, seeds)
def test_any_text_at_any_level_gives_a_record(
    text: str, language: str, level: float, seed: int
) -> None:
    heard = distort(text, level, language, seed)
    assert heard.said == text
    assert heard.wer >= 0


@SLOW_FIRST
@given(language_and_utterance(min_words=6), seeds)
def test_at_level_one_a_long_utterance_always_changes(spoken: tuple[str, str], seed: int) -> None:
    language, text = spoken
    heard = distort(text, 1.0, language, seed)
    assert heard.heard != text
    assert heard.edits
    assert heard.wer > 0


@SLOW_FIRST
@given(language_and_utterance(), levels, seeds)
def test_the_word_error_rate_is_zero_exactly_when_nothing_was_edited(
    spoken: tuple[str, str], level: float, seed: int
) -> None:
    language, text = spoken
    heard = distort(text, level, language, seed)
    assert (heard.wer == 0) == (heard.edits == [])
    assert (heard.heard == text) == (heard.edits == [])


@SLOW_FIRST
@given(language_and_utterance(), levels, seeds)
def test_every_sound_alike_is_a_word_of_the_language_list(
    spoken: tuple[str, str], level: float, seed: int
) -> None:
    language, text = spoken
    words = lexicon(language).words
    for edit in distort(text, level, language, seed).edits:
        if edit.kind == "soundalike":
            assert edit.to.lower() in words
            assert edit.to.lower() != edit.from_.lower()


@SLOW_FIRST
@given(language_and_utterance(), seeds)
def test_a_drop_never_takes_the_whole_utterance(spoken: tuple[str, str], seed: int) -> None:
    language, text = spoken
    heard = distort(text, 1.0, language, seed)
    fillers = sum(edit.kind == "filler" for edit in heard.edits)
    assert len(split_words(heard.heard).words) > fillers


@SLOW_FIRST
@given(language_and_utterance(), levels, seeds)
def test_edits_name_said_and_heard_text_in_order(
    spoken: tuple[str, str], level: float, seed: int
) -> None:
    language, text = spoken
    heard = distort(text, level, language, seed)
    said_words = split_words(text).words
    positions = [edit.position for edit in heard.edits]
    assert positions == sorted(positions)
    for edit in heard.edits:
        assert edit.to in heard.heard
        if edit.kind == "filler":
            assert (edit.position, edit.from_) == (0, "")
            assert heard.heard.startswith(edit.to + " ")
        else:
            assert edit.from_ in text
            assert split_words(edit.from_).words[0] == said_words[edit.position]
        assert (edit.to == "") == (edit.kind == "drop")


@SLOW_FIRST
@given(language_and_utterance(), st.floats(0, 1), st.floats(0, 1), seeds)
def test_a_higher_level_changes_every_word_a_lower_one_changed(
    spoken: tuple[str, str], a: float, b: float, seed: int
) -> None:
    language, text = spoken
    low, high = sorted((a, b))
    quiet = distort(text, low, language, seed).edits
    loud = distort(text, high, language, seed).edits
    assert {e.position for e in quiet if e.kind != "filler"} <= {
        e.position for e in loud if e.kind != "filler"
    }
    assert any(e.kind == "filler" for e in quiet) <= any(e.kind == "filler" for e in loud)


def _written(number: int, language: str) -> str:
    from num2words import num2words

    return croatian_number(number) if language == "hr" else str(num2words(number, lang=language))


@SLOW_FIRST
@given(st.integers(min_value=10, max_value=999_999), languages, seeds)
def test_number_words_read_digit_by_digit_are_the_same_number(
    number: int, language: str, seed: int
) -> None:
    text = _written(number, language)
    digits = [e for e in distort(text, 1.0, language, seed).edits if e.kind == "digits"]
    assert len(digits) == 1
    assert digits[0].from_ == text
    assert read_digits(digits[0].to, language) == str(number)


@SLOW_FIRST
@given(st.from_regex(r"[0-9]{2,12}", fullmatch=True), languages, seeds)
def test_digits_read_one_by_one_are_the_same_digits(number: str, language: str, seed: int) -> None:
    digits = [e for e in distort(number, 1.0, language, seed).edits if e.kind == "digits"]
    assert len(digits) == 1
    assert read_digits(digits[0].to, language) == number  # leading zeros too


@given(st.sampled_from(["", "   ", "...", "?! —"]), languages, levels, seeds)
def test_an_utterance_without_words_is_left_alone(
    text: str, language: str, level: float, seed: int
) -> None:
    assert distort(text, level, language, seed).heard == text
