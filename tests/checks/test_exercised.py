"""Cases that did not play as written, or that no agent could win, are the suite's problem:
not exercised, with the reason; never a failed axis counted, a root cause or a gate break."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from polygon_voice.checks import summarise
from polygon_voice.checks.exercised import unplayed_events
from polygon_voice.model import CaseScore
from polygon_voice.report import case_entry
from tests.checks.cases import (
    corr04_opening,
    corr04_robust_trace,
    corr04_stale_trace,
    int03_cancelled_trace,
    int03_opening,
    scenario,
    score,
)
from tests.checks.trace_builder import TraceBuilder
from tests.cli.conftest import Polygon

CORR04 = scenario("corr-04")
INT03 = scenario("int-03")
WAITING = {"at": "during_tool_prep", "say": "Sorry, I meant order 5599.", "tool": "update_order",
           "on_call": 3}  # fmt: skip
"""A barge-in waiting for a third update_order call: more than a correct agent makes."""


def unplayed(builder: TraceBuilder, *steps: Any) -> TraceBuilder:
    """The engine's note at the end of a call whose barge-ins never fired."""
    return builder.note("script_unplayed", {"barge_ins": list(steps)}, at=30.0)


def test_a_barge_in_whose_point_never_came_is_not_exercised() -> None:
    scored = score(unplayed(corr04_stale_trace(), WAITING).build(), CORR04)

    assert scored.not_exercised is not None
    assert "'Sorry, I meant order 5599.'" in scored.not_exercised
    assert "during_tool_prep of call 3 to update_order" in scored.not_exercised
    assert "the agent prepared 1 update_order call(s), the script waits for call 3" in (
        scored.not_exercised
    )
    assert (scored.e2e, scored.root_cause, scored.gate_breaks) == (False, None, [])


def test_a_barge_in_kept_from_firing_by_an_agent_that_never_acted_is_its_failure() -> None:
    # The agent never builds an update_order call, so the correction never comes: the
    # agent dropped the request, and the evidence says the script could not play.
    waiting = {**WAITING, "on_call": None}
    builder = (
        TraceBuilder("corr-04")
        .caller("Please change order 5590 to 2 items.", at=1.0, end=3.0)
        .agent("Thank you for calling. Goodbye!", at=3.0, end=5.0)
    )

    scored = score(unplayed(builder, waiting).build(), CORR04)

    assert scored.not_exercised is None
    assert unplayed_events(CORR04, unplayed(builder, waiting).build()) == []
    assert scored.root_cause is not None
    assert scored.root_cause.cause == "request_dropped"
    (reason,) = scored.root_cause.evidence["script_unplayed"]
    assert "the agent prepared 0 update_order call(s)" in reason


def test_the_reason_counts_the_calls_the_script_waited_for() -> None:
    step = {**WAITING, "at": "after_tool_fired", "on_call": 2}
    result = unplayed(corr04_robust_trace(), step).build()

    (reason,) = unplayed_events(CORR04, result)

    assert "after_tool_fired of call 2 to update_order" in reason
    assert "the agent sent 1 update_order call(s), the script waits for call 2" in reason


def test_a_played_script_has_no_reasons() -> None:
    assert unplayed_events(CORR04, corr04_stale_trace().build()) == []


def test_a_garbled_note_is_still_a_reason_and_never_a_crash() -> None:
    garbled = unplayed(corr04_robust_trace(), {"at": "whenever"}, 42).build()
    not_a_list = corr04_robust_trace().note("script_unplayed", {"barge_ins": "x"}, at=30.0)

    assert unplayed_events(CORR04, garbled) == ["a scripted barge-in never fired"] * 2
    assert unplayed_events(CORR04, not_a_list.build()) == []


def test_a_pass_whose_event_never_fired_is_not_exercised_either() -> None:
    scored = score(unplayed(corr04_robust_trace(), WAITING).build(), CORR04)

    assert scored.not_exercised is not None
    assert not scored.e2e


def test_a_change_heard_after_the_old_write_landed_cannot_be_won() -> None:
    # update_order-2 (3 items) wrote at 12.5 s; the caller's "5 items" reached the agent at
    # 13.0 s, and the agent cancelled and sent the right call at once.
    scored = score(int03_cancelled_trace(first_write_landed=True).build(), INT03)

    assert scored.not_exercised is not None
    assert "update_order-2 had already written {'quantity': 3} at 12.50s" in scored.not_exercised
    assert "heard at 13.00s" in scored.not_exercised
    assert scored.root_cause is None


def test_a_write_that_lands_after_the_change_was_heard_is_the_agents() -> None:
    # The same, but the old call writes at 14.0 s: the agent had a second to cancel it.
    builder = (
        int03_opening()
        .call("update_order-2", "update_order", {"order_id": "5590", "quantity": 3}, version=2,
              sent=11.0, completed=14.2)
        .write("orders", "5590", "quantity", 2, 3, call="update_order-2", at=14.0)
        .agent("Done: order 5590 now has quantity 5.", at=14.2, end=18.6)
    )  # fmt: skip

    scored = score(builder.build(), INT03)

    assert scored.not_exercised is None
    assert scored.root_cause is not None
    assert scored.root_cause.cause == "inflight_call_not_cancelled"


def test_an_early_write_of_something_never_asked_is_no_excuse() -> None:
    # Before the correction the agent wrote order 4281, which the caller never named.
    builder = (
        corr04_opening()
        .call("update_order-2", "update_order", {"order_id": "4281", "quantity": 2}, version=2,
              sent=8.5, completed=10.0)
        .write("orders", "4281", "quantity", 3, 2, call="update_order-2", at=10.0)
        .barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
        .state("order_id", "5599", version=3, at=13.0)
    )  # fmt: skip

    scored = score(builder.build(), CORR04)

    assert scored.not_exercised is None
    assert scored.root_cause is not None


