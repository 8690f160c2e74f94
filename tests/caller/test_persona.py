"""The persona caller: type traits, facts, endings, difficulty and determinism, observed
in whole calls through the real engine against small hand-written agents."""

from __future__ import annotations

import random
import re
from statistics import mean

import pytest

from polygon_voice.caller.factory import CallerContext, make_caller
from polygon_voice.caller.persona import PersonaCaller
from polygon_voice.caller.phrases import EN, UnsupportedCallerLanguage
from polygon_voice.caller.scripted import ScriptedCaller
from polygon_voice.caller.traits import traits_for
from polygon_voice.model import (
    BargeInStep,
    CallStatus,
    EndReason,
    Outcome,
    PersonaType,
    Scenario,
    Speaker,
)
from tests.caller.agents import (
    LINES,
    LOOKUP_TOOL,
    UPDATE_TOOL,
    FormAgent,
    NoddingAgent,
    QuestionAgent,
    RepeatingAgent,
    ScriptAgent,
    SlowAgent,
    UpdatingAgent,
)
from tests.caller.conftest import call, caller_lines, persona, said_any

SEEDS = range(20)
VALUES = ("5590", "3")
# A caller's last words usually say goodbye, so the agent may hang up before the caller does.
HANG_UPS = (EndReason.CALLER_HANGUP, EndReason.AGENT_HANGUP)


def states(text: str, value: str) -> bool:
    """Whether the caller said this fact value (as a whole number)."""
    return re.search(rf"(?<![\d-]){re.escape(value)}(?![\d-])", text) is not None


def mean_words(kind: PersonaType, difficulty: int = 2) -> float:
    lines = [
        line
        for seed in SEEDS
        for line in caller_lines(
            call(FormAgent(), persona(type=kind, difficulty=difficulty), seed=seed)
        )
    ]
    return mean(len(line.split()) for line in lines)


def barge_ins(kind: PersonaType, difficulty: int) -> int:
    calls = [call(FormAgent(), persona(type=kind, difficulty=difficulty), seed=s) for s in SEEDS]
    return sum(turn.barge_in for result in calls for turn in result.turns)


# --- the six types ---------------------------------------------------------------------


def test_busy_callers_say_least_and_chatty_callers_most() -> None:
    busy = mean_words(PersonaType.BUSY)
    cooperative = mean_words(PersonaType.COOPERATIVE)
    chatty = mean_words(PersonaType.CHATTY)
    assert busy < cooperative < chatty
    assert chatty > 3 * busy  # visibly different, not by a hair


@pytest.mark.parametrize("seed", range(8))
def test_the_distrustful_caller_asks_who_it_is_talking_to_and_waits_for_an_answer(
    seed: int,
) -> None:
    result = call(FormAgent(), persona(type="distrustful", difficulty=3), seed=seed)
    turns = result.turns
    assert turns[1].speaker is Speaker.CALLER
    assert said_any(turns[1].text, EN.who_are_you)
    identified = next(t.index for t in turns if t.text == LINES["en"]["identify"])
    before = [t.text for t in turns[:identified] if t.speaker is Speaker.CALLER]
    assert not any(states(text, value) for text in before for value in VALUES)
    assert result.end.reason is EndReason.AGENT_HANGUP  # and then it gets it done


@pytest.mark.parametrize("seed", range(5))
def test_the_distrustful_caller_gives_an_unidentified_agent_nothing_and_hangs_up(
    seed: int,
) -> None:
    result = call(FormAgent(identify=False), persona(type="distrustful"), seed=seed)
    lines = caller_lines(result)
    assert not any(states(line, value) for line in lines for value in VALUES)
    assert any(said_any(line, EN.withhold) for line in lines)
    assert said_any(lines[-1], EN.give_up)
    assert result.end.reason in HANG_UPS


