"""Resolving agents by name, module path and file path."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from polygon_voice.agents import (
    AgentContext,
    AgentLoadError,
    as_factory,
    available_agents,
    register_agent,
    resolve_agent,
)
from polygon_voice.model import Action, Event, Say

CONTEXT = AgentContext(conversation_id="c", scenario_id="s", language="en", seed=1)


class NeedsContext:
    def __init__(self, context: AgentContext) -> None:
        self.context = context

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        yield Say(text=self.context.conversation_id)


class NoArguments:
    def respond(self, event: Event) -> list[Action]:
        return []


def test_a_class_with_a_context_gets_it_and_each_call_a_fresh_agent() -> None:
    factory = as_factory(NeedsContext, "t")
    first, second = factory(CONTEXT), factory(CONTEXT)
    assert isinstance(first, NeedsContext)
    assert first is not second
    assert first.context is CONTEXT


def test_a_class_without_arguments_is_built_without_context() -> None:
    assert isinstance(as_factory(NoArguments, "t")(CONTEXT), NoArguments)


def test_a_ready_object_is_refused_so_calls_never_share_state() -> None:
    with pytest.raises(AgentLoadError, match="fresh agent"):
        as_factory(NoArguments(), "t")


def test_a_factory_that_builds_no_agent_is_reported() -> None:
    factory = as_factory(lambda context: object(), "weird")
    with pytest.raises(AgentLoadError, match="without a respond"):
        factory(CONTEXT)


def test_registered_names_resolve_and_are_listed() -> None:
    register_agent("test:needs-context")(NeedsContext)
    assert "test:needs-context" in available_agents()
    assert isinstance(resolve_agent("test:needs-context")(CONTEXT), NeedsContext)


def test_module_attr_and_file_attr(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text(
        "class Bot:\n    def respond(self, event):\n        return []\n"
    )
    by_file = resolve_agent("my_bot.py:Bot", base_dir=tmp_path)
    assert type(by_file(CONTEXT)).__name__ == "Bot"
    by_module = resolve_agent("my_bot:Bot", base_dir=tmp_path)
    assert type(by_module(CONTEXT)).__name__ == "Bot"
    sys.modules.pop("my_bot", None)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no-such-agent", "unknown agent 'no-such-agent'"),
        ("no_such_module_xyz:Agent", "cannot import 'no_such_module_xyz'"),
        ("missing.py:Agent", "no file missing.py"),
        ("json:NoSuchThing", "has no 'NoSuchThing'"),
        ("json:", "name the object"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match=message):
        resolve_agent(spec, base_dir=tmp_path)


def test_a_file_that_fails_to_import_is_reported(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise RuntimeError('nope')\n")
    with pytest.raises(AgentLoadError, match=r"importing broken.py failed: .*RuntimeError: nope"):
        resolve_agent("broken.py:Agent", base_dir=tmp_path)
