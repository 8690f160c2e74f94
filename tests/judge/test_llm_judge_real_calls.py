"""The LLM judge on a real (imported) call, against the fake server: no persona block, the
prompt says it is a real call, and factual_accuracy is not asked and not applicable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn
from polygon_voice.imports.convert import to_conversation
from polygon_voice.judge import V3, JudgeInput, judge_conversation_async
from polygon_voice.judge.composite import NotApplicable
from polygon_voice.judge.llm import LLMJudge, read_answer
from polygon_voice.llm import LLMClient, RoleConfig
from polygon_voice.model import Persona
from polygon_voice.model.judgement import ConversationChecks, Judgement
from polygon_voice.probes import BUILTIN_PROBES, to_criterion
from polygon_voice.testing import FakeLLMServer, Rule

QUOTE = "your order 5590 now has 3 items"
ASKED = [c.id for c in V3.criteria if c.id != "factual_accuracy"]


def real_call() -> JudgeInput:
    call = ImportedCall(
        "call-7",
        "vapi",
        [
            ImportedTurn("agent", "Hi, how can I help?"),
            ImportedTurn("caller", "Change order 5590 to 3 please."),
            ImportedTurn("agent", "Done, your order 5590 now has 3 items."),
        ],
        [ImportedToolCall("t1", "update_order", {"order_id": "5590", "quantity": 3},
                          result={"ok": True}, after_turn=1)],
    )  # fmt: skip
    # A persona with facts, to show that nothing of it reaches the prompt of a real call.
    persona = Persona(goal="SECRET GOAL", facts={"order_id": "9999"})
    return JudgeInput(to_conversation(call), persona, ConversationChecks(), real_call=True)


def answer(scores: dict[str, int]) -> dict[str, Any]:
    return {
        "criteria": {c: {"score": s, "evidence": QUOTE, "reason": "ok"} for c, s in scores.items()}
    }


def judged(server: FakeLLMServer) -> Judgement:
    config = RoleConfig(
        role="judge", model="fake", base_url=server.base_url, max_retries=0, cache=False
    )

    async def go() -> Judgement:
        judge = LLMJudge(LLMClient(config))
        try:
            return await judge_conversation_async(judge, V3, real_call())
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_a_real_call_prompt_has_no_persona_and_no_factual_criterion() -> None:
    server = FakeLLMServer([Rule(role="judge", json=answer(dict.fromkeys(ASKED, 5)))]).start()
    try:
        judgement = judged(server)
        body = server.requests[0].body
    finally:
        server.stop()
    assert judgement.prompt is not None
    system, user = judgement.prompt[0]["content"], judgement.prompt[1]["content"]
    assert "REAL call" in system
    assert "factual_accuracy" not in system
    assert "SECRET GOAL" not in user
    assert "9999" not in user
    assert "## A real call" in user
    assert "ground truth" not in user
    assert "## Backend writes" not in user  # a real call has no write log
    schema = json.dumps(body["response_format"])
    assert "factual_accuracy" not in schema
    assert "goal_achievement" in schema
    assert judgement.criteria["factual_accuracy"].status == "not_applicable"
    assert judgement.not_applicable == {"factual_accuracy": "a real call has no ground-truth facts"}
    assert judgement.verdict == "pass"
    assert judgement.composite == 100.0
    assert not judgement.partial
    assert judgement.unscored == []


def test_a_factual_score_the_model_sends_anyway_is_ignored() -> None:
    scores = {**dict.fromkeys(ASKED, 5), "factual_accuracy": 1}
    server = FakeLLMServer([Rule(role="judge", json=answer(scores))]).start()
    try:
        judgement = judged(server)
    finally:
        server.stop()
    assert judgement.criteria["factual_accuracy"].score is None
    assert judgement.composite == 100.0


def test_a_failed_model_leaves_factual_not_applicable_and_the_rest_unscored() -> None:
    server = FakeLLMServer([Rule(role="judge", error=500)]).start()
    try:
        judgement = judged(server)
    finally:
        server.stop()
    assert judgement.verdict == "unscored"
    assert judgement.criteria["factual_accuracy"].status == "not_applicable"
    assert "factual_accuracy" not in judgement.unscored
    assert "goal_achievement" in judgement.unscored
    assert judgement.errors


def test_a_promoted_probe_the_model_finds_not_applicable_is_not_applicable() -> None:
    probe = next(p for p in BUILTIN_PROBES if p.id == "gave_reason_for_refusal")
    rubric = to_criterion(V3, probe, "explains", 10).rubric
    said = {"criteria": {"explains": {"answer": "not_applicable", "evidence": "", "reason": "x"}}}
    result = real_call().result
    on_real = read_answer(json.dumps(said), rubric, result, real_call=True)["explains"]
    simulated = read_answer(json.dumps(said), rubric, result)["explains"]
    assert isinstance(on_real.value, NotApplicable)
    assert on_real.reason.startswith("not applicable: answered not_applicable")
    assert simulated.value is None  # a simulated call's not applicable stays unscored