@pytest.mark.parametrize("seed", range(8))
def test_the_confused_caller_asks_again_then_answers(seed: int) -> None:
    lines = caller_lines(call(FormAgent(), persona(type="confused", difficulty=2), seed=seed))
    asked_back = next(i for i, line in enumerate(lines) if said_any(line, EN.clarify))
    assert states(lines[asked_back + 1], "5590")  # the agent asked again; now it answers


def test_the_confused_caller_gives_its_facts_out_of_order() -> None:
    def quantity_first(kind: str, seed: int) -> bool:
        text = " ".join(caller_lines(call(FormAgent(), persona(type=kind, goal=""), seed=seed)))
        return text.index(" 3") < text.index("5590")

    assert all(quantity_first("confused", seed) for seed in SEEDS)
    assert not any(quantity_first("cooperative", seed) for seed in SEEDS)


def test_the_aggressive_caller_talks_over_the_agent_and_the_cooperative_one_does_not() -> None:
    assert barge_ins(PersonaType.COOPERATIVE, 3) == 0
    assert barge_ins(PersonaType.AGGRESSIVE, 3) >= len(SEEDS) // 2
    assert barge_ins(PersonaType.AGGRESSIVE, 5) > 3 * barge_ins(PersonaType.COOPERATIVE, 5)


def test_the_aggressive_caller_is_hostile() -> None:
    lines = [
        line
        for seed in SEEDS
        for line in caller_lines(call(FormAgent(), persona(type="aggressive"), seed=seed))
    ]
    hostile = [line for line in lines if said_any(line, (*EN.hostile, *EN.aggressive_open))]
    assert len(hostile) >= len(SEEDS)


def test_the_chatty_caller_digresses_and_the_busy_caller_does_not() -> None:
    def digressions(kind: str) -> int:
        calls = [call(FormAgent(), persona(type=kind), seed=seed) for seed in SEEDS]
        return sum(said_any(line, EN.digressions) for c in calls for line in caller_lines(c))

    assert digressions("chatty") >= len(SEEDS)
    assert digressions("busy") == 0


def test_the_busy_caller_hangs_up_on_a_slow_agent_where_a_cooperative_one_waits() -> None:
    busy = call(SlowAgent(), persona(type="busy", difficulty=3), tools=LOOKUP_TOOL)
    assert busy.end.reason in HANG_UPS
    lines = caller_lines(busy)
    assert said_any(lines[-1], EN.give_up)
    assert any(said_any(line, EN.impatient) for line in lines)
    patient = call(SlowAgent(), persona(type="cooperative", difficulty=3), tools=LOOKUP_TOOL)
    assert patient.end.reason is EndReason.AGENT_HANGUP
    assert not any(said_any(line, EN.give_up) for line in caller_lines(patient))


def test_the_busy_caller_hangs_up_on_an_agent_that_keeps_asking_the_same() -> None:
    result = call(RepeatingAgent(), persona(type="busy", difficulty=1))
    lines = caller_lines(result)
    assert any(said_any(line, EN.already_said) for line in lines)
    assert said_any(lines[-1], EN.give_up)
    assert result.end.reason is EndReason.CALLER_HANGUP
    assert len(lines) <= 1 + traits_for(PersonaType.BUSY, 1).patience


# --- facts (SIM-1) -----------------------------------------------------------------------

FACTS = {"order_id": "5590", "quantity": 3, "customer_id": "C-8812"}


@pytest.mark.parametrize("seed", range(10))
def test_a_question_about_a_known_fact_gets_exactly_that_fact(seed: int) -> None:
    agent = QuestionAgent(["What is your customer number?", "And your postcode?"])
    who = persona(facts=FACTS, difficulty=2)  # opening: order and quantity; not the customer
    lines = caller_lines(call(agent, who, seed=seed))
    assert "C-8812" not in lines[0]
    assert "C-8812" in lines[1]
    assert not states(lines[1], "5590")
    assert not states(lines[1], "3")
    assert said_any(lines[2], EN.dont_know)
    assert not re.search(r"\d", lines[2])


def test_personal_data_it_does_not_have_is_declined_not_invented() -> None:
    lines = caller_lines(call(QuestionAgent(["Can I have your email address?"]), persona()))
    assert said_any(lines[1], EN.private)


