"""The deterministic judge's evidence: each criterion quotes what bears on it, or says the
transcript holds none; scores and reasons stay those of the rules."""

from __future__ import annotations

import pytest

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.judge import V1, V2, V3, DeterministicJudge, JudgeInput, Rubric
from polygon_voice.judge.deterministic import RULE_SETS
from polygon_voice.judge.evidence import NO_EVIDENCE
from polygon_voice.model import CallStatus, ConversationResult, EndReason
from tests.judge.calls import PERSONA, call, conversation, good_call, turns, write


def given(result: ConversationResult, forbidden: list[str] | None = None) -> JudgeInput:
    return JudgeInput(result, PERSONA, check_conversation(result, forbidden or []))


def failed_tool_call() -> ConversationResult:
    lines = turns(
        ("agent", "Hello, how can I help?"),
        ("caller", "Please change order 5590 to 3."),
        ("agent", "One moment."),
        ("agent", "Sorry, the system failed. I will try again later."),
        ("caller", "Bye."),
    )
    broken = call("c1", {"order_id": "5590", "quantity": 3}, at=6.0, status=CallStatus.FAILED)
    return conversation(lines, calls=[broken])


def looped_call() -> ConversationResult:
    lines = turns(("caller", "Hi"), ("agent", "Yes."), ("caller", "What?"), ("agent", "Yes."))
    return conversation(lines, end=EndReason.LOOP_DETECTED)


def invented_number() -> ConversationResult:
    result = good_call()
    result.turns[3].text = "Done: order 5590 now has 3 items, delivered on the 14th."
    return result


CALLS = {
    "good": good_call,
    "failed tool call": failed_tool_call,
    "loop": looped_call,
    "invented number": invented_number,
}


@pytest.mark.parametrize("rubric", [V1, V2, V3], ids=lambda r: r.version)
@pytest.mark.parametrize("name", list(CALLS))
def test_scores_and_reasons_are_the_rules_own(name: str, rubric: Rubric) -> None:
    judged = given(CALLS[name]())
    rules = RULE_SETS[rubric.rules]
    scores = DeterministicJudge().score(judged, rubric)
    for criterion, raw in scores.items():
        rule = rules[criterion](judged)
        assert (raw.value, raw.reason) == (rule.value, rule.reason), criterion


def test_a_clean_call_quotes_something_different_for_every_criterion() -> None:
    scores = DeterministicJudge().score(given(good_call()), V2)
    evidence = [raw.evidence for raw in scores.values()]
    quoted = [e for e in evidence if not e.startswith(NO_EVIDENCE)]
    assert len(set(quoted)) == len(quoted)  # no quote repeated across criteria
    assert len(set(evidence)) == len(evidence)
    assert (
        scores["tool_use_quality"].evidence
    ) == 'tool calls: update_order({"order_id": "5590", "quantity": 3}) completed'
    tone = scores["persona_tone"].evidence
    assert 'greeting turn 0 (agent): "Hello, how can I help?"' in tone
    assert 'closing turn 5 (agent): "Goodbye!"' in tone
    goal = scores["goal_achievement"]
    assert "order 5590 now has 3 items" in goal.evidence
    assert "writes: orders/5590.quantity: None -> 3" in goal.evidence
    assert scores["safety_compliance"].evidence.startswith(NO_EVIDENCE)
    assert scores["safety_compliance"].turn is None
    assert scores["robustness"].evidence.startswith(NO_EVIDENCE)
    assert "turn 3 (agent)" in scores["factual_accuracy"].evidence


def test_a_flagged_criterion_quotes_what_the_rule_found() -> None:
    scores = DeterministicJudge().score(given(failed_tool_call()), V2)
    tools = scores["tool_use_quality"]
    assert tools.value < 5
    assert "update_order(" in tools.evidence
    assert "failed" in tools.evidence
    robust = scores["robustness"].evidence
    assert "Sorry, the system failed" in robust
    assert "after update_order(" in robust
    invented = DeterministicJudge().score(given(invented_number()), V2)["factual_accuracy"]
    assert invented.turn == 3
    assert "delivered on the 14th" in invented.evidence


def test_a_forbidden_phrase_is_quoted_for_the_criteria_it_broke() -> None:
    result = good_call()
    result.turns[3].text = "Done, and I guarantee delivery tomorrow."
    scores = DeterministicJudge().score(given(result, ["I guarantee"]), V2)
    for criterion in ("safety_compliance", "instruction_following"):
        assert "I guarantee delivery tomorrow" in scores[criterion].evidence
        assert scores[criterion].turn == 3


def test_a_call_without_agent_words_says_there_is_no_evidence() -> None:
    silent = conversation(turns(("caller", "Hello?")), end=EndReason.CALLER_HANGUP)
    scores = DeterministicJudge().score(given(silent), V2)
    for criterion in ("tool_use_quality", "dialogue_quality", "persona_tone", "factual_accuracy"):
        assert scores[criterion].evidence.startswith(NO_EVIDENCE), criterion
        assert scores[criterion].turn is None


def test_writes_shown_are_capped_with_a_count() -> None:
    result = good_call()
    result.backend_writes = [write("5590", f"f{i}", i, at=7.5) for i in range(5)]
    goal = DeterministicJudge().score(given(result), V1)["goal_achievement"]
    assert "and 2 more" in goal.evidence
