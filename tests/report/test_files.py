"""report.json and transcripts.jsonl are valid, ordered, and streamed from the store."""

from __future__ import annotations

import json
from pathlib import Path

from polygon_voice.model import CallEnd, ConversationResult, EndReason, Speaker, Turn
from polygon_voice.report import write_run_files
from polygon_voice.store import RunRecord, Store
from tests.store.store_factories import make_run


def result(conversation_id: str, reason: EndReason, turns: int) -> ConversationResult:
    return ConversationResult(
        id=conversation_id,
        scenario_id=conversation_id.split("#")[0],
        seed=1,
        language="en",
        end=CallEnd(reason=reason, time=1.0, message="m" if reason is EndReason.ERROR else ""),
        turns=[
            Turn(index=i, speaker=Speaker.AGENT, text="hi", heard="hi", start=i, end=i + 0.5)
            for i in range(turns)
        ],
        tool_calls=[],
        state_updates=[],
        backend_writes=[],
        trace=[],
    )


def make_store(tmp_path: Path) -> tuple[Store, RunRecord]:
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    run = make_run("run1")
    store.create_run(run)
    return store, run


def test_an_empty_run_gives_valid_files(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    report, transcripts = write_run_files(store, store.get_run("run1"), tmp_path / "out")
    data = json.loads(report.read_text())
    assert data["conversations"] == []
    assert data["summary"]["conversations"] == 0
    assert transcripts.read_text() == ""


def test_files_follow_the_plan_order_and_sum_up(tmp_path: Path) -> None:
    store, _ = make_store(tmp_path)
    store.add_conversation("run1", 1, result("b", EndReason.ERROR, 2))
    store.add_conversation("run1", 0, result("a", EndReason.AGENT_HANGUP, 3))
    report, transcripts = write_run_files(store, store.get_run("run1"), tmp_path / "out")
    data = json.loads(report.read_text())
    assert [c["id"] for c in data["conversations"]] == ["a", "b"]
    assert data["conversations"][1] == {
        "id": "b",
        "scenario_id": "b",
        "trial": 1,
        "end_reason": "error",
        "end_message": "m",
        "turns": 2,
        "tool_calls": 0,
        "wer": None,  # no caller turns
        "not_exercised": None,
        "failures": {},
    }
    assert data["summary"] == {
        "conversations": 2,
        "turns": 5,
        "tool_calls": 0,
        "end_reasons": {"agent_hangup": 1, "error": 1},
        # Neither scenario states an expected outcome.
        "expectations": {"met": 0, "not_met": 0, "not_exercised": 0, "unstated": 2},
        "not_exercised": 0,
        "failures": {},
    }
    assert data["run_id"] == "run1"
    lines = transcripts.read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["a", "b"]
    assert "run1" not in transcripts.read_text()  # nothing run-specific in transcripts
    assert not list((tmp_path / "out").glob("*.tmp"))
