"""Calls are stored in groups, one commit each; a refused group is stored call by call, and
the calls already read are kept when an import is interrupted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.imports import run as import_run
from polygon_voice.imports.run import BATCH_CALLS, ImportOptions, ImportSummary, import_calls
from polygon_voice.store import Store
from polygon_voice.store.errors import ConversationExists
from tests.store.store_factories import make_result, make_run

CHAT = [
    {"role": "user", "content": "Hi, I need to move my delivery."},
    {"role": "assistant", "content": "Of course, which order is it?"},
]


def _write(path: Path, ids: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "messages": CHAT}) + "\n" for i in ids))
    return path


def _stored_ids(store: Store, run_id: str) -> list[str]:
    return [result.id for result in store.iter_conversations(run_id)]


def test_a_call_given_twice_in_one_group_fails_alone(tmp_path: Path) -> None:
    ids = [f"c{n}" for n in range(10)]
    path = _write(tmp_path / "calls.jsonl", [*ids[:5], "c2", *ids[5:]])
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    summary = import_calls(store, ImportOptions(paths=(str(path),)))
    assert summary.run_id is not None
    assert summary.imported == 10
    assert [(f.source, f.message) for f in summary.failed] == [
        (f"{path}:6", f"call 'c2' is imported twice: first from {path}:3")
    ]
    assert _stored_ids(store, summary.run_id) == ids  # stored in index order = reading order


def test_many_calls_take_few_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    groups: list[int] = []
    real = Store.add_conversations_with_results

    def counting(self: Store, run_id: str, calls: list[object]) -> None:
        groups.append(len(calls))
        real(self, run_id, calls)

    monkeypatch.setattr(Store, "add_conversations_with_results", counting)
    monkeypatch.setattr(import_run, "BATCH_SECONDS", 3600.0)  # only the size closes a group
    count = 2 * BATCH_CALLS + 5
    path = _write(tmp_path / "calls.jsonl", [f"c{n}" for n in range(count)])
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    summary = import_calls(store, ImportOptions(paths=(str(path),)))
    assert summary.imported == count
    assert groups == [BATCH_CALLS, BATCH_CALLS, 5]


def test_an_interrupted_import_keeps_every_call_it_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "calls.jsonl", [f"c{n}" for n in range(20)])
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    seen: list[str] = []

    def stop_after_seven(summary: ImportSummary) -> None:
        seen.append(summary.run_id or "")
        if summary.records == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_calls(store, ImportOptions(paths=(str(path),)), stop_after_seven)
    run_id = seen[-1]
    assert _stored_ids(store, run_id) == [f"c{n}" for n in range(7)]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'polygon.db'}")


def test_a_group_is_stored_whole_or_not_at_all(store: Store) -> None:
    store.create_run(make_run("r1"))
    store.add_conversation("r1", 0, make_result("c0"))
    group = [(1, make_result("c1"), []), (2, make_result("c0"), []), (3, make_result("c3"), [])]
    with pytest.raises(ConversationExists, match="conversation c0 is already stored in run r1"):
        store.add_conversations_with_results("r1", group)
    assert _stored_ids(store, "r1") == ["c0"]


def test_a_group_naming_one_call_twice_names_it(store: Store) -> None:
    store.create_run(make_run("r1"))
    group = [(0, make_result("a"), []), (1, make_result("b"), []), (2, make_result("b"), [])]
    with pytest.raises(ConversationExists, match="conversation b is already stored"):
        store.add_conversations_with_results("r1", group)
    assert _stored_ids(store, "r1") == []
