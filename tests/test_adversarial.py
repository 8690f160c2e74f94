"""The adversarial evaluation keeps its targets: agents Polygon was never tuned on, each
with one planted flaw or none, get the verdicts and root causes a person would give.

The whole evaluation (every agent in bench/adversarial/agents on its suites) runs once per
test session; each agent is its own test, so a regression names the agent and the target.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest
from bench.adversarial_eval import (
    AGENTS_DIR,
    KNOWN_CAUSES,
    NOT_EXERCISED,
    VERDICT_FLAWS,
    AgentFigures,
    AgentModule,
    CallOutcome,
    SuiteOutcome,
    cause_accuracy,
    discover,
    evaluate,
    figures_for,
    report,
)

BROKEN: list[str] = []
AGENTS = discover(errors=BROKEN)
BY_NAME = {agent.name: agent for agent in AGENTS}
CORRECT = [a.name for a in AGENTS if a.label == "correct"]
FLAWED = [a.name for a in AGENTS if a.label == "flawed"]
MUST_FAIL = [a.name for a in AGENTS if a.must_fail]


@pytest.fixture(scope="module")
def figures() -> dict[str, AgentFigures]:
    jobs = min(4, os.cpu_count() or 1)
    return {f.agent: f for f in evaluate(AGENTS, jobs=jobs)}


# --- the set itself -----------------------------------------------------------------------


def test_every_agent_module_imports() -> None:
    assert BROKEN == []


def test_the_set_is_large_enough_and_split() -> None:
    assert len(FLAWED) >= 20
    assert len(CORRECT) >= 5
    for label in ("correct", "flawed"):
        splits = {a.split for a in AGENTS if a.label == label}
        assert splits == {"tuning", "held_out"}, f"{label} agents need both splits"


@pytest.mark.parametrize("name", [a.name for a in AGENTS])
def test_agent_declares_what_it_is(name: str) -> None:
    agent = BY_NAME[name]
    assert agent.label in ("correct", "flawed")
    assert agent.split in ("tuning", "held_out")
    assert agent.description
    assert agent.suites
    if agent.label == "correct":
        assert agent.flaw is None
        assert not agent.must_fail
    else:
        assert agent.flaw in (*KNOWN_CAUSES, *VERDICT_FLAWS), agent.flaw


@pytest.mark.parametrize("path", sorted(AGENTS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_agents_are_written_against_the_public_protocol(path: Path) -> None:
    """No agent borrows from the reference agents: the point is independent code."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = [
        node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
    ] + [
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    ]
    assert not [m for m in imported if "agents.reference" in m]


# --- the targets --------------------------------------------------------------------------


@pytest.mark.parametrize("name", CORRECT)
def test_correct_agent_passes_every_call(figures: dict[str, AgentFigures], name: str) -> None:
    found = figures[name]
    wrong = [line for line in found.failures if "verdict pass" not in line]
    assert found.verdicts.get("pass", 0) == found.calls, wrong


@pytest.mark.parametrize("name", CORRECT)
def test_correct_agent_keeps_every_case_end_to_end(
    figures: dict[str, AgentFigures], name: str
) -> None:
    found = figures[name]
    assert found.cases_e2e == found.cases, [line for line in found.failures if "cause" in line]


@pytest.mark.parametrize("name", [n for n in FLAWED if BY_NAME[n].flaw not in VERDICT_FLAWS])
def test_planted_flaw_is_the_most_frequent_cause(
    figures: dict[str, AgentFigures], name: str
) -> None:
    found = figures[name]
    assert found.top_causes == [found.flaw], found.causes


@pytest.mark.parametrize("name", [n for n in FLAWED if BY_NAME[n].flaw in VERDICT_FLAWS])
def test_verdict_level_flaw_fails_on_every_suite(
    figures: dict[str, AgentFigures], name: str
) -> None:
    found = figures[name]
    assert all(found.targets.values()), found.failures


@pytest.mark.parametrize("name", MUST_FAIL)
def test_must_fail_agent_fails_on_every_suite(figures: dict[str, AgentFigures], name: str) -> None:
    found = figures[name]
    assert sorted(found.suites_with_fail) == sorted(found.suites), found.verdicts


@pytest.mark.parametrize("name", MUST_FAIL)
def test_must_fail_agent_passes_no_call_it_did_not_do(
    figures: dict[str, AgentFigures], name: str
) -> None:
    found = figures[name]
    assert found.unmet_passes == 0, [line for line in found.failures if "verdict pass" in line]


@pytest.mark.parametrize("name", [a.name for a in AGENTS])
def test_no_call_passes_without_its_expected_outcome(
    figures: dict[str, AgentFigures], name: str
) -> None:
    found = figures[name]
    assert found.false_passes == 0, [line for line in found.failures if "verdict pass" in line]


