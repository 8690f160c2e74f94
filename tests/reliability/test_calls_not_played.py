"""A call the caller never took part in is *not exercised*, never a pass: the caller model
ended the call at once, or a script hung up before its first line (docs/judging.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from polygon_voice.agents import resolve_agent
from polygon_voice.checks.exercised import NEVER_SPOKE
from polygon_voice.judge import Judging
from polygon_voice.judge.llm import LLMJudge
from polygon_voice.llm import LLMClient
from polygon_voice.runner import SuiteRunner
from polygon_voice.scenario import load_suite
from polygon_voice.store import RunRecord, Store
from polygon_voice.suites import builtin_suite_path
from polygon_voice.testing import Rule
from tests.reliability.test_models import _example_head, _run, answer, role, serve

__all__ = ["serve"]  # the fixture, shared with test_models

ONE_SCENARIO = """
scenarios:
  - id: change-quantity
    caller: llm
    expect: {outcome: success, backend: {orders: {"5590": {quantity: 3}}}}
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590", quantity: 3}}
"""

SCRIPTED = """
scenarios:
  - id: hangs-up-at-once
    expect: {outcome: success}
    persona: {goal: Change the quantity of order 5590 to 3.}
    script:
      - hangup: true
  - id: one-word
    expect: {outcome: callback, no_write: true}
    persona: {goal: Say hello.}
    script:
      - say: Hello.
  - id: silent-then-gone
    expect: {outcome: callback, no_write: true}
    persona: {goal: Say nothing.}
    script:
      - silence: true
      - hangup: true
