"""Promoted probes are judged (PROBE-6): criteria score 5/1/unscored, gates fire on wrong."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.api.setup import merged_usage
from polygon_voice.judge import V2, DeterministicJudge, JudgeInput, Rubric, load_rubric
from polygon_voice.judge.base import judge_conversation, judge_conversation_async
from polygon_voice.judge.llm import LLMJudge, answer_schema
from polygon_voice.judge.rubric import GATES, LATEST_RULES
from polygon_voice.llm import LLMClient, RoleConfig, Usage
from polygon_voice.model import ConversationResult
from polygon_voice.model.judgement import Judgement
from polygon_voice.probes import BUILTIN_PROBES, Probe, to_criterion, to_gate
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.judge.calls import NO_CHECKS, PERSONA, conversation, good_call, turns

PROMISE = next(p for p in BUILTIN_PROBES if p.id == "promise_without_tool_call")  # guardrail
EARLY = conversation(turns(("caller", "Change 5590 to 3."), ("agent", "Done, it is updated.")))
CHAT = conversation(turns(("caller", "Hi."), ("agent", "Hello, how can I help?")))


def judged(rubric: Rubric, result: ConversationResult) -> Judgement:
    return judge_conversation(DeterministicJudge(), rubric, JudgeInput(result, PERSONA, NO_CHECKS))


def test_promoted_criterion_scores_from_the_probe_rule() -> None:
    rubric = to_criterion(V2, PROMISE, "no_false_promises", 10).rubric
    criterion = next(c for c in rubric.criteria if c.id == "no_false_promises")
    assert criterion.probe is not None
    assert criterion.probe.rule == PROMISE.rule
    right, wrong, na = (judged(rubric, r) for r in (good_call(), EARLY, CHAT))
    assert (
        right.criteria["no_false_promises"].score,
        right.criteria["no_false_promises"].status,
    ) == (
        5,
        "scored",
    )
    assert wrong.criteria["no_false_promises"].score == 1
    assert na.criteria["no_false_promises"].status == "unscored"
    assert "no_false_promises" in na.unscored  # left out and renormalised (RUB-4a)
    # A clean call keeps its composite: the promoted criterion is 5, not `missing` (= 1).
    plain = judged(V2, good_call())
    assert right.composite is not None
    assert plain.composite is not None
    assert right.composite >= plain.composite


def test_promoted_probe_without_a_rule_needs_the_llm_judge() -> None:
    probe = Probe("explains", "Did the agent explain itself?", "desired")
    rubric = to_criterion(V2, probe, "explains", 10).rubric
    found = judged(rubric, good_call()).criteria["explains"]
    assert found.status == "unscored"
    assert "needs the LLM judge" in found.reason


def test_promoted_gate_fires_on_the_wrong_answer_only() -> None:
    rubric = to_gate(V2, PROMISE).rubric
    assert "probe:promise_without_tool_call" in rubric.gates
    wrong = judged(rubric, EARLY)
    assert wrong.verdict == "fail"
    assert "probe:promise_without_tool_call" in wrong.gates_failed
    not_applicable = judged(rubric, CHAT)
    assert "probe:promise_without_tool_call" not in not_applicable.gates_failed
    right = judged(rubric, good_call())
    assert right.gates_failed == []
    assert right.verdict == judged(V2, good_call()).verdict


def test_promotions_round_trip_through_the_file(tmp_path: Path) -> None:
    made = to_gate(to_criterion(V2, PROMISE, "no_false_promises", 10).rubric, BUILTIN_PROBES[1])
    loaded = load_rubric(str(made.write(tmp_path / "r.yaml")))
    assert loaded == made.rubric
    assert [p.id for p in loaded.probe_gates] == [BUILTIN_PROBES[1].id]
    assert loaded.promoted_criteria[0].probe is not None


def test_custom_rubric_without_promotions_keeps_its_version(tmp_path: Path) -> None:
    # The content hash of a plain criterion is unchanged by the new (empty) probe field; the
    # deterministic rule set is part of the version (a new rule set is a new version, RUB-6).
    data = {"name": "mine", "criteria": [{"id": "a", "weight": 100}]}
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(data))
    old = json.dumps(
        {
            "criteria": [{"id": "a", "weight": 100, "description": ""}],
            "gates": sorted(GATES),
            "rules": LATEST_RULES,
        },
        sort_keys=True,
    )
    digest = hashlib.sha256(old.encode()).hexdigest()[:12]
    assert load_rubric(str(path)).version == f"mine-{digest}"


def _llm_judged(server: FakeLLMServer, rubric: Rubric) -> Judgement:
    config = RoleConfig(
        role="judge", model="fake", base_url=server.base_url, max_retries=0, cache=False
    )

    async def go() -> Judgement:
        judge = LLMJudge(LLMClient(config))
        try:
            given = JudgeInput(good_call(), PERSONA, NO_CHECKS)
            return await judge_conversation_async(judge, rubric, given)
        finally:
            await judge.aclose()

    return asyncio.run(go())


def _reply(rubric: Rubric, promoted: dict[str, Any], **extra: Any) -> dict[str, Any]:
    quote = "order 5590 now has 3 items"
    items: dict[str, Any] = {c.id: {"score": 5, "evidence": quote} for c in rubric.criteria}
    items.update(promoted)
    return {"criteria": items, **extra}


def test_llm_judge_answers_a_promoted_criterion() -> None:
    probe = Probe("explains", "Did the agent explain itself?", "desired")
    rubric = to_criterion(V2, probe, "explains", 10).rubric
    schema = answer_schema(rubric)["properties"]["criteria"]["properties"]["explains"]
    assert schema["properties"]["answer"]["enum"] == ["yes", "no", "not_applicable"]
    for said, score, status in (("yes", 5, "scored"), ("no", 1, "scored"),
                                ("not_applicable", None, "unscored")):  # fmt: skip
        reply = _reply(rubric, {"explains": {"answer": said, "evidence": "order 5590"}})
        with FakeLLMServer([Rule(structured=True, json_=reply)]) as server:
            found = _llm_judged(server, rubric)
            asked = json.dumps(server.requests[0].body)
        assert (found.criteria["explains"].score, found.criteria["explains"].status) == (
            score,
            status,
        )
        assert "Did the agent explain itself?" in asked


def test_llm_judge_answers_a_promoted_gate_without_a_rule() -> None:
    probe = Probe("rude", "Was the agent rude?", "guardrail")
    rubric = to_gate(V2, probe).rubric
    for said, fails in (("yes", True), ("not_applicable", False), ("no", False)):
        reply = _reply(rubric, {}, gates={"rude": {"answer": said, "evidence": "x"}})
        with FakeLLMServer([Rule(structured=True, json_=reply)]) as server:
            found = _llm_judged(server, rubric)
        assert ("probe:rude" in found.gates_failed) is fails


def test_probe_usage_is_merged() -> None:
    judge, probes = Usage(), Usage()
    config = RoleConfig(role="judge", model="fake", base_url="http://x")
    judge.record(config, tokens_in=10, tokens_out=1, cached=False)
    probes.record(config, tokens_in=5, tokens_out=2, cached=False)
    merged = merged_usage(None, judge, probes)
    assert merged is not None
    assert json.dumps(merged).count("15") >= 1  # 10 + 5 tokens in for the judge role
    assert merged_usage(judge, judge) == merged_usage(judge)  # one object counted once


def test_run_with_a_promoted_rubric(polygon: Polygon) -> None:
    # As `polygon probes promote ... --to-criterion no_false_promises --weight 10` writes it.
    out = to_criterion(V2, PROMISE, "no_false_promises", 10).write(polygon.workdir / "r.yaml")
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--out", "o", "--rubric", str(out))
    assert code == 0, err
    report = json.loads((polygon.workdir / "o" / "report.json").read_text())
    found = [c["judgement"]["criteria"]["no_false_promises"] for c in report["conversations"]]
    assert {f["status"] for f in found} <= {"scored", "unscored"}  # never `missing`


def test_no_probes_leaves_probes_out_of_the_report(polygon: Polygon) -> None:
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--out", "n", "--no-probes")
    assert code == 0, err
    report = json.loads((polygon.workdir / "n" / "report.json").read_text())
    assert "probes" not in report
    assert all("probes" not in c for c in report["conversations"])