def test_report_shows_the_matrix_and_every_split(figures: dict[str, AgentFigures]) -> None:
    text, summaries = report(list(figures.values()))
    assert [s.split for s in summaries] == ["tuning", "held_out", "all"]
    assert sum(s.agents for s in summaries[:2]) == summaries[2].agents == len(AGENTS)
    for name in BY_NAME:
        assert name in text


# --- how the figures are counted (synthetic outcomes, no run) -----------------------------


def _agent(flaw: str | None, must_fail: bool = False) -> AgentModule:
    label = "correct" if flaw is None else "flawed"
    return AgentModule("x", label, flaw, must_fail, "tuning", "synthetic", ("a", "b"))


def _case(cause: str | None, verdict: str = "warn") -> CallOutcome:
    return CallOutcome(
        "c",
        "s",
        "agent_hangup",
        verdict,
        case=True,
        e2e=cause is None,
        cause=cause,
        not_exercised="the barge-in never fired" if cause == NOT_EXERCISED else None,
    )


def test_a_tie_for_the_most_frequent_cause_does_not_meet_the_target() -> None:
    outcome = SuiteOutcome("x", "a", [_case("stale_tool_args"), _case("unclassified")], 0.0)
    found = figures_for(_agent("stale_tool_args"), [outcome])
    assert found.top_causes == ["stale_tool_args", "unclassified"]
    assert found.targets == {
        "stale_tool_args is the most frequent cause": False,
        "no false pass": True,
    }


def test_not_exercised_is_no_cause_and_no_pass() -> None:
    calls = [_case(NOT_EXERCISED), _case(NOT_EXERCISED), _case("stale_tool_args")]
    found = figures_for(_agent("stale_tool_args"), [SuiteOutcome("x", "a", calls, 0.0)])
    assert found.top_causes == ["stale_tool_args"]
    assert found.causes[NOT_EXERCISED] == 2
    assert found.cases_e2e == 0


def test_must_fail_needs_a_fail_on_every_suite() -> None:
    failed = SuiteOutcome("x", "a", [_case(None, "fail")], 0.0)
    passed = SuiteOutcome("x", "b", [_case(None, "pass")], 0.0)
    found = figures_for(_agent("do_nothing", must_fail=True), [failed, passed])
    assert found.targets == {
        "do_nothing: fail on every suite": False,
        "must fail: fail on every suite": False,
        "must fail: no pass without the expected outcome": True,
        "no false pass": True,
    }


def test_a_loop_flaw_needs_the_call_ended_as_a_loop() -> None:
    failed = CallOutcome("c", "s", "agent_hangup", "fail")
    found = figures_for(_agent("loop"), [SuiteOutcome("x", "a", [failed], 0.0)])
    assert found.targets["loop: fail on every suite"] is False
    looped = CallOutcome("c", "s", "loop_detected", "fail")
    found = figures_for(_agent("loop"), [SuiteOutcome("x", "a", [looped], 0.0)])
    assert found.targets["loop: fail on every suite"] is True


def test_a_pass_without_the_expected_outcome_is_a_false_pass() -> None:
    played = CallOutcome("c", "s", "agent_hangup", "pass", expect_met=False)
    unplayed = CallOutcome(
        "d", "s", "agent_hangup", "pass", expect_met=False, expect_not_exercised="never fired"
    )
    found = figures_for(_agent(None), [SuiteOutcome("x", "a", [played, unplayed], 0.0)])
    assert (found.false_passes, found.unmet_passes) == (1, 2)
    assert found.targets["no false pass"] is False
    lazy = figures_for(_agent("do_nothing", True), [SuiteOutcome("x", "a", [unplayed], 0.0)])
    assert lazy.targets["no false pass"] is True
    assert lazy.targets["must fail: no pass without the expected outcome"] is False


def test_cause_precision_and_recall_count_against_the_planted_flaw() -> None:
    def planted(flaw: str | None, causes: list[str]) -> AgentFigures:
        calls = [_case(cause) for cause in causes]
        return figures_for(_agent(flaw), [SuiteOutcome("x", "a", calls, 0.0)])

    rows = cause_accuracy(
        [
            planted("stale_tool_args", ["stale_tool_args"] * 3 + ["unclassified", NOT_EXERCISED]),
            planted("wrong_field_or_record", ["stale_tool_args", "wrong_field_or_record"]),
            planted(None, []),
        ]
    )
    stale = next(r for r in rows if r.cause == "stale_tool_args")
    assert (stale.labelled, stale.true_positives, stale.missed) == (4, 3, 1)
    assert (stale.precision, stale.recall) == (0.75, 0.75)
    wrong = next(r for r in rows if r.cause == "wrong_field_or_record")
    assert (wrong.precision, wrong.recall) == (1.0, 0.5)
