"""The research corpora as they are published (the project's `../shared/data`): every record of
each sample imports, detected as its format, with its tool calls and labels. The expected
counts are taken from the raw files, so these tests say whether Polygon kept everything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.imports.convert import import_entry
from polygon_voice.imports.formats import abcd
from polygon_voice.imports.formats.taubench import WRITE_TOOLS
from polygon_voice.imports.run import ImportOptions, ImportSummary, import_calls
from polygon_voice.model import ConversationResult
from polygon_voice.store import Store, resolve_db_url
from tests.cli.conftest import Polygon

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TAU = "tau_bench_v1_airline/gpt-4o-airline_trial0.json"
SGD = "sgd/sgd_train_transactional_sample.json"
TM4 = "taskmaster/TM-4-2024/data/data_07.json"
TM1 = "taskmaster/TM-1-2019/sample.json"
ABCD = "abcd/abcd_sample.json"


def data(name: str) -> Path:
    path = DATA / name
    if not path.is_file():
        pytest.skip(f"../shared/data is absent: {name} is not on this machine")
    return path


def raw(name: str) -> Any:
    return json.loads(data(name).read_text(encoding="utf-8"))


def imported(tmp_path: Path, *names: str) -> tuple[ImportSummary, list[ConversationResult]]:
    """Import the files into a fresh database: the summary and the stored conversations."""
    store = Store(resolve_db_url(str(tmp_path / "research.db")))
    try:
        summary = import_calls(store, ImportOptions(tuple(str(data(n)) for n in names)))
        stored = [] if summary.run_id is None else list(store.iter_conversations(summary.run_id))
    finally:
        store.close()
    return summary, stored


def tool_count(stored: list[ConversationResult]) -> int:
    return sum(len(result.tool_calls) for result in stored)


def entries(stored: list[ConversationResult]) -> Iterator[dict[str, Any]]:
    for result in stored:
        entry = import_entry(result)
        assert entry is not None
        yield entry


def test_tau_bench_trajectories_import_through_the_command_with_their_gold_actions(
    polygon: Polygon,
) -> None:
    path = data(TAU)
    code, out, err = polygon("import", str(path), "--format", "auto", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert (summary["imported"], summary["skipped"], summary["failed"]) == (50, 0, 0)
    assert summary["formats"] == {str(path): {"taubench": 50}}
    assert summary["also_matched"] == {}
    records = raw(TAU)
    store = Store(resolve_db_url(str(polygon.db)))
    try:
        stored = {r.id: r for r in store.iter_conversations(summary["run_id"])}
    finally:
        store.close()
    writes = WRITE_TOOLS["airline"]
    for record in records:
        result = stored[f"tau-{record['task_id']}-t{record['trial']}"]
        entry = import_entry(result)
        assert entry is not None
        assert entry["metadata"]["reward"] == record["reward"]  # the label is kept
        gold = [a for a in record["info"]["task"]["actions"] if a["name"] in writes]
        tools = entry["expect"]["tools"]
        assert tools["exactly"] == [{"tool": a["name"], "args": a["kwargs"]} for a in gold]
        assert tools["exactly_among"] == sorted(writes)
        assert entry["expect"].get("says", []) == record["info"]["task"]["outputs"]
        assert len(result.tool_calls) == sum(len(m.get("tool_calls") or []) for m in record["traj"])
        failed = [m for m in record["traj"] if m["role"] == "tool" and m["content"][:5] == "Error"]
        assert sum(c.error_message.startswith("Error") for c in result.tool_calls) == len(failed)


def test_sgd_dialogues_import_with_every_service_call(tmp_path: Path) -> None:
    dialogues = raw(SGD)
    frames = [f for d in dialogues for t in d["turns"] for f in t["frames"]]
    calls = [f for f in frames if "service_call" in f]
    summary, stored = imported(tmp_path, SGD)
    assert (summary.imported, len(summary.failed), len(summary.skipped)) == (200, 0, 0)
    assert summary.source_formats() == ["sgd"]
    assert tool_count(stored) == len(calls) == 572  # the README's count
    assert {c.tool for r in stored for c in r.tool_calls} == {
        f["service_call"]["method"] for f in calls
    }
    assert all(entry["metadata"]["services"] for entry in entries(stored))


def test_taskmaster_dialogues_import_with_their_api_calls(tmp_path: Path) -> None:
    dialogues = raw(TM4)
    api_calls = [
        a
        for d in dialogues
        for u in d["utterances"]
        for a in u["annotations"]
        if a["name"] == "api_call"
    ]
    summary, stored = imported(tmp_path, TM4, TM1)
    assert (summary.imported, len(summary.failed)) == (len(dialogues) + 1, 0)
    assert len(dialogues) == 210
    assert summary.source_formats() == ["taskmaster"]
    assert tool_count(stored) == len(api_calls)
    assert {c.tool for r in stored for c in r.tool_calls} == {a["value"] for a in api_calls}
    scenarios = [e["metadata"].get("scenario") for e in entries(stored)]
    assert sum(s is not None for s in scenarios) == len(dialogues)


def test_taskmaster_rating_files_are_not_taken_for_calls(tmp_path: Path) -> None:
    name = "taskmaster/TM-4-2024/reward/reward_06.json"
    summary, stored = imported(tmp_path, name)
    assert summary.imported == 0
    assert stored == []
    assert len(summary.failed) == len(raw(name))
    assert all("matches no known format" in f.message for f in summary.failed)


def test_abcd_chats_import_with_their_actions(tmp_path: Path) -> None:
    chats = raw(ABCD)
    summary, stored = imported(tmp_path, ABCD)
    assert (summary.imported, len(summary.failed)) == (len(chats), 0)
    actions = [line for chat in chats for line in chat["original"] if line[0] == "action"]
    assert tool_count(stored) == len(actions)
    for chat, result in zip(chats, stored, strict=True):
        entry = import_entry(result)
        assert entry is not None
        assert entry["metadata"]["subflow"] == chat["scenario"]["subflow"]


def test_abcd_action_texts_name_the_same_action_as_the_labels() -> None:
    """Without `delexed` labels the action is read from its text: on the real chats that
    reading must give the name the labels give."""
    pairs = [
        (original[1], label["targets"][2])
        for chat in raw(ABCD)
        for original, label in zip(chat["original"], chat["delexed"], strict=True)
        if original[0] == "action"
    ]
    assert pairs
    for said, name in pairs:
        assert (
            abcd.FORMAT.parse({"convo_id": 1, "original": [["action", said]]}).tool_calls[0].tool
            == name
        ), said