def test_the_summary_counts_not_exercised_cases_apart() -> None:
    skipped = score(unplayed(corr04_robust_trace(), WAITING).build(), CORR04)
    failed = score(corr04_stale_trace().build(), CORR04).model_copy(update={"case_id": "stale"})
    passed = score(corr04_robust_trace().build(), CORR04).model_copy(update={"case_id": "ok"})

    summary = summarise([skipped, failed, passed])
    report = summary.as_report()

    assert report["e2e_integrity"] == {"passed": 1, "total": 2}
    assert report["axes"]["captured"]["total"] == 2
    assert report["not_exercised"] == [{"case": "corr-04", "reason": skipped.not_exercised}]
    assert sum(row["count"] for row in report["root_causes"]) == 1
    assert not report["release_gate"]["passed"]  # the stale case still breaks it


def test_the_gate_ignores_them_but_passes_nothing_when_nothing_was_exercised() -> None:
    skipped = score(unplayed(corr04_stale_trace(), WAITING).build(), CORR04)
    passed = score(corr04_robust_trace().build(), CORR04).model_copy(update={"case_id": "ok"})

    assert summarise([skipped, passed]).gate()["passed"]
    assert not summarise([skipped]).gate()["passed"]


def test_report_entry_gives_no_axis_verdicts_for_a_case_not_exercised() -> None:
    skipped = score(unplayed(corr04_stale_trace(), WAITING).build(), CORR04)

    entry = case_entry(skipped)

    assert entry["not_exercised"] == skipped.not_exercised
    assert entry["captured"] is None
    assert entry["e2e"] is False
    assert entry["root_cause"] is None
    assert CaseScore.model_validate(skipped.model_dump()).not_exercised == skipped.not_exercised


SUITE = """
name: one-call
tools:
  update_order:
    parameters:
      type: object
      properties:
        order_id: {type: string}
        quantity: {type: integer}
    stub: {kind: stateful, collection: orders, op: update, key: order_id}
    latency: 1.0
backend:
  orders:
    "5590": {quantity: 2}
scenarios:
  - id: second-call
    category: correction
    script:
      - say: Please change order 5590 to 3 items.
      - barge_in: {at: during_tool_prep, tool: update_order, on_call: 2, say: Make it 4.}
      - say: Thanks, bye.
    setup:
      field: quantity
      initial_value: 3
      corrected_value: 4
      action: {tool: update_order, args: {order_id: '5590', quantity: 4}}
    expected: {captured: true, active_state_correct: true, tool_args_correct: true,
               stale_write_prevented: true, backend_correct: true,
               confirmation_matches_backend: true, should_execute: true}
  - id: no-call
    category: correction
    script:
      - say: Please change order 5590 to 3 items.
      - barge_in: {at: during_tool_prep, tool: update_order, say: Make it 4.}
      - say: Thanks, bye.
    setup:
      field: quantity
      initial_value: 3
      corrected_value: 4
      action: {tool: update_order, args: {order_id: '5590', quantity: 4}}
    expected: {captured: true, active_state_correct: true, tool_args_correct: true,
               stale_write_prevented: true, backend_correct: true,
               confirmation_matches_backend: true, should_execute: true}
"""

ONE_CALL_AGENT = '''
from polygon_voice.model import (
    CallerSaid, CallStarted, EndCall, PrepareToolCall, Say, SendToolCall, ToolResult,
)


class Agent:
    """Makes one update_order call on the first request; says goodbye to anything else."""

    def __init__(self, context):
        self.context = context
        self.calls = 0

    async def respond(self, event):
        if isinstance(event, CallStarted):
            yield Say(text="Hello, how can I help?")
        elif isinstance(event, CallerSaid) and self.calls == 0 and "order" in event.text:
            self.calls += 1
            if self.context.scenario_id == "second-call":
                args = {"order_id": "5590", "quantity": 3}
                yield PrepareToolCall(call_id="u-1", tool="update_order", args=args)
                yield SendToolCall(call_id="u-1")
            yield Say(text="One moment.")
        elif isinstance(event, ToolResult):
            yield Say(text="Done: order 5590 now has 3 items.")
        elif isinstance(event, CallerSaid):
            yield Say(text="Thank you for calling. Goodbye!")
            yield EndCall()
'''


def test_a_real_run_tells_the_suites_problem_from_the_agents(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    (tmp_path / "agent.py").write_text(ONE_CALL_AGENT)
    polygon = Polygon(tmp_path)

    code, out, err = polygon("run", "suite.yaml", "--agent", "agent.py:Agent", "--out", "out")

    assert code in (0, 1), err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = {c["id"]: c for c in report["cases"]}
    # One call was made; the script waits for the second: the suite's problem.
    (skipped,) = report["not_exercised"]
    assert skipped["case"] == "second-call"
    assert (
        "the agent prepared 1 update_order call(s), the script waits for call 2"
        in (skipped["reason"])
    )
    assert cases["second-call"]["captured"] is None
    assert "Not exercised" in out
    # No call at all: the agent never acted, which is its own failure.
    assert cases["no-call"]["root_cause"] == "request_dropped"
    assert cases["no-call"]["evidence"]["script_unplayed"]
    assert report["e2e_integrity"] == {"passed": 0, "total": 1}
    run_id = re.search(r"Run (\w+):", out)
    assert run_id is not None
    code, shown, _ = polygon("show", run_id.group(1), "--conversation", "second-call")
    assert code == 0
    assert "not exercised" in shown
    assert "waits for call 2" in " ".join(shown.split())
