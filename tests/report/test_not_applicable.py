"""How a real (imported) call's not-applicable criteria are shown: "n/a" with the reason in
the call's viewer and the terminal, never a score or "unscored"; the run's criteria table
averages over the calls that scored a criterion and counts those it did not apply to; the
run says it is imported, and that real calls have no three-layer cases or release gate."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from polygon_voice.imports.base import ImportedCall, ImportedToolCall, ImportedTurn
from polygon_voice.imports.convert import to_conversation
from polygon_voice.judge import V3, JudgeInput, judge_conversation
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.model import ConversationResult, Persona
from polygon_voice.model.judgement import ConversationChecks, Judgement
from polygon_voice.report.files import judgement_entry
from polygon_voice.report.html import render_html_report
from polygon_voice.report.terminal import judgement_view
from polygon_voice.report.views import run_view
from polygon_voice.store import RunRecord, Store

SCRIPT = '<script>alert("x")</script>'


def real_call(call_id: str, reason: str | None = None) -> ConversationResult:
    said = [
        ImportedTurn("agent", "Hello, how can I help?"),
        ImportedTurn("caller", f"Book Friday please {SCRIPT}"),
        ImportedTurn("agent", "Booked for Friday."),
    ]
    booked = ImportedToolCall("t1", "book", {"day": "friday"}, result={"ok": True}, after_turn=1)
    return to_conversation(ImportedCall(call_id, "vapi", said, [booked], ended_reason=reason))


def judged(result: ConversationResult) -> Judgement:
    given = JudgeInput(result, Persona(), ConversationChecks(), real_call=True)
    return judge_conversation(DeterministicJudge(), V3, given)


def imported_store(tmp_path: Path) -> tuple[Store, str]:
    store = Store(f"sqlite:///{tmp_path / 'polygon.db'}")
    run = RunRecord(
        id="imported0run", suite="last month", suite_path="calls.jsonl", suite_hash="h",
        agent="prod", seed=0, started_at=datetime.now(UTC), config={"kind": "imported"},
    )  # fmt: skip
    store.create_run(run)
    # One clean call (goal not applicable) and one broken call (goal scored 1).
    for index, result in enumerate((real_call("c-ok"), real_call("c-err", "pipeline-error"))):
        store.add_conversation(run.id, index, result)
        store.add_stage_result(run.id, result.id, "judge", judged(result).model_dump(mode="json"))
    store.finish_run(run.id, "finished", datetime.now(UTC))
    return store, run.id


def test_the_run_averages_over_scored_calls_and_counts_not_applicable(tmp_path: Path) -> None:
    store, run_id = imported_store(tmp_path)
    view = run_view(store, run_id)
    rows = {row["name"]: row for row in view["criteria"]}
    assert rows["goal_achievement"] == {
        "name": "goal_achievement", "mean": 1.0, "n": 1, "not_applicable": 1,
    }  # fmt: skip
    assert rows["factual_accuracy"]["mean"] is None
    assert rows["factual_accuracy"]["not_applicable"] == 2
    assert rows["dialogue_quality"]["not_applicable"] == 0
    assert view["header"]["kind"] == "imported"


def test_the_report_shows_n_a_with_the_reason_and_the_run_as_imported(tmp_path: Path) -> None:
    store, run_id = imported_store(tmp_path)
    html = render_html_report(store, [run_id])
    assert 'data-kind="imported"' in html
    assert 'data-status="not_applicable">n/a<' in html
    assert "not applicable: a real call has no ground-truth facts" in html
    assert "not applicable: real calls have no three-layer cases" in html
    assert 'data-not-applicable="2"' in html
    assert SCRIPT not in html  # the caller's words are escaped like any call's


def test_the_terminal_shows_n_a_and_why() -> None:
    judgement = judged(real_call("c-ok"))
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(judgement_view(judgement))
    text = out.getvalue()
    assert "n/a" in text
    assert "not applicable" in text
    assert "goal_achievement: a real call states no goal" in text


def test_report_json_keeps_why_each_criterion_did_not_apply() -> None:
    stored = judged(real_call("c-ok")).model_dump(mode="json")
    entry = judgement_entry(stored)
    assert entry["not_applicable"]["factual_accuracy"] == "a real call has no ground-truth facts"
    assert entry["unscored"] == []
