"""The word error rate between said and heard text, per utterance and per conversation."""

from __future__ import annotations

import pytest

from polygon_voice.model import CallEnd, ConversationResult, EndReason, Speaker, Turn
from polygon_voice.noise import caller_wer, distort, word_error_rate


@pytest.mark.parametrize(
    ("said", "heard", "wer"),
    [
        ("my code is 5590", "my code is 5590", 0.0),
        ("Hello, my code is 5590.", "hello my code is 5590", 0.0),  # case and punctuation
        ("my code is 5590", "my coat is 5590", 0.25),
        ("my code is 5590", "um... my code is 5590", 0.25),
        ("my code is 5590", "my is 5590", 0.25),
        ("my code is 5590", "my code is five five nine zero", 1.0),  # 1 substituted + 3 added
        ("Мой код — пятьдесят.", "мой кот пятьдесят", 0.3333),
        ("Grüße, Straße!", "grüße strasse", 0.5),
        ("", "um", 1.0),  # nothing said: the number of words heard
        ("...", "", 0.0),
    ],
)
def test_word_error_rate(said: str, heard: str, wer: float) -> None:
    assert word_error_rate([said], [heard]) == wer


def test_several_utterances_pool_their_words() -> None:
    # 1 error over 4 + 2 said words, not the mean of 0.25 and 0.
    assert word_error_rate(["a b c d", "e f"], ["a b x d", "e f"]) == round(1 / 6, 4)


def test_the_record_of_an_utterance_carries_its_rate() -> None:
    heard = distort("My code is 5590.", 1.0, "en", 3)
    assert heard.wer == word_error_rate([heard.said], [heard.heard]) > 0


def turn(index: int, speaker: Speaker, text: str, heard: str) -> Turn:
    return Turn(index=index, speaker=speaker, text=text, heard=heard, start=index, end=index + 1)


def conversation(turns: list[Turn]) -> ConversationResult:
    return ConversationResult(
        id="c",
        scenario_id="c",
        seed=0,
        language="en",
        end=CallEnd(reason=EndReason.CALLER_HANGUP, time=9.0),
        turns=turns,
        tool_calls=[],
        state_updates=[],
        backend_writes=[],
        trace=[],
    )


def test_a_conversation_rate_counts_caller_turns_only() -> None:
    result = conversation(
        [
            turn(0, Speaker.AGENT, "Hello there, how can I help?", "Hello"),  # cut: not noise
            turn(1, Speaker.CALLER, "my code is 5590", "my coat is 5590"),
            turn(2, Speaker.CALLER, "thanks bye", "thanks bye"),
        ]
    )
    assert caller_wer(result) == round(1 / 6, 4)


def test_a_clear_line_has_rate_zero_and_no_caller_no_rate() -> None:
    clear = conversation([turn(0, Speaker.CALLER, "hi", "hi")])
    silent = conversation([turn(0, Speaker.AGENT, "Hello?", "Hello?")])
    assert caller_wer(clear) == 0.0
    assert caller_wer(silent) is None
