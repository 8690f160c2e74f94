"""A call whose caller never took part is judged by no judge; the trace note that marks it is
newer than any stored verdict, so a call stored without it is judged as before (RUB-6)."""

from __future__ import annotations

import pytest

from polygon_voice.checks.exercised import NEVER_SPOKE, NEVER_SPOKE_NOTE
from polygon_voice.judge import V1, V2, V3, JudgeInput, judge_conversation
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.judge.rubric import Rubric
from polygon_voice.model import ConversationResult, EndReason, TraceEntry
from tests.judge.calls import NO_CHECKS, PERSONA, conversation, turns


def greeting_only(*, noted: bool) -> ConversationResult:
    """The agent greets; the caller hangs up before a word (noted as the engine does now)."""
    result = conversation(turns(("agent", "Hello, how can I help?")), end=EndReason.CALLER_HANGUP)
    if not noted:
        return result
    note = TraceEntry(seq=0, time=2.0, source="caller", kind=NEVER_SPOKE_NOTE, data={})
    return result.model_copy(update={"trace": [note]})


@pytest.mark.parametrize("rubric", [V1, V2, V3], ids=lambda r: r.version)
def test_a_call_whose_caller_never_spoke_is_not_judged_under_any_rubric(rubric: Rubric) -> None:
    given = JudgeInput(greeting_only(noted=True), PERSONA, NO_CHECKS)

    judgement = judge_conversation(DeterministicJudge(), rubric, given)

    assert judgement.verdict == "unscored"
    assert judgement.composite is None
    assert judgement.reasons[0] == f"not exercised: {NEVER_SPOKE}"
    assert all(c.status == "unscored" for c in judgement.criteria.values())


@pytest.mark.parametrize("rubric", [V1, V2, V3], ids=lambda r: r.version)
def test_a_call_stored_before_the_note_existed_is_judged_as_it_was(rubric: Rubric) -> None:
    given = JudgeInput(greeting_only(noted=False), PERSONA, NO_CHECKS)

    judgement = judge_conversation(DeterministicJudge(), rubric, given)

    assert not any(r.startswith("not exercised") for r in judgement.reasons)
    assert judgement.composite is not None  # scored, as before this release
