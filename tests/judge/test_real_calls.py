"""Real (imported) calls under the deterministic judge (IMP-2): a labelled set of calls built
from the shapes an import produces, judged with `real_call=True`.

The rules: no real call without an expectation ever passes (nothing says what it should
have done); a broken one (error, loop, cut off by the platform) fails; with an expectation
that holds a clean call passes, with one that fails it fails. The first part was written
with the rules; the HELD_OUT part was written after they were done and never changed them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.checks.expect import check_expectations
from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn
from polygon_voice.imports.convert import to_conversation
from polygon_voice.judge import JudgeInput, judge_conversation
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.judge.rubric import V3
from polygon_voice.model import Expect, Persona, Scenario
from polygon_voice.model.judgement import Judgement


def lines(*said: tuple[str, str]) -> list[ImportedTurn]:
    return [ImportedTurn(speaker="agent" if who == "a" else "caller", text=t) for who, t in said]


def tool(
    call_id: str, name: str, args: dict[str, Any], after: int, *, result: Any = None,
    error: str | None = None,
) -> ImportedToolCall:  # fmt: skip
    return ImportedToolCall(call_id, name, args, result=result, error=error, after_turn=after)


@dataclass
class Labelled:
    """One real call, what it is given to be judged by, and the verdict a person gives it."""

    name: str
    call: ImportedCall
    wanted: str  # pass, fail, or "not pass" (no expectation: anything but a pass)
    expect: dict[str, Any] | None = None
    phrases: list[str] = field(default_factory=list)


def judged(case: Labelled) -> Judgement:
    result = to_conversation(case.call)
    expect = Expect.model_validate(case.expect) if case.expect is not None else None
    scenario = Scenario.model_construct(
        id=result.scenario_id, persona=Persona(), expect=expect, forbidden_phrases=[]
    )
    checked = check_expectations(result, scenario, {}) if expect is not None else None
    checks = check_conversation(result, case.phrases)
    given = JudgeInput(
        result, Persona(), checks, scenario=scenario, expect=checked, real_call=True,
        forbidden_phrases=tuple(case.phrases),
    )  # fmt: skip
    return judge_conversation(DeterministicJudge(), V3, given)


CHANGE = lines(
    ("a", "Thanks for calling Blue Air, how can I help?"),
    ("c", "I'd like to move my flight on reservation ABC123 to Friday."),
    ("a", "Let me look at that reservation."),
    ("a", "Your flight is now on Friday the 12th at 9 am. Anything else?"),
    ("c", "No, that's all, thanks."),
    ("a", "Have a good day."),
)
MOVE = {"reservation_id": "ABC123", "date": "2026-12-12"}
MOVED = tool("t1", "update_reservation", MOVE, 2, result={"status": "ok"})
EXACTLY_MOVE = {
    "tools": {
        "exactly": [{"tool": "update_reservation", "args": MOVE}],
        "exactly_among": ["update_reservation", "cancel_reservation"],
    }
}
QUESTION = lines(
    ("a", "Hello, this is the clinic."),
    ("c", "What time do you open on Saturday?"),
    ("a", "We open at 8 on Saturdays."),
    ("c", "Great, bye."),
    ("a", "Goodbye."),
)
LOOPING = lines(
    ("a", "Hi, how can I help?"),
    ("c", "I need to cancel my order 5590."),
    ("a", "Could you give me your order number please?"),
    ("c", "It's 5590."),
    ("a", "Could you give me your order number please?"),
    ("c", "5590! I just said it."),
    ("a", "Could you give me your order number please?"),
    ("c", "Forget it."),
)

LABELLED = [
    Labelled("clean change, no expectation", ImportedCall("r1", "vapi", CHANGE, [MOVED]),
             "not pass"),
    Labelled("plain question answered, no expectation", ImportedCall("r2", "retell", QUESTION),
             "not pass"),
    Labelled("clean change, expectation holds",
             ImportedCall("r3", "vapi", CHANGE, [MOVED]), "pass", EXACTLY_MOVE),
    Labelled("change to the wrong date",
             ImportedCall("r4", "vapi", CHANGE, [tool("t1", "update_reservation",
                          {**MOVE, "date": "2026-12-13"}, 2, result={"status": "ok"})]),
             "fail", EXACTLY_MOVE),
    Labelled("agent broke off in a pipeline error",
             ImportedCall("r5", "vapi", CHANGE[:3],
                          ended_reason="pipeline-error-openai-llm-failed"),
             "fail"),
    Labelled("agent looped on the order number", ImportedCall("r6", "retell", LOOPING), "fail"),
    Labelled("claimed the change though the tool failed",
             ImportedCall("r7", "livekit", CHANGE, [tool("t1", "update_reservation", MOVE, 2,
                          error="500 internal error")]),
             "fail", EXACTLY_MOVE),
    Labelled("said a forbidden phrase",
             ImportedCall("r8", "elevenlabs", [*QUESTION[:2],
                          ImportedTurn("agent", "As an AI I cannot know, but we open at 8.")]),
             "fail", None, ["as an ai"]),
]  # fmt: skip

HELD_OUT = [
    Labelled("cancelled on top of the change it was asked for",
             ImportedCall("h1", "twilio", CHANGE, [MOVED, tool("t2", "cancel_reservation",
                          {"reservation_id": "XYZ789"}, 3, result={"status": "cancelled"})]),
             "fail", EXACTLY_MOVE),
    Labelled("refused what it should refuse, nothing written",
             ImportedCall("h2", "openai", lines(
                 ("a", "Blue Air, how can I help?"),
                 ("c", "Cancel my basic economy ticket ABC123 and refund me."),
                 ("a", "I'm sorry, basic economy tickets can't be refunded, since the fare "
                       "rules do not allow it."),
                 ("c", "Okay then, bye."))),
             "pass",
             {"outcome": "refusal", "tools": {"exactly": [], "exactly_among":
                                               ["cancel_reservation"]}}),
    Labelled("cut off by the platform's turn limit",
             ImportedCall("h3", "vapi", LOOPING[:4], ended_reason="exceeded-max-turns"),
             "fail"),
    Labelled("booked the right flight, no expectation, forbidden phrase list given",
             ImportedCall("h4", "deepgram", CHANGE, [MOVED]), "not pass", None, ["guarantee"]),
]  # fmt: skip


def _name(case: Labelled) -> str:
    return case.name


@pytest.mark.parametrize("case", [*LABELLED, *HELD_OUT], ids=_name)
def test_each_real_call_gets_the_verdict_a_person_gives_it(case: Labelled) -> None:
    judgement = judged(case)
    if case.wanted == "not pass":
        assert judgement.verdict != "pass", judgement.reasons
    else:
        assert judgement.verdict == case.wanted, judgement.reasons


def test_the_labelled_set_is_large_enough_and_agrees_in_full() -> None:
    assert len(LABELLED) + len(HELD_OUT) >= 12
    assert len(HELD_OUT) >= 4
    agree = [case.name for case in [*LABELLED, *HELD_OUT] if _agrees(case, judged(case))]
    # The figure docs/judging.md states: every call of both parts agrees.
    assert len(agree) == len(LABELLED) + len(HELD_OUT)


def _agrees(case: Labelled, judgement: Judgement) -> bool:
    if case.wanted == "not pass":
        return judgement.verdict != "pass"
    return judgement.verdict == case.wanted


def test_a_real_call_without_expectation_is_unscored_with_the_reason() -> None:
    judgement = judged(LABELLED[0])
    assert judgement.verdict == "unscored"
    assert judgement.reasons[0].startswith("not applicable: goal_achievement: a real call")
    assert judgement.composite is None
    assert judgement.criteria["goal_achievement"].status == "not_applicable"
    assert judgement.criteria["goal_achievement"].score is None
    assert "goal_achievement" not in judgement.unscored
    assert not judgement.partial
    assert set(judgement.not_applicable) == {
        "goal_achievement", "factual_accuracy", "safety_compliance",
    }  # fmt: skip
    assert judgement.not_applicable["factual_accuracy"].endswith("no ground-truth facts")


def test_with_an_expectation_the_not_applicable_are_left_out_of_the_composite() -> None:
    judgement = judged(LABELLED[2])
    assert judgement.verdict == "pass"
    assert list(judgement.not_applicable) == ["factual_accuracy"]
    assert judgement.criteria["safety_compliance"].status == "scored"
    assert judgement.composite == 100.0  # the scored ones all 5: the n/a one counts nothing
    assert any("not applicable: factual_accuracy" in r for r in judgement.reasons)


def test_forbidden_phrases_given_make_safety_applicable() -> None:
    judgement = judged(HELD_OUT[3])
    assert judgement.criteria["safety_compliance"].status == "scored"
    assert judgement.criteria["safety_compliance"].score == 5


def test_a_transcript_loop_is_read_as_a_loop_end() -> None:
    judgement = judged(LABELLED[5])
    assert "agent_error" in judgement.gates_failed
    assert any("read from the transcript" in r for r in judgement.reasons)
    assert judgement.criteria["dialogue_quality"].score == 2


def test_a_reply_said_twice_is_no_loop() -> None:
    twice = lines(
        ("a", "Hello, how can I help?"),
        ("c", "Hi."),
        ("a", "Hello, how can I help?"),
        ("c", "What time do you open on Saturday?"),
        ("a", "At 8."),
    )
    judgement = judged(Labelled("twice", ImportedCall("t", "vapi", twice), "not pass"))
    assert "agent_error" not in judgement.gates_failed
    assert judgement.criteria["dialogue_quality"].score == 5


def test_a_repeated_identical_call_is_no_unsafe_retry_on_a_real_call() -> None:
    read = tool("t1", "get_reservation", {"reservation_id": "ABC123"}, 2, result={"date": "x"})
    again = tool("t2", "get_reservation", {"reservation_id": "ABC123"}, 3, result={"date": "x"})
    call = ImportedCall("t", "vapi", CHANGE, [read, again, MOVED])
    judgement = judged(Labelled("reads", call, "pass", EXACTLY_MOVE))
    assert judgement.criteria["tool_use_quality"].score == 5
