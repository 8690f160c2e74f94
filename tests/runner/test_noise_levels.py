"""Which noise level each call gets (run, scenario, suite), and the checks before a run."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.agents import as_factory
from polygon_voice.model import Action, CallerSaid, EndCall, Event, Say, Speaker, Suite
from polygon_voice.noise import NoiseUnavailable, UnsupportedLanguage, distort
from polygon_voice.runner import CallBuilder, SuiteRunner, plan_calls
from polygon_voice.seeding import derive_seed
from polygon_voice.store import Store
from tests.store.store_factories import make_run

SAID = "My order number is 5590 and I need fifty boxes by Friday, thank you."


def suite(noise: float = 0.0, **scenario_noise: float | None) -> Suite:
    scenarios: list[dict[str, Any]] = [
        {"id": name, "script": [{"say": SAID}], "noise": level}
        for name, level in scenario_noise.items()
    ]
    return Suite.model_validate(
        {"name": "noisy", "settings": {"noise": noise}, "scenarios": scenarios}
    )


class Echo:
    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallerSaid):
            yield Say(text="ok")
            yield EndCall()


def builder(target: Suite, noise: float | None = None) -> CallBuilder:
    return CallBuilder(target, as_factory(Echo, "echo"), run_seed=5, noise=noise)


def test_the_run_level_wins_then_the_scenario_then_the_suite() -> None:
    target = suite(0.4, quiet=0.0, loud=0.9, default=None)
    by_id = {s.id: s for s in target.scenarios}
    plain = builder(target)
    assert [plain.noise_level(by_id[i]) for i in ("quiet", "loud", "default")] == [0.0, 0.9, 0.4]
    forced = builder(target, noise=0.2)
    assert {forced.noise_level(s) for s in target.scenarios} == {0.2}


async def heard_by_scenario(made: CallBuilder, target: Suite) -> dict[str, str]:
    heard = {}
    for planned in plan_calls(target):
        result = await made.engine(planned).run()
        heard[planned.scenario.id] = next(
            t.heard for t in result.turns if t.speaker is Speaker.CALLER
        )
    return heard


async def test_a_scenario_with_noise_zero_hears_the_clear_line() -> None:
    target = suite(1.0, quiet=0.0, loud=None)
    heard = await heard_by_scenario(builder(target), target)
    assert heard["quiet"] == SAID
    assert heard["loud"] != SAID


async def test_the_agent_hears_the_distorted_text_seeded_by_conversation_and_turn() -> None:
    target = suite(1.0, loud=None)
    planned = next(iter(plan_calls(target)))
    heard = (await heard_by_scenario(builder(target), target))["loud"]
    seed = derive_seed(5, planned.conversation_id, "hearing", 1)
    assert heard == distort(SAID, 1.0, "en", seed).heard != SAID


async def test_a_given_hearing_is_used_for_every_call() -> None:
    def shout(text: str, language: str, seed: int) -> str:
        return text.upper()

    target = suite(0.0, a=0.5, b=None)
    made = CallBuilder(target, as_factory(Echo, "echo"), 0, hearing=shout)
    assert await heard_by_scenario(made, target) == {"a": SAID.upper(), "b": SAID.upper()}


def test_an_unsupported_language_is_named_before_the_run() -> None:
    target = Suite.model_validate(
        {
            "name": "fr",
            "language": "fr",
            "scenarios": [
                {"id": "quiet", "script": [{"say": "bonjour"}]},
                {"id": "loud", "noise": 0.5, "script": [{"say": "bonjour"}]},
            ],
        }
    )
    builder(target, noise=0.0).check_noise()  # no call is noisy: any language will do
    with pytest.raises(UnsupportedLanguage, match=r"scenario 'loud'.*'fr'.*de, en, hr, ru"):
        builder(target).check_noise()


def persona_suite(language: str) -> Suite:
    return Suite.model_validate(
        {
            "name": "mixed",
            "language": "fr",
            "settings": {"noise": 0.3},
            "scenarios": [
                {"id": "caller", "persona": {"language": language}, "script": [{"say": "dan"}]}
            ],
        }
    )


def test_a_persona_language_overrides_the_suites_for_the_check() -> None:
    builder(persona_suite("hr")).check_noise()
    with pytest.raises(UnsupportedLanguage, match=r"scenario 'caller'.*'it'"):
        builder(persona_suite("it")).check_noise()


def test_a_missing_extra_stops_a_noisy_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    builder(suite(0.0, a=None)).check_noise()
    with pytest.raises(NoiseUnavailable, match="polygon-voice"):
        builder(suite(0.0, a=None), noise=0.5).check_noise()


def test_a_noisy_run_stores_said_and_heard(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run("r"))
    target = suite(0.0, a=None, b=None)
    SuiteRunner(target, as_factory(Echo, "echo"), store, "r", seed=3, noise=1.0).run()
    for result in store.iter_conversations("r"):
        caller = next(t for t in result.turns if t.speaker is Speaker.CALLER)
        assert caller.text == SAID
        assert caller.heard != SAID
