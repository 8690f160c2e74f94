"""Rubric v3 (the default) fails what a person would fail: doing nothing, claiming a change
without writing it, an agent that broke the call; and still passes the example agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.judge import DEFAULT_RUBRIC, V2, V3, load_rubric
from polygon_voice.judge.base import JudgeInput, judge_conversation
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.model import EndReason, ExpectCheck, ExpectResult, Persona, ToolSpec
from polygon_voice.model.judgement import ConversationChecks
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.judge.calls import call, conversation, turns, write

AGENTS = "tests.judge.verdict_agents"


def run_report(polygon: Polygon, agent: str, suite: Path = EXAMPLE_SUITE) -> dict[str, Any]:
    code, _, err = polygon("run", str(suite), "--agent", agent, "--out", "out")
    assert code == 0, err
    report: dict[str, Any] = json.loads((polygon.workdir / "out" / "report.json").read_text())
    return report


def verdicts(report: dict[str, Any]) -> dict[str, str]:
    return {c["id"]: c["judgement"]["verdict"] for c in report["conversations"]}


def test_v3_is_the_default_and_keeps_v2s_criteria() -> None:
    assert DEFAULT_RUBRIC == "v3"
    assert V3.weights == V2.weights
    assert V3.gates == V2.gates | {"agent_error", "expected_outcome"}
    assert (V2.rules, V3.rules) == (1, 2)


def test_the_example_agent_passes_every_example_scenario(polygon: Polygon) -> None:
    report = run_report(polygon, "agent.py:OrderLineAgent")
    assert set(verdicts(report).values()) == {"pass"}, verdicts(report)
    assert report["summary"]["expectations"] == {
        "met": 9, "not_met": 0, "not_exercised": 0, "unstated": 0
    }  # fmt: skip


def test_the_echo_agent_fails_every_scenario_that_asks_for_something(polygon: Polygon) -> None:
    report = run_report(polygon, f"{AGENTS}:EchoAgent")
    # The silent caller wants nothing done; doing nothing is right there.
    assert {k for k, v in verdicts(report).items() if v != "fail"} == {"silent-caller"}
    change = next(c for c in report["conversations"] if c["id"] == "change-quantity")
    assert "expected_outcome" in change["judgement"]["gates_failed"]
    assert not change["expect"]["met"]


def test_a_phantom_write_fails_and_is_scored_a_false_statement(polygon: Polygon) -> None:
    report = run_report(polygon, f"{AGENTS}:PhantomAgent")
    change = next(c for c in report["conversations"] if c["id"] == "change-quantity")
    criteria = change["judgement"]["criteria"]
    assert change["judgement"]["verdict"] == "fail"
    assert criteria["factual_accuracy"]["score"] == 1
    assert "no write backs it" in criteria["factual_accuracy"]["reason"]
    assert criteria["tool_use_quality"]["score"] == 1


def test_an_agent_that_raised_fails_by_the_agent_error_gate(polygon: Polygon) -> None:
    report = run_report(polygon, f"{AGENTS}:RaisingAgent")
    for entry in report["conversations"]:
        if entry["end_reason"] == "error":
            assert entry["judgement"]["verdict"] == "fail"
            assert "agent_error" in entry["judgement"]["gates_failed"]


def test_the_older_rubric_keeps_its_verdicts(polygon: Polygon) -> None:
    # v2 never knew expectations: its verdicts on the same calls stay what they were.
    code, _, err = polygon(
        "run", str(EXAMPLE_SUITE), "--agent", f"{AGENTS}:EchoAgent", "--rubric", "v2", "--out", "o2"
    )
    assert code == 0, err
    report = json.loads((polygon.workdir / "o2" / "report.json").read_text())
    assert "fail" not in verdicts(report).values()


UPDATE = ToolSpec.model_validate(
    {"stub": {"kind": "stateful", "collection": "orders", "op": "update", "key": "order_id"}}
)


def given(result: Any, expect: ExpectResult | None = None) -> JudgeInput:
    return JudgeInput(
        result, Persona(), ConversationChecks(), tools={"update_order": UPDATE}, expect=expect
    )


def test_a_claim_before_the_write_landed_is_scored_two_not_one() -> None:
    lines = turns(("caller", "Order 5590 to 3"), ("agent", "All set, your order is updated."))
    early = conversation(
        lines,
        calls=[call("c1", {"order_id": "5590", "quantity": 3}, at=1.0)],
        writes=[write("5590", "quantity", 3, at=30.0)],
    )
    judged = judge_conversation(DeterministicJudge(), V3, given(early))
    assert judged.criteria["factual_accuracy"].score == 2
    in_time = conversation(
        lines,
        calls=[call("c1", {"order_id": "5590", "quantity": 3}, at=1.0)],
        writes=[write("5590", "quantity", 3, at=1.5)],
    )
    assert (
        judge_conversation(DeterministicJudge(), V3, given(in_time))
        .criteria["factual_accuracy"]
        .score
        == 5
    )


def test_a_scenario_that_did_not_play_leaves_the_goal_unscored_and_fires_no_gate() -> None:
    result = conversation(turns(("agent", "Bye")))
    unplayed = ExpectResult(source="expect", met=False, not_exercised="barge-in never fired")
    judged = judge_conversation(DeterministicJudge(), V3, given(result, unplayed))
    assert judged.criteria["goal_achievement"].status == "unscored"
    assert "expected_outcome" not in judged.gates_failed
    assert judged.verdict == "unscored"  # neither a pass nor a warning of the agent
    assert judged.reasons[0] == "not exercised: barge-in never fired"
    missed = ExpectResult(
        source="expect",
        met=False,
        checks=[ExpectCheck(name="backend", passed=False, why="orders/5590 holds 2")],
    )
    judged = judge_conversation(DeterministicJudge(), V3, given(result, missed))
    assert judged.gates_failed == ["expected_outcome"]
    assert judged.verdict == "fail"
    assert "orders/5590 holds 2" in judged.reasons[0]


@pytest.mark.parametrize(
    ("message", "fires"),
    [
        ("agent raised RuntimeError: boom", True),
        ("agent gave no answer to caller_said within 10s", True),
        ("could not build the agent: ImportError", True),
        ("could not set up the call: KeyError", False),
        ("internal error in the engine: ValueError", False),
    ],
)
def test_agent_error_is_the_agents_errors_only(message: str, fires: bool) -> None:
    result = conversation(turns(("agent", "Hello")), end=EndReason.ERROR)
    result.end.message = message
    judged = judge_conversation(DeterministicJudge(), V3, given(result))
    assert ("agent_error" in judged.gates_failed) is fires


def test_a_custom_rubric_names_its_rule_set_in_its_version(tmp_path: Path) -> None:
    body = "name: r\ncriteria:\n- {id: goal_achievement, weight: 100}\n"
    (tmp_path / "a.yaml").write_text(body)
    (tmp_path / "b.yaml").write_text(body + "rules: 1\n")
    (tmp_path / "c.yaml").write_text(body + "rules: 7\n")
    a, b = load_rubric(str(tmp_path / "a.yaml")), load_rubric(str(tmp_path / "b.yaml"))
    assert (a.rules, b.rules) == (2, 1)
    assert a.version != b.version
    with pytest.raises(ValueError, match=": rules: the deterministic"):
        load_rubric(str(tmp_path / "c.yaml"))


LOOKUP = ToolSpec.model_validate(
    {"stub": {"kind": "stateful", "collection": "orders", "op": "get", "key": "order_id"}}
)


def test_reading_a_write_back_is_no_unkeyed_retry_under_rule_set_2() -> None:
    lines = turns(("caller", "Order 5590 to 3"), ("agent", "Order 5590 now has 3 items."))
    reads = [call(f"look-{i}", {"order_id": "5590"}, at=1.0 + i) for i in range(2)]
    for read in reads:
        read.tool = "lookup_order"
    result = conversation(lines, calls=reads)
    tools = {"update_order": UPDATE, "lookup_order": LOOKUP}
    given_tools = JudgeInput(result, Persona(), ConversationChecks(), tools=tools)
    assert (
        judge_conversation(DeterministicJudge(), V3, given_tools).criteria["tool_use_quality"].score
        == 5
    )
    # Rule set 1 (v2) keeps counting it, so v2 verdicts replay as they were.
    assert (
        judge_conversation(DeterministicJudge(), V2, given_tools).criteria["tool_use_quality"].score
        == 4
    )
