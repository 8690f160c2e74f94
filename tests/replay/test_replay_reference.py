"""Replaying an imported run against the reference agent: stubs, ids, storage, compare."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.api import InputError
from polygon_voice.api.replay import ReplayOptions, replay_run
from polygon_voice.compare import compare
from polygon_voice.model import CallStatus, ConversationResult
from polygon_voice.replay.stubs import NO_RECORD, NOTE_KIND
from polygon_voice.store import Store
from tests.replay.conftest import ORDERS, call_record, import_judged


def replayed(store: Store, tmp_path: Path) -> tuple[str, str, dict[str, ConversationResult]]:
    imported = import_judged(store, ORDERS)
    options = ReplayOptions(agent="reference:robust", out=tmp_path / "out")
    result = replay_run(imported, options, store=store)
    calls = {c.id: c for c in store.iter_conversations(result.run.run_id)}
    return imported, result.run.run_id, calls


def recorded_results(call_id: str) -> list[object]:
    import json

    record = call_record(call_id)
    messages = record["messages"]
    assert isinstance(messages, list)
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_the_replay_is_a_stored_run_of_kind_replay(store: Store, tmp_path: Path) -> None:
    imported, replay, calls = replayed(store, tmp_path)
    record = store.get_run(replay)
    assert record.config["kind"] == "replay"
    assert record.config["replay_of"] == imported
    assert record.config["agent_spec"] == "reference:robust"
    # The call without caller lines is skipped with its reason; the others keep their ids.
    assert record.config["skipped"] == [
        {"call_id": "empty-caller", "reason": "the recorded call has no caller lines to play"}
    ]
    assert sorted(calls) == ["order-call-1", "order-call-2"]
    assert all(c.scenario_id == c.id for c in calls.values())
    assert (tmp_path / "out" / "report.json").exists()


def test_matching_calls_get_the_recorded_results_in_order(store: Store, tmp_path: Path) -> None:
    _, _, calls = replayed(store, tmp_path)
    call = calls["order-call-1"]
    # The recorded call looked the order up, updated it and looked it up again: the replay's
    # identical calls got those three results, the two lookups in their recorded order.
    assert [(c.tool, c.status) for c in call.tool_calls] == [
        ("lookup_order", CallStatus.COMPLETED),
        ("update_order", CallStatus.COMPLETED),
        ("lookup_order", CallStatus.COMPLETED),
    ]
    assert [c.result for c in call.tool_calls] == recorded_results("order-call-1")
    served = [e.data["served"] for e in call.trace if e.kind == NOTE_KIND]
    assert served == ["recorded", "recorded", "recorded"]


def test_a_call_the_record_lacks_gets_the_clear_error(store: Store, tmp_path: Path) -> None:
    _, _, calls = replayed(store, tmp_path)
    call = calls["order-call-2"]
    # The recorded call looked up once; the agent's second lookup has no recorded answer.
    first, second = call.tool_calls[0], call.tool_calls[2]
    assert first.status is CallStatus.COMPLETED
    assert first.result == recorded_results("order-call-2")[0]
    assert second.tool == "lookup_order"
    assert second.status is CallStatus.FAILED
    assert second.error_message.startswith(NO_RECORD)
    notes = [e.data for e in call.trace if e.kind == NOTE_KIND and e.data["served"] == "error"]
    assert notes
    assert notes[0]["tool"] == "lookup_order"
    assert notes[0]["args"] == '{"order_id": "7781"}'


def test_the_replay_is_judged_against_the_imported_expectation(
    store: Store, tmp_path: Path
) -> None:
    _, replay, _ = replayed(store, tmp_path)
    expect = dict(store.iter_stage_results(replay, "expect"))
    # Both replayed calls made the update the expect file names.
    assert sorted(expect) == ["order-call-1", "order-call-2"]
    assert all(raw["met"] for raw in expect.values())


def test_compare_lines_the_replay_up_with_the_imported_calls(store: Store, tmp_path: Path) -> None:
    imported, replay, _ = replayed(store, tmp_path)
    result = compare(store, [imported, replay])
    points = {row["scenario"]: (row["turn"], row["rule"]) for row in result["divergence"]}
    # Both calls part at turn 2, the read-back turn: in call 1 the reference agent's update
    # carries an idempotency key where the recorded one had none (the same words and
    # arguments otherwise); in call 2 it also looked the order up again after the update.
    assert points == {"order-call-1": (2, "tool_calls"), "order-call-2": (2, "tool_calls")}


def test_a_run_that_is_not_imported_is_refused(store: Store, tmp_path: Path) -> None:
    imported, replay, _ = replayed(store, tmp_path)
    with pytest.raises(InputError, match=rf"run {replay} is not an imported run"):
        replay_run(replay, ReplayOptions(agent="reference:robust"), store=store)
    with pytest.raises(InputError, match="no-such-run"):
        replay_run("no-such-run", ReplayOptions(agent="reference:robust"), store=store)
    assert imported != replay
