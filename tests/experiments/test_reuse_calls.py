"""Per-call reuse in sweeps: a point whose scenario set or trials grew copies the calls an
earlier point of the same profile, suite version, seed and judging already made, and plays
only the others (asserted on the fake LLM server's request log and the stored rows)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from polygon_voice.api import open_store
from polygon_voice.experiments.sweep import SweepObserver, SweepOptions, SweepResult, run_sweep
from polygon_voice.experiments.sweep_file import load_sweep
from polygon_voice.store import Store, StoreError
from polygon_voice.store.sweeps import SweepPointRecord, SweepRecord
from polygon_voice.testing import FakeLLMServer, Rule
from tests.store.store_factories import make_result, make_run

SUITE = """\
name: tiny
scenarios:
  - id: hello
    script:
      - say: "Hi, where is my order 5590?"
      - say: "Thanks, bye."
  - id: refund
    script:
      - say: "I want a refund for order 7781."
      - say: "Thanks, bye."
"""

HELLO = "order 5590"


class Notes(SweepObserver):
    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)


@pytest.fixture
def server() -> FakeLLMServer:
    with FakeLLMServer([Rule(text="Your order is on its way.")]) as fake:
        yield fake


def folder(tmp_path: Path, base_url: str, temperature: float = 0.3) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "prompt.md").write_text("You are the order line.\n", encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(
        f"model: fake-a\nbase_url: {base_url}\nsystem_prompt: prompt.md\n"
        f"params: {{temperature: {temperature}}}\n",
        encoding="utf-8",
    )
    return tmp_path


def sweep(
    tmp_path: Path, store: Store, scenarios: list[str], trials: int, seed: int = 0
) -> tuple[SweepResult, list[str]]:
    path = tmp_path / "sweep.yaml"
    path.write_text(
        "name: temps\nbase: {agent: 'prompt:agent.yaml'}\nsuite: suite.yaml\n"
        f"scenarios: {scenarios}\ntrials: {trials}\nseed: {seed}\n"
        "vary:\n  temperature: {values: [0.7]}\n",
        encoding="utf-8",
    )
    notes = Notes()
    result = run_sweep(load_sweep(path), store, SweepOptions(), notes)
    return result, notes.notes


def hello_requests(server: FakeLLMServer) -> int:
    return sum(1 for r in server.requests if HELLO in str(r.body["messages"]))


def stored_rows(store: Store, run_id: str) -> dict[str, Any]:
    """A run's conversations and stage results as stored, by conversation id."""
    from polygon_voice.store.schema import conversations, stage_results

    engine = sa.create_engine(store.url)
    with engine.connect() as conn:
        calls = conn.execute(
            sa.select(conversations.c.pk, conversations.c.id, conversations.c.data).where(
                conversations.c.run_id == run_id
            )
        ).all()
        found = {}
        for pk, conversation_id, data in calls:
            stages = conn.execute(
                sa.select(stage_results.c.stage, stage_results.c.name, stage_results.c.data)
                .where(stage_results.c.conversation_pk == pk)
                .order_by(stage_results.c.stage, stage_results.c.name)
            ).all()
            found[conversation_id] = (data, [tuple(s) for s in stages])
    engine.dispose()
    return found


