"""What a replay plays of a stored call: lines, bounds, skips, ids that are not scenario ids."""

from __future__ import annotations

import json
from pathlib import Path

from polygon_voice.api.replay import ReplayOptions, replay_run
from polygon_voice.imports.convert import import_entry
from polygon_voice.replay.plan import MAX_LINE_CHARS, ReplayedCall, Skipped, replayed_call
from polygon_voice.store import Store
from tests.replay.conftest import import_file


def write(tmp_path: Path, *records: dict[str, object]) -> Path:
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def chat(call_id: str, *turns: tuple[str, str]) -> dict[str, object]:
    return {"id": call_id, "messages": [{"role": r, "content": c} for r, c in turns]}


def planned(store: Store, tmp_path: Path, record: dict[str, object]) -> ReplayedCall | Skipped:
    run_id = import_file(store, write(tmp_path, record), expect=None)
    (stored,) = list(store.iter_conversations(run_id))
    return replayed_call(stored, 0)


def test_consecutive_caller_turns_are_one_line_after_the_agent_turn_they_answer(
    store: Store, tmp_path: Path
) -> None:
    record = chat(
        "c1",
        ("assistant", "Hi. How can I help?"),
        ("user", "Hello."),
        ("user", "It's about order 5590."),
        ("assistant", "Sure."),
        ("assistant", "What should change?"),
        ("user", "The quantity, to 3."),
    )
    call = planned(store, tmp_path, record)
    assert isinstance(call, ReplayedCall)
    assert call.lines == ("Hello. It's about order 5590.", "The quantity, to 3.")
    assert call.agent_before == ("Hi. How can I help?", "Sure. What should change?")


def test_a_huge_line_is_cut_to_what_an_agent_may_say(store: Store, tmp_path: Path) -> None:
    call = planned(store, tmp_path, chat("c2", ("user", "word " * 50_000)))
    assert isinstance(call, ReplayedCall)
    assert len(call.lines[0]) == MAX_LINE_CHARS


def test_a_call_without_caller_lines_is_skipped_with_a_reason(store: Store, tmp_path: Path) -> None:
    skipped = planned(store, tmp_path, chat("c3", ("assistant", "Hello?")))
    assert skipped == Skipped("c3", "the recorded call has no caller lines to play")


def test_an_invalid_expect_block_skips_the_call_naming_the_field(
    store: Store, tmp_path: Path
) -> None:
    run_id = import_file(store, write(tmp_path, chat("c4", ("user", "Hi"))), expect=None)
    (stored,) = list(store.iter_conversations(run_id))
    entry = import_entry(stored)
    assert entry is not None
    entry["expect"] = {"tools": {"called": "not a list"}}
    skipped = replayed_call(stored, 0)
    assert isinstance(skipped, Skipped)
    assert skipped.reason.startswith("its expect block is not valid: tools.called")


def test_a_call_id_that_is_no_scenario_id_is_kept(store: Store, tmp_path: Path) -> None:
    odd = "call 7/ü?"
    greeting = "Hello, you are through to the order service. How can I help?"
    record = chat(odd, ("assistant", greeting), ("user", "Where is order 5590?"))
    run_id = import_file(store, write(tmp_path, record), expect=None)
    options = ReplayOptions(agent="reference:robust", write_files=False)
    result = replay_run(run_id, options, store=store)
    (replayed,) = list(store.iter_conversations(result.run.run_id))
    assert (replayed.id, replayed.scenario_id) == (odd, odd)
    assert replayed.turns[1].text == "Where is order 5590?"