def test_a_wrong_read_back_is_corrected_with_the_true_fact() -> None:
    agent = ScriptAgent(["Hello.", "So that's order 5599, correct?", "Thanks."])
    for seed in range(5):
        lines = caller_lines(call(agent_copy(agent), persona(), seed=seed))
        assert said_any(lines[1], EN.no_wrong)
        assert states(lines[1], "5590")
        assert "5599" not in lines[1]


def test_a_right_read_back_is_confirmed() -> None:
    agent = ScriptAgent(["Hello.", "So that's order 5590 with 3 pieces, correct?", "Thanks."])
    lines = caller_lines(call(agent, persona()))
    assert said_any(lines[1], EN.yes)


def agent_copy(agent: ScriptAgent) -> ScriptAgent:
    return ScriptAgent(list(agent.lines))


# --- endings -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(PersonaType))
def test_success_accepts_and_says_goodbye_once_the_agent_reports_it_done(
    kind: PersonaType,
) -> None:
    for seed in range(3):
        result = call(FormAgent(), persona(type=kind, intended_outcome="success"), seed=seed)
        done = next(t.index for t in result.turns if t.text.startswith("Done:"))
        last = max(t.index for t in result.turns if t.speaker is Speaker.CALLER)
        assert last > done
        assert said_any(result.turns[last].text, (*EN.thanks_bye, *EN.bye))
        assert result.end.reason is EndReason.AGENT_HANGUP


@pytest.mark.parametrize("kind", list(PersonaType))
def test_refusal_declines_the_proposal_and_ends(kind: PersonaType) -> None:
    for seed in range(3):
        result = call(FormAgent(), persona(type=kind, intended_outcome="refusal"), seed=seed)
        assert said_any(caller_lines(result)[-1], EN.refuse)
        assert not any(t.text.startswith("Done:") for t in result.turns)
        assert result.end.reason is EndReason.AGENT_HANGUP


@pytest.mark.parametrize("kind", list(PersonaType))
def test_callback_asks_to_be_called_back_and_ends(kind: PersonaType) -> None:
    for seed in range(3):
        result = call(FormAgent(), persona(type=kind, intended_outcome="callback"), seed=seed)
        assert said_any(caller_lines(result)[-1], EN.callback)
        assert result.turns[-1].text == LINES["en"]["callback"]


@pytest.mark.parametrize("kind", list(PersonaType))
def test_transfer_asks_for_a_human(kind: PersonaType) -> None:
    for seed in range(3):
        result = call(FormAgent(), persona(type=kind, intended_outcome="transfer"), seed=seed)
        assert said_any(caller_lines(result)[-1], EN.transfer)
        assert result.end.reason is EndReason.TRANSFERRED


def test_a_callback_caller_leaves_its_number_when_it_has_one() -> None:
    who = persona(intended_outcome="callback", facts={**FACTS, "phone": "0171 5550199"})
    assert "0171 5550199" in caller_lines(call(FormAgent(), who))[-1]


def test_a_transfer_caller_insists_then_gives_up_when_nobody_puts_it_through() -> None:
    result = call(NoddingAgent(), persona(intended_outcome="transfer"))
    lines = caller_lines(result)
    assert said_any(lines[-3], EN.transfer)
    assert said_any(lines[-2], EN.transfer_again)
    assert said_any(lines[-1], EN.give_up)
    assert result.end.reason is EndReason.CALLER_HANGUP


def test_a_caller_hangs_up_after_its_turn_budget() -> None:
    for kind in PersonaType:
        result = call(NoddingAgent(), persona(type=kind, intended_outcome="success"))
        assert result.end.reason is EndReason.CALLER_HANGUP
        assert len(caller_lines(result)) <= traits_for(kind, 1).budget


# --- difficulty ----------------------------------------------------------------------------


