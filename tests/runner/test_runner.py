"""Planning, wiring and running a suite against the real store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from polygon_voice.agents import as_factory
from polygon_voice.model import Action, CallerSaid, EndCall, Event, Say, Suite
from polygon_voice.runner import SuiteRunner, count_calls, merged_records, plan_calls
from polygon_voice.store import Store
from tests.store.store_factories import make_run

SUITE = Suite.model_validate(
    {
        "name": "tiny",
        "repeat": 2,
        "scenarios": [
            {"id": "a", "script": [{"say": "hello"}]},
            {"id": "b", "script": [{"say": "bye"}]},
        ],
    }
)


class Polite:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallerSaid):
            yield Say(text=f"Noted: {event.text}")
            yield EndCall()


def new_store(tmp_path: Path, run_id: str) -> Store:
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run(run_id))
    return store


def test_the_plan_is_ordered_and_ids_carry_the_repeat() -> None:
    planned = list(plan_calls(SUITE))
    assert [p.conversation_id for p in planned] == ["a#1", "a#2", "b#1", "b#2"]
    assert [p.index for p in planned] == [0, 1, 2, 3]
    assert count_calls(SUITE) == 4


def test_scenario_records_add_to_and_replace_the_suites() -> None:
    merged = merged_records(
        {"orders": {"1": {"q": 1}, "2": {"q": 2}}},
        {"orders": {"2": {"q": 20}, "3": {"q": 3}}, "users": {"u": {}}},
    )
    assert merged == {"orders": {"1": {"q": 1}, "2": {"q": 20}, "3": {"q": 3}}, "users": {"u": {}}}


def test_every_call_is_stored_as_it_finishes(tmp_path: Path) -> None:
    store = new_store(tmp_path, "r1")
    seen: list[str] = []
    runner = SuiteRunner(
        SUITE,
        as_factory(Polite, "polite"),
        store,
        "r1",
        seed=3,
        concurrency=3,
        on_finished=lambda result: seen.append(result.id),
    )
    tally = runner.run()
    assert tally.conversations == 4
    assert sorted(seen) == ["a#1", "a#2", "b#1", "b#2"]
    assert store.conversation_ids("r1") == set(seen)
    stored = list(store.iter_conversations("r1"))
    assert [c.id for c in stored] == ["a#1", "a#2", "b#1", "b#2"]  # plan order, not finish order
    assert stored[2].turns[-1].text == "Noted: bye"
    assert tally.end_reasons == {"agent_hangup": 4}


def test_skipped_ids_are_not_run_again(tmp_path: Path) -> None:
    store = new_store(tmp_path, "r2")
    runner = SuiteRunner(
        SUITE, as_factory(Polite, "polite"), store, "r2", skip=frozenset({"a#1", "b#2"})
    )
    assert runner.run().conversations == 2
    assert store.conversation_ids("r2") == {"a#2", "b#1"}


def test_an_agent_that_cannot_be_built_fails_only_its_calls(tmp_path: Path) -> None:
    store = new_store(tmp_path, "r3")

    def picky(context: object) -> Polite:
        if getattr(context, "scenario_id", "") == "a":
            raise ValueError("no config for a")
        return Polite()

    tally = SuiteRunner(SUITE, as_factory(picky, "picky"), store, "r3").run()
    assert tally.end_reasons == {"error": 2, "agent_hangup": 2}
    assert "could not build the agent: ValueError: no config for a" in tally.errors[0][1]


def test_workers_take_turns_even_with_agents_that_never_wait(tmp_path: Path) -> None:
    store = new_store(tmp_path, "r4")
    builders: set[int] = set()

    def tracked(context: object) -> Polite:
        task = asyncio.current_task()
        assert task is not None
        builders.add(id(task))
        return Polite()

    SuiteRunner(SUITE, as_factory(tracked, "tracked"), store, "r4", concurrency=3).run()
    assert len(builders) == 3


def test_a_call_that_cannot_be_set_up_says_so_and_not_that_the_agent_failed(
    tmp_path: Path,
) -> None:
    store = new_store(tmp_path, "r5")
    suite = Suite.model_validate(
        {"name": "fr", "language": "fr", "scenarios": [{"id": "a", "caller": "persona"}]}
    )
    tally = SuiteRunner(suite, as_factory(Polite, "polite"), store, "r5").run()
    assert tally.end_reasons == {"error": 1}
    assert tally.errors[0][1].startswith("could not set up the call: ")
