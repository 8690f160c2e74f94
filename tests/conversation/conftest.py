"""Helpers to run one conversation with hand-made agents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from polygon_voice.agents import Agent
from polygon_voice.caller import ScriptedCaller
from polygon_voice.conversation import CallSetup, ConversationEngine
from polygon_voice.model import (
    ConversationResult,
    EngineSettings,
    Persona,
    ScriptStep,
    ToolSpec,
)
from polygon_voice.tools import Backend, ToolSet

RunCall = Callable[..., ConversationResult]


def script(*steps: dict[str, Any]) -> list[ScriptStep]:
    """Script steps from plain dicts."""
    return [ScriptStep.model_validate(step) for step in steps]


@pytest.fixture
def run_call() -> RunCall:
    """Run one call: run_call(agent, steps, tools={}, records={}, **settings)."""

    async def run(
        agent: Agent,
        steps: list[ScriptStep],
        tools: dict[str, dict[str, Any]] | None = None,
        records: dict[str, dict[str, dict[str, Any]]] | None = None,
        max_turns: int = 40,
        **settings: Any,
    ) -> ConversationResult:
        specs = {name: ToolSpec.model_validate(spec) for name, spec in (tools or {}).items()}
        runtime = ToolSet(specs).open(Backend(records or {}), seed_parts=(7, "call-1"))
        setup = CallSetup(
            conversation_id="call-1",
            scenario_id="scenario-1",
            run_seed=7,
            language="en",
            persona=Persona(),
            settings=EngineSettings(**settings),
            max_turns=max_turns,
        )
        engine = ConversationEngine(setup, agent, ScriptedCaller(steps), runtime)
        return await engine.run()

    return run  # type: ignore[return-value]
