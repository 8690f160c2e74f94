"""Probes on a real (imported) call (IMP-2): the rules that need the script, the persona or
injected noise answer not applicable with the reason; the others answer from the record; a
promoted probe that does not apply is left out as not applicable, a promoted gate never fires."""

from __future__ import annotations

import asyncio

from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn
from polygon_voice.imports.convert import to_conversation
from polygon_voice.judge import V3, DeterministicJudge, JudgeInput
from polygon_voice.judge.base import judge_conversation
from polygon_voice.model import ConversationResult, Persona
from polygon_voice.model.judgement import ConversationChecks
from polygon_voice.probes import BUILTIN_PROBES, ProbeInput, to_criterion, to_gate
from polygon_voice.probes.deterministic import NO_WRITE_LOG, NOT_HEARD_APART, answer_rule
from polygon_voice.probes.run import Probing, probe_stage

PROBE = {p.id: p for p in BUILTIN_PROBES}


def real(
    *turns: tuple[str, str], tools: list[ImportedToolCall] | None = None
) -> ConversationResult:
    said = [ImportedTurn("agent" if who == "a" else "caller", text) for who, text in turns]
    return to_conversation(ImportedCall("call-1", "vapi", said, tools or []))


def booked(after: int) -> ImportedToolCall:
    return ImportedToolCall("t1", "book", {"day": "friday"}, result={"ok": True}, after_turn=after)


CONFIRMED = (("c", "Book me in for Friday at 10."), ("a", "Done, you are booked for Friday at 10."))


def answered(rule: str, result: ConversationResult) -> tuple[str, str]:
    found = answer_rule(rule, ProbeInput(result, real_call=True))
    return found.answer, found.reason


def test_a_confirmation_after_a_completed_call_is_backed_on_a_real_call() -> None:
    # A real call has no write log: the completed tool call is what backs the confirmation.
    result = real(*CONFIRMED, tools=[booked(after=0)])
    assert answered("promise_without_tool_call", result)[0] == "no"
    # The same call read as a simulated one would find no write and say yes.
    assert answer_rule("promise_without_tool_call", ProbeInput(result)).answer == "yes"


def test_a_confirmation_with_no_call_before_it_is_an_unbacked_promise() -> None:
    assert answered("promise_without_tool_call", real(*CONFIRMED)) == (
        "yes",
        "a confirmation with no completed tool call before it",
    )


def test_the_rules_that_need_the_script_or_the_write_log_are_not_applicable() -> None:
    result = real(*CONFIRMED, tools=[booked(after=0)])
    assert answered("asked_again_after_garbled", result) == ("not_applicable", NOT_HEARD_APART)
    assert answered("confirmed_value_differs", result) == ("not_applicable", NO_WRITE_LOG)


def test_a_refusal_reason_is_read_from_the_transcript_as_usual() -> None:
    result = real(("c", "Refund me."), ("a", "I'm afraid I can't refund that."))
    assert answered("gave_reason_for_refusal", result)[0] == "no"


def test_the_probe_stage_marks_a_real_call() -> None:
    result = real(*CONFIRMED, tools=[booked(after=0)])
    probing = Probing(probes=BUILTIN_PROBES)
    answers = asyncio.run(probe_stage(probing, result, real_call=True)).answers
    by_id = {a.id: a for a in answers}
    assert by_id["asked_again_after_garbled"].reason == NOT_HEARD_APART
    assert by_id["promise_without_tool_call"].answer == "no"


def test_a_promoted_probe_that_does_not_apply_is_not_applicable_not_unscored() -> None:
    rubric = to_criterion(V3, PROBE["confirmed_value_differs"], "values_match", 10).rubric
    result = real(*CONFIRMED, tools=[booked(after=0)])
    given = JudgeInput(result, Persona(), ConversationChecks(), real_call=True)
    judgement = judge_conversation(DeterministicJudge(), rubric, given)
    assert judgement.criteria["values_match"].status == "not_applicable"
    assert "values_match" in judgement.not_applicable
    assert "values_match" not in judgement.unscored


def test_a_promoted_gate_that_does_not_apply_never_fires() -> None:
    rubric = to_gate(V3, PROBE["confirmed_value_differs"]).rubric
    result = real(*CONFIRMED, tools=[booked(after=0)])
    given = JudgeInput(result, Persona(), ConversationChecks(), real_call=True)
    judgement = judge_conversation(DeterministicJudge(), rubric, given)
    assert not any(g.startswith("probe:") for g in judgement.gates_failed)
