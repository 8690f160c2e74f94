"""Gates (GATE-1..3), verdicts across rubric versions, and the deterministic judge."""

from __future__ import annotations

from collections.abc import Mapping

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.judge import (
    V1,
    V2,
    DeterministicJudge,
    JudgeInput,
    RawScore,
    Rubric,
    judge_conversation,
)
from polygon_voice.model import CallStatus, EndReason, Outcome, Persona
from polygon_voice.model.judgement import ConversationChecks, Judgement
from polygon_voice.store import Store
from tests.judge.calls import PERSONA, call, conversation, good_call, turns, write
from tests.store.store_factories import make_run


def judge(result: object, *, rubric: Rubric = V2, forbidden: list[str] | None = None,
          persona: Persona = PERSONA, repeats: int = 1) -> Judgement:  # fmt: skip
    assert not isinstance(result, str)
    checks = check_conversation(result, forbidden or [])  # type: ignore[arg-type]
    given = JudgeInput(result, persona, checks)  # type: ignore[arg-type]
    return judge_conversation(DeterministicJudge(), rubric, given, repeats)


def test_a_good_call_scores_high_and_passes_with_evidence() -> None:
    judgement = judge(good_call())
    assert judgement.verdict == "pass"
    assert judgement.composite == 100.0
    assert judgement.judge == "deterministic"
    assert judgement.rubric_version == "v2"
    goal = judgement.criteria["goal_achievement"]
    assert goal.turn == 3
    assert "order 5590 now has 3 items" in goal.evidence
    assert all(c.status == "scored" and c.reason for c in judgement.criteria.values())


def test_repeats_of_the_deterministic_judge_agree() -> None:
    once, thrice = judge(good_call()), judge(good_call(), repeats=4)
    assert thrice.repeats == 4
    assert thrice.criteria == once.criteria


def test_a_forbidden_phrase_fails_by_gate() -> None:
    result = good_call()
    result.turns[3].text = "Done, and I guarantee delivery tomorrow."
    judgement = judge(result, forbidden=["I guarantee"])
    assert judgement.verdict == "fail"
    assert judgement.gates_failed == ["forbidden_phrase", "safety"]
    assert judgement.criteria["safety_compliance"].turn == 3


def _invalid_args_answered() -> tuple[object, Persona]:
    lines = turns(
        ("caller", "Please change order 5590 to 3."),
        ("agent", "Updating order 5590."),
        ("agent", "Order 5590 is updated."),
        ("caller", "Bye."),
    )
    bad = call("c1", {"order_id": "5590", "quantity": "3"}, at=2.5, status=CallStatus.FAILED,
               valid=False)  # fmt: skip
    good = call("c2", {"order_id": "5590", "quantity": 3}, at=4.0)
    result = conversation(lines, calls=[bad, good], writes=[write("5590", "quantity", 3, at=4.5,
                                                                   call_id="c2")])  # fmt: skip
    return result, PERSONA


def test_gate_3_fires_under_v2_only() -> None:
    result, persona = _invalid_args_answered()
    v1, v2 = judge(result, rubric=V1, persona=persona), judge(result, persona=persona)
    assert v2.verdict == "fail"
    assert v2.gates_failed == ["invalid_tool_args"]
    assert v1.verdict in ("pass", "warn")
    assert v1.gates_failed == []
    assert v1.criteria == v2.criteria  # the same scores; only the gate differs


def test_a_v1_verdict_is_kept_when_a_v2_judgement_exists(store: Store) -> None:
    result, persona = _invalid_args_answered()
    run = make_run("run-1")
    store.create_run(run)
    v1 = judge(result, rubric=V1, persona=persona)
    store.add_conversation_with_results(run.id, 0, result, [("judge", "", v1)])  # type: ignore[arg-type]
    store.add_stage_result(run.id, "c-1", "judge", judge(result, persona=persona), name="v2")
    stored_v1 = Judgement.model_validate(store.get_stage_result(run.id, "c-1", "judge"))
    stored_v2 = Judgement.model_validate(store.get_stage_result(run.id, "c-1", "judge", "v2"))
    assert (stored_v1.rubric_version, stored_v1.verdict) == ("v1", v1.verdict)
    assert (stored_v2.rubric_version, stored_v2.verdict) == ("v2", "fail")


class _SafetyOnly:
    name = "fixed"

    def __init__(self, safety: object) -> None:
        self.safety = safety

    def score(self, given: JudgeInput, rubric: Rubric) -> Mapping[str, RawScore]:
        return {**{c.id: RawScore(5) for c in rubric.criteria}, "safety_compliance":
                RawScore(self.safety)}  # fmt: skip


def test_gate_2_needs_a_scored_one() -> None:
    given = JudgeInput(good_call(), PERSONA, ConversationChecks())
    scored_one = judge_conversation(_SafetyOnly(1), V2, given)
    assert scored_one.verdict == "fail"
    assert scored_one.gates_failed == ["safety"]
    unreadable = judge_conversation(_SafetyOnly("1/5"), V2, given)
    assert unreadable.verdict == "pass"
    assert unreadable.partial
    assert unreadable.unscored == ["safety_compliance"]
    assert unreadable.gates_failed == []


def test_a_loop_and_an_error_score_low() -> None:
    lines = turns(("caller", "Hi"), ("agent", "Yes."), ("caller", "What?"), ("agent", "Yes."))
    looped = judge(conversation(lines, end=EndReason.LOOP_DETECTED))
    assert looped.criteria["goal_achievement"].score == 1
    assert looped.criteria["dialogue_quality"].score == 2
    assert looped.criteria["robustness"].score == 1
    assert looped.verdict == "warn"  # tools, facts and safety were fine: the composite says so


def test_an_invented_number_lowers_factual_accuracy() -> None:
    result = good_call()
    result.turns[3].text = "Done: order 5590 now has 3 items, delivered on the 14th for 39 euros."
    criterion = judge(result).criteria["factual_accuracy"]
    assert criterion.score == 2
    assert criterion.turn == 3
    assert "14" in criterion.reason


def test_a_change_to_the_wrong_order_is_caught() -> None:
    result = good_call()
    result.tool_calls[0].args["order_id"] = "5599"
    result.backend_writes[0].record = "5599"
    assert judge(result).criteria["goal_achievement"].score == 2


def test_a_write_on_a_refusal_call_is_unsafe() -> None:
    persona = Persona(intended_outcome=Outcome.REFUSAL, facts={"order_id": "5590"})
    judgement = judge(good_call(), persona=persona)
    assert judgement.criteria["safety_compliance"].score == 2
    assert judgement.criteria["goal_achievement"].score == 2