def test_a_grown_sweep_reuses_exactly_the_calls_it_made_before(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        first, _ = sweep(tmp_path, store, ["hello"], trials=2)
        assert [o.status for o in first.outcomes] == ["done", "done"]
        # Two points x two calls, every call the same number of requests.
        per_call = len(server.requests) / 4
        hello_per_call = hello_requests(server) / 4
        assert per_call >= 2
        assert hello_per_call >= 1
        server.clear_log()

        second, notes = sweep(tmp_path, store, ["hello", "refund"], trials=3)
        assert [o.status for o in second.outcomes] == ["done", "done"]
        # Per point only hello#3 and refund#1..3 are played: 4 calls, one of them hello.
        assert len(server.requests) == 4 * 2 * per_call
        assert hello_requests(server) == 1 * 2 * hello_per_call
        for index, (old, new) in enumerate(zip(first.outcomes, second.outcomes, strict=True)):
            assert old.run_id
            assert new.run_id
            assert old.run_id != new.run_id
            said = (
                f"2 of 6 calls reused from run {old.run_id} (same profile, suite, seed, judge), "
                "4 run"
            )
            assert f"point {index}: {said}" in notes
            assert (new.status, new.reason) == ("done", said)  # stored with the point
            before, after = stored_rows(store, old.run_id), stored_rows(store, new.run_id)
            assert set(after) == {f"{s}#{t}" for s in ("hello", "refund") for t in (1, 2, 3)}
            for reused in ("hello#1", "hello#2"):
                assert after[reused] == before[reused]
                assert after[reused][1], "the copied call keeps its stage results"
            assert store.get_run(new.run_id).status == "finished"


def test_a_narrower_sweep_plays_nothing_and_its_points_are_reused(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        sweep(tmp_path, store, ["hello", "refund"], trials=3)
        server.clear_log()
        second, _ = sweep(tmp_path, store, ["hello"], trials=2)
        assert server.requests == []
        assert [o.status for o in second.outcomes] == ["reused", "reused"]
        for outcome in second.outcomes:
            assert outcome.run_id
            assert store.conversation_ids(outcome.run_id) == {"hello#1", "hello#2"}
        assert [p.calls for p in second.leaderboard] == [2, 2]


def test_a_changed_profile_reuses_nothing(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        sweep(tmp_path, store, ["hello"], trials=2)
        per_call = len(server.requests) / 4
        server.clear_log()
        folder(tmp_path, server.base_url, temperature=0.2)  # the base point is another version
        second, notes = sweep(tmp_path, store, ["hello"], trials=3)
    assert [o.status for o in second.outcomes] == ["done", "done"]
    # The base point runs all 3 calls; the 0.7 point (unchanged) reuses its 2.
    assert len(server.requests) == (3 + 1) * per_call
    assert not any(n.startswith("point 0:") for n in notes)
    assert any(n.startswith("point 1: 2 of 3 calls reused") for n in notes)


def test_a_different_seed_reuses_nothing(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        sweep(tmp_path, store, ["hello"], trials=2)
        per_call = len(server.requests) / 4
        server.clear_log()
        second, notes = sweep(tmp_path, store, ["hello"], trials=3, seed=1)
    assert [o.status for o in second.outcomes] == ["done", "done"]
    assert len(server.requests) == 2 * 3 * per_call
    assert not any("reused" in n for n in notes)


def exercise_copy(store: Store) -> None:
    """The store's lookup of reusable calls and its copy of a call with its results."""
    now = datetime.now(UTC)
    store.create_sweep(SweepRecord("sw-1", "s", "/x.yaml", {}, "running", None, now, None))
    judging = {"judge": "deterministic", "rubric": "v3", "judge_repeats": 1}
    store.create_run(make_run("r1", config=dict(judging)))
    store.add_conversation("r1", 0, make_result("hello#1"))
    store.add_stage_result("r1", "hello#1", "checks", {"passed": True})
    store.add_stage_result("r1", "hello#1", "judge", {"score": 0.5}, "again")
    profile = {"agent": {"kind": "spec", "spec": "reference:robust"}, "conditions": {}}
    store.add_sweep_point(
        SweepPointRecord("sw-1", 0, {}, "h1", profile, "k", "r1", "done", None, None)
    )
    seed, suite_hash = 7, "sha256:abc"
    assert store.reusable_calls("h1", suite_hash, seed, judging) == {}  # not finished yet
    store.finish_run("r1", "finished", now)
    assert store.reusable_calls("h1", suite_hash, seed, judging) == {"hello#1": "r1"}
    assert store.reusable_calls("h2", suite_hash, seed, judging) == {}
    assert store.reusable_calls("h1", "sha256:other", seed, judging) == {}
    assert store.reusable_calls("h1", suite_hash, 8, judging) == {}
    other_judge = {**judging, "judge_repeats": 3}
    assert store.reusable_calls("h1", suite_hash, seed, other_judge) == {}

    store.create_run(make_run("r2"))
    store.copy_conversation("r1", "hello#1", "r2", 4)
    assert store.conversation_ids("r2") == {"hello#1"}
    assert [c.model_dump() for c in store.iter_conversations("r2")] == [
        c.model_dump() for c in store.iter_conversations("r1")
    ]
    assert store.get_stage_result("r2", "hello#1", "checks") == {"passed": True}
    assert store.get_stage_result("r2", "hello#1", "judge", "again") == {"score": 0.5}
    assert [s.index for s in store.iter_summaries("r2")] == [4]
    with pytest.raises(StoreError):  # stored there already: nothing half-copied
        store.copy_conversation("r1", "hello#1", "r2", 5)
    with pytest.raises(StoreError, match="no conversation"):
        store.copy_conversation("r1", "nope", "r2", 6)
    assert store.conversation_ids("r2") == {"hello#1"}


def test_copying_calls_on_sqlite(tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 's.db'}") as store:
        exercise_copy(store)


def test_copying_calls_on_postgres(postgres_url: str) -> None:
    with Store(postgres_url) as store:
        exercise_copy(store)