def test_harder_callers_give_fewer_facts_up_front() -> None:
    def up_front(difficulty: int) -> int:
        openings = [
            caller_lines(call(FormAgent(), persona(difficulty=difficulty), seed=seed))[0]
            for seed in SEEDS
        ]
        return sum(states(line, value) for line in openings for value in VALUES)

    assert up_front(1) == 2 * len(SEEDS)
    assert up_front(1) > up_front(3) > up_front(5) == 0


def test_harder_callers_interrupt_more() -> None:
    for kind in (PersonaType.AGGRESSIVE, PersonaType.COOPERATIVE):
        assert barge_ins(kind, 5) > barge_ins(kind, 1)


def test_harder_callers_wander_off_and_mix_facts_up_more() -> None:
    def count(kind: str, difficulty: int, lines: tuple[str, ...]) -> int:
        calls = [
            call(FormAgent(), persona(type=kind, difficulty=difficulty), seed=s) for s in SEEDS
        ]
        return sum(said_any(line, lines) for c in calls for line in caller_lines(c))

    assert count("cooperative", 1, EN.digressions) == 0 < count("cooperative", 5, EN.digressions)
    assert count("confused", 1, EN.mixup_fix) < count("confused", 5, EN.mixup_fix)


# --- determinism -----------------------------------------------------------------------


def transcript(seed: int, kind: str = "chatty") -> list[str]:
    return [t.text for t in call(FormAgent(), persona(type=kind, difficulty=4), seed=seed).turns]


def test_the_same_seed_gives_the_same_call_and_other_seeds_other_calls() -> None:
    assert transcript(3) == transcript(3)
    assert len({tuple(transcript(seed)) for seed in range(6)}) > 3


def test_the_global_random_state_plays_no_part() -> None:
    random.seed(1)
    first = transcript(5, "aggressive")
    random.seed(2)
    assert transcript(5, "aggressive") == first


# --- scripted events and the factory ----------------------------------------------------

CORRECTION = BargeInStep(at="during_tool_prep", say="Sorry, I meant order 5599.")


def test_scripted_events_fire_at_their_points() -> None:
    result = call(UpdatingAgent(), persona(), events=[CORRECTION], tools=UPDATE_TOOL)
    cut_in = [t for t in result.turns if t.barge_in]
    assert [t.text for t in cut_in] == ["Sorry, I meant order 5599."]
    barge = next(e for e in result.trace if e.kind == "barge_in")
    assert barge.data["point"] == "during_tool_prep"
    assert result.tool_calls[0].status is CallStatus.PREPARED  # never sent: the caller cut in


def scenario(caller: str, script: list[dict[str, object]]) -> Scenario:
    return Scenario.model_validate(
        {"id": "s", "caller": caller, "persona": {"type": "chatty"}, "script": script}
    )


def test_the_factory_gives_persona_scenarios_the_persona_caller_with_the_scripts_barge_ins() -> (
    None
):
    script = [{"say": "Order 5590."}, {"barge_in": {"at": "during_tool_prep", "say": "No!"}}]
    context = CallerContext(conversation_id="c", language="en", seed=1)
    persona_caller = make_caller(scenario("persona", script), context)
    assert isinstance(persona_caller, PersonaCaller)
    assert [step.say for step in persona_caller.unfired()] == ["No!"]
    assert isinstance(make_caller(scenario("scripted", script), context), ScriptedCaller)
    assert isinstance(make_caller(scenario("auto", script), context), ScriptedCaller)
    assert isinstance(make_caller(scenario("auto", []), context), PersonaCaller)


def test_a_language_without_phrase_tables_is_refused() -> None:
    with pytest.raises(UnsupportedCallerLanguage, match="en, de, hr, ru"):
        PersonaCaller(persona(), "fr", 1)


def test_an_outcome_of_every_kind_ends_within_the_budget() -> None:
    for outcome in Outcome:
        for kind in PersonaType:
            result = call(FormAgent(), persona(type=kind, intended_outcome=outcome, difficulty=5))
            assert result.end.reason is not EndReason.TURN_LIMIT
