"""The LLM judge against the fake server: readable, unreadable, missing, misquoted, repeated."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from polygon_voice.judge import V2, JudgeInput, judge_conversation_async
from polygon_voice.judge.llm import LLMJudge, quote_in_transcript
from polygon_voice.llm import LLMClient, RoleConfig
from polygon_voice.model.judgement import Judgement
from polygon_voice.testing import FakeLLMServer, Rule
from tests.judge.calls import NO_CHECKS, PERSONA, good_call

IDS = [c.id for c in V2.criteria]
QUOTE = "order 5590 now has 3 items"


def answer(**changes: Any) -> dict[str, Any]:
    """All fives with a quote that is in the transcript; `changes` replace or drop (None)."""
    criteria: dict[str, Any] = {cid: {"score": 5, "evidence": QUOTE, "reason": "ok"} for cid in IDS}
    for cid, value in changes.items():
        if value is None:
            del criteria[cid]
        else:
            criteria[cid] = value
    return {"criteria": criteria}


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[FakeLLMServer] = []

    def start(*rules: Rule) -> FakeLLMServer:
        started.append(FakeLLMServer(list(rules)).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def judged(server: FakeLLMServer, repeats: int = 1) -> Judgement:
    # No cache (each test's answers are its own) and no retries (a 500 is a failure for good).
    config = RoleConfig(
        role="judge", model="fake", base_url=server.base_url, max_retries=0, cache=False
    )
    given = JudgeInput(good_call(), PERSONA, NO_CHECKS)

    async def go() -> Judgement:
        judge = LLMJudge(LLMClient(config))
        try:
            return await judge_conversation_async(judge, V2, given, repeats)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def test_a_readable_answer_is_scored_with_its_prompt_and_raw_answer(serve: Any) -> None:
    server = serve(Rule(role="judge", json=answer()))
    judgement = judged(server)
    assert judgement.judge == "llm"
    assert (judgement.verdict, judgement.composite, judgement.partial) == ("pass", 100.0, False)
    assert all(c.evidence_found for c in judgement.criteria.values())
    assert judgement.evidence_not_found == []
    assert judgement.errors == []
    assert judgement.raw_answers == [json.dumps(answer())]
    assert judgement.prompt is not None
    user = judgement.prompt[1]["content"]
    # The whole call: ground-truth facts, the transcript and the tool trace.
    assert '"order_id": "5590"' in user
    assert "Done: order 5590 now has 3 items." in user
    assert '"tool": "update_order"' in user
    body = server.requests[0].body
    assert body["temperature"] == 0.0  # RUB-7
    assert body["response_format"]["type"] == "json_schema"


def test_malformed_json_leaves_everything_unscored(serve: Any) -> None:
    judgement = judged(serve(Rule(role="judge", text="{not json")))
    assert judgement.verdict == "unscored"
    assert judgement.composite is None
    assert judgement.unscored == IDS
    assert judgement.raw_answers == ["{not json"]
    assert "not JSON" in judgement.errors[0]


def test_an_out_of_range_score_is_unscored_not_a_one(serve: Any) -> None:
    bad = {"score": 6, "evidence": QUOTE, "reason": "great"}
    judgement = judged(serve(Rule(role="judge", json=answer(persona_tone=bad))))
    assert judgement.criteria["persona_tone"].status == "unscored"
    assert (judgement.composite, judgement.partial, judgement.verdict) == (100.0, True, "pass")
    assert "persona_tone" in judgement.errors[0]


def test_a_missing_criterion_counts_as_one(serve: Any) -> None:
    judgement = judged(serve(Rule(role="judge", json=answer(goal_achievement=None))))
    assert judgement.criteria["goal_achievement"].status == "missing"
    assert judgement.composite == 75.0
    assert not judgement.partial


def test_a_quote_not_in_the_transcript_is_flagged(serve: Any) -> None:
    made_up = {"score": 5, "evidence": "Your refund is on its way", "reason": "x"}
    spaced = {"score": 4, "evidence": '  "ORDER  5590 now\nhas 3 items."  ', "reason": "y"}
    reply = answer(factual_accuracy=made_up, dialogue_quality=spaced)
    judgement = judged(serve(Rule(role="judge", json=reply)))
    assert judgement.criteria["factual_accuracy"].evidence_found is False
    assert judgement.criteria["dialogue_quality"].evidence_found is True
    assert judgement.evidence_not_found == ["factual_accuracy"]
    assert judgement.criteria["factual_accuracy"].score == 5  # flagged, not re-scored


def test_an_empty_quote_is_not_found() -> None:
    assert not quote_in_transcript("  ", good_call())
    assert quote_in_transcript("hello, HOW can i help", good_call())


def test_k_repeats_take_the_median_per_criterion(serve: Any) -> None:
    low = {"score": 1, "evidence": QUOTE}
    mid = {"score": 2, "evidence": QUOTE}
    server = serve(
        Rule(role="judge", call=1, json=answer()),
        Rule(role="judge", call=2, json=answer(goal_achievement=low)),
        Rule(role="judge", call=3, json=answer(goal_achievement=mid)),
    )
    judgement = judged(server, repeats=3)
    assert judgement.repeats == 3
    assert len(judgement.raw_answers) == 3
    assert judgement.criteria["goal_achievement"].score == 2.0
    assert judgement.composite == 100 - 25 * 3 / 4
    # Each repeat is its own request (its own seed), so a cache would not repeat one answer.
    assert len({r.body["seed"] for r in server.requests}) == 3


def test_an_unreadable_repeat_does_not_count(serve: Any) -> None:
    server = serve(
        Rule(role="judge", call=1, text="oops"),
        Rule(role="judge", json=answer(goal_achievement={"score": 3, "evidence": QUOTE})),
    )
    judgement = judged(server, repeats=2)
    assert judgement.criteria["goal_achievement"].score == 3.0
    assert judgement.criteria["goal_achievement"].evidence == QUOTE
    assert len(judgement.errors) == 1
    assert judgement.errors[0].startswith("repeat 1:")


def test_a_model_error_makes_the_judgement_unscored(serve: Any) -> None:
    judgement = judged(serve(Rule(role="judge", error=500, message="model down")))
    assert judgement.verdict == "unscored"
    assert judgement.composite is None
    assert "500" in judgement.errors[0] or "model down" in judgement.errors[0]
    assert judgement.raw_answers == [None]
