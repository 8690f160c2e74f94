"""The conversation checks: forbidden phrases, invalid arguments, loops, counts, latency."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.checks.phrases import contains_phrase, is_repeat_request
from polygon_voice.conversation import reply_overlap
from polygon_voice.model import Action, CallStatus, EndReason, Event, Say
from tests.conversation.conftest import RunCall, script
from tests.judge.calls import call, conversation, good_call, turns


@pytest.mark.parametrize(
    ("text", "phrase", "found"),
    [
        ("I GUARANTEE it arrives.", "i guarantee", True),
        ("Das ist garantiert!", "Garantíert", True),  # diacritics ignored
        ("Želim vam dobar dan", "zelim", True),
        ("I know the answer", "no", False),  # word boundaries
        ("No, that's wrong", "no", True),
        ("We can refund-you now", "refund you", True),  # punctuation is a gap
    ],
)
def test_forbidden_phrases_ignore_case_and_diacritics_on_word_boundaries(
    text: str, phrase: str, found: bool
) -> None:
    assert contains_phrase(text, phrase) is found


def test_forbidden_phrases_name_the_agent_turn_only() -> None:
    lines = turns(("caller", "Do you guarantee it?"), ("agent", "Yes, I guarantee it."))
    checks = check_conversation(conversation(lines), ["I guarantee"])
    assert [(h.phrase, h.turn) for h in checks.forbidden_phrases] == [("I guarantee", 1)]


@pytest.mark.parametrize(
    "text",
    ["Sorry, could you repeat that?", "Können Sie das wiederholen?", "Molim, ponovite.",
     "Повторите, пожалуйста.", "I didn't catch that."],
)  # fmt: skip
def test_repeat_requests_in_four_languages(text: str) -> None:
    assert is_repeat_request(text)


def test_please_in_croatian_is_not_a_repeat_request() -> None:
    assert not is_repeat_request("Molim vas, recite mi broj narudžbe.")


def test_invalid_args_answered_after_the_outcome() -> None:
    lines = turns(("caller", "Set it to minus one."), ("agent", "OK, done."))
    bad = call("c1", {"quantity": -1}, at=1.0, status=CallStatus.FAILED, valid=False)
    checks = check_conversation(conversation(lines, calls=[bad]))
    assert checks.invalid_tool_args[0].answered
    assert checks.invalid_tool_args[0].turn == 1


def test_invalid_args_not_answered_when_never_sent_or_no_speech_after() -> None:
    lines = turns(("caller", "Set it to minus one."), ("agent", "OK."))
    late = call("c1", {"quantity": -1}, at=9.0, status=CallStatus.FAILED, valid=False)
    checks = check_conversation(conversation(lines, calls=[late]))
    assert not checks.invalid_tool_args[0].answered


def test_counts_and_latency() -> None:
    result = good_call()
    result.turns[2].interrupted = True
    result.turns[4].barge_in = True
    checks = check_conversation(result)
    assert (checks.turns, checks.agent_turns) == (6, 4)
    assert (checks.interrupted_agent_turns, checks.barge_ins) == (1, 1)
    assert checks.response_delay_mean == 0.5
    assert checks.response_delay_max == 0.5
    assert checks.wer == 0.0
    assert not checks.loop_detected


def test_loop_threshold_89_vs_90_percent() -> None:
    ten = "one two three four five six seven eight nine ten"
    assert reply_overlap(ten, "one two three four five six seven eight nine") == 0.9
    many = " ".join(f"w{i}" for i in range(100))
    eighty_nine = " ".join(f"w{i}" for i in range(89))
    assert reply_overlap(many, eighty_nine) == pytest.approx(0.89)


class _Repeater:
    def __init__(self, replies: list[str]) -> None:
        self.replies = iter(replies)
        self.count = 0

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        # After the replies under test, distinct ones: they must not make a loop of their own.
        self.count += 1
        yield Say(text=next(self.replies, f"Anything {self.count} else {self.count * 7}?"))


_TEN = "one two three four five six seven eight nine ten"
_HUNDRED = " ".join(f"w{i}" for i in range(100))


@pytest.mark.parametrize(
    ("replies", "looped"),
    [
        (["Yes.", "Yes!"], True),  # the one-word case
        ([_TEN, "one two three four five six seven eight nine zzz"], True),  # 90 %
        ([_HUNDRED, " ".join(f"w{i}" for i in range(89)) + " " + " ".join("x" * 11)], False),
    ],
)
async def test_engine_loop_detection_shows_in_the_checks(
    run_call: RunCall, replies: list[str], looped: bool
) -> None:
    result = await run_call(_Repeater(replies), script({"say": "a"}, {"say": "b"}, {"say": "c"}))
    assert (result.end.reason is EndReason.LOOP_DETECTED) is looped
    assert check_conversation(result).loop_detected is looped