"""

HANG_UP_AT_ONCE = {"say": "", "end_call": True}


def _llm_run(tmp_path: Path, server: Any) -> tuple[Store, str, Any]:
    caller = LLMClient(role(server, "caller"))
    judge = LLMJudge(LLMClient(role(server, "judge")))
    return _run(
        tmp_path, _example_head() + ONE_SCENARIO, caller_client=caller, judging=Judging(judge)
    )


def test_a_caller_model_that_ends_the_call_at_once_is_not_exercised_and_not_judged(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(Rule(role="caller", json=HANG_UP_AT_ONCE), Rule(role="judge", json=answer()))
    store, run_id, tally = _llm_run(tmp_path, server)

    assert tally.verdicts == {"unscored": 1}  # was: judged pass 90.6
    assert [r.role for r in server.requests] == ["caller"]  # no judge request for it
    (result,) = store.iter_conversations(run_id)
    assert [t.speaker.value for t in result.turns] == ["agent"]  # the greeting only
    assert [e.kind for e in result.trace].count("caller_never_spoke") == 1
    judgement = store.get_stage_result(run_id, result.id, "judge")
    assert judgement is not None
    assert judgement["verdict"] == "unscored"
    assert judgement["composite"] is None
    assert judgement["reasons"][0] == f"not exercised: {NEVER_SPOKE}"
    assert sum(r.startswith("not exercised") for r in judgement["reasons"]) == 1  # said once
    expect = store.get_stage_result(run_id, result.id, "expect")
    assert expect is not None
    assert expect["not_exercised"] == NEVER_SPOKE
    assert tally.expectations == {"not_exercised": 1}
    assert tally.failures.total == 0  # the model answered: no infrastructure failure


def test_a_caller_model_that_only_keeps_silent_then_hangs_up_is_not_exercised(
    serve: Any, tmp_path: Path
) -> None:
    server = serve(
        Rule(role="caller", call=1, json={"say": "", "end_call": False}),
        Rule(role="caller", json=HANG_UP_AT_ONCE),
        Rule(role="judge", json=answer()),
    )
    store, run_id, tally = _llm_run(tmp_path, server)

    assert [r.role for r in server.requests] == ["caller", "caller"]  # no judge request
    (result,) = store.iter_conversations(run_id)
    assert "silence" in [e.kind for e in result.trace]  # the agent heard a silence
    judgement = store.get_stage_result(run_id, result.id, "judge")
    assert judgement is not None
    assert judgement["reasons"][0] == f"not exercised: {NEVER_SPOKE}"
    assert tally.expectations == {"not_exercised": 1}


def test_a_caller_that_says_one_word_and_hangs_up_is_judged(serve: Any, tmp_path: Path) -> None:
    server = serve(
        Rule(role="caller", json={"say": "Hello.", "end_call": True}),
        Rule(role="judge", json=answer()),
    )
    store, run_id, tally = _llm_run(tmp_path, server)

    assert "judge" in [r.role for r in server.requests]  # the agent had its chance
    (result,) = store.iter_conversations(run_id)
    assert not any(e.kind == "caller_never_spoke" for e in result.trace)
    judgement = store.get_stage_result(run_id, result.id, "judge")
    assert judgement is not None
    assert not any(r.startswith("not exercised") for r in judgement["reasons"])
    assert tally.expectations == {"not_met": 1}  # quantity 3 was never asked for


def test_a_script_that_hangs_up_first_is_not_exercised_and_a_word_or_a_silence_plays(
    tmp_path: Path,
) -> None:
    store, run_id, tally = _run(tmp_path, _example_head() + SCRIPTED)

    verdicts = {}
    for result in store.iter_conversations(run_id):
        judgement = store.get_stage_result(run_id, result.id, "judge")
        expect = store.get_stage_result(run_id, result.id, "expect")
        assert judgement is not None
        assert expect is not None
        verdicts[result.id] = (judgement["verdict"], expect["not_exercised"])
    assert verdicts["hangs-up-at-once"] == ("unscored", NEVER_SPOKE)
    assert verdicts["one-word"][1] is None
    assert verdicts["one-word"][0] != "unscored"
    assert verdicts["silent-then-gone"][1] is None  # a silence is the script's own test
    assert tally.expectations["not_exercised"] == 1


def test_three_layer_cases_whose_caller_never_spoke_count_as_not_exercised(
    tmp_path: Path,
) -> None:
    loaded = load_suite(builtin_suite_path("three-layer"))
    hang_up = [{"hangup": True}]
    scenarios = [
        s.model_validate({**s.model_dump(mode="json"), "script": hang_up})
        for s in loaded.suite.scenarios[:3]
    ]
    suite = loaded.suite.model_copy(update={"scenarios": scenarios})
    store = Store(f"sqlite:///{tmp_path / 'polygon.db'}")
    record = RunRecord(
        id="run1", suite=suite.name, suite_path="three-layer", suite_hash=loaded.hash,
        agent="reference:robust", seed=0, status="running", started_at=datetime.now(UTC),
    )  # fmt: skip
    store.create_run(record)
    factory = resolve_agent("reference:robust", loaded.base_dir)
    tally = SuiteRunner(suite, factory, store, "run1").run()

    assert tally.verdicts == {"unscored": 3}
    assert tally.cases.total == 0  # neither passed nor failed: reported apart
    assert [s["reason"] for s in tally.cases.skipped] == [NEVER_SPOKE] * 3


def test_a_probe_without_a_rule_sends_no_request_about_a_call_not_played(serve: Any) -> None:
    import asyncio

    from polygon_voice.probes import Probing
    from polygon_voice.probes.definition import Probe
    from polygon_voice.probes.run import probe_stage
    from tests.judge.calls import conversation, turns

    server = serve(Rule(json={"answer": "yes", "evidence": "", "turn": 0}))
    probe = Probe("reason", "Did the agent explain itself?", "desired")
    greeted = conversation(turns(("agent", "Hello, how can I help?")))
    note = {"seq": 0, "time": 2.0, "source": "caller", "kind": "caller_never_spoke"}
    unplayed = greeted.model_validate({**greeted.model_dump(), "trace": [note]})
    probing = Probing(probes=[probe], client=LLMClient(role(server, "judge")))

    (answer,) = asyncio.run(probe_stage(probing, unplayed)).answers
    assert (answer.answer, answer.reason) == ("not_applicable", f"not exercised: {NEVER_SPOKE}")
    assert server.requests == []
    (asked,) = asyncio.run(probe_stage(probing, greeted)).answers  # played: the model is asked
    assert asked.answer == "yes"
    assert len(server.requests) == 1
