"""Running a persona caller against a hand-written agent through the real engine."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from polygon_voice.agents import Agent
from polygon_voice.caller.persona import PersonaCaller
from polygon_voice.conversation import CallSetup, ConversationEngine
from polygon_voice.model import (
    BargeInStep,
    ConversationResult,
    EngineSettings,
    Persona,
    Speaker,
    ToolSpec,
)
from polygon_voice.tools import Backend, ToolSet

ORDER = {
    "goal": "Change the quantity of order 5590 to 3.",
    "facts": {"order_id": "5590", "quantity": 3},
}


def persona(**fields: Any) -> Persona:
    """A persona wanting order 5590 changed to 3, with the given fields on top."""
    return Persona.model_validate({**ORDER, **fields})


def call(
    agent: Agent,
    who: Persona,
    language: str = "en",
    seed: int = 1,
    events: Sequence[BargeInStep] | None = None,
    tools: dict[str, dict[str, Any]] | None = None,
    max_turns: int = 60,
) -> ConversationResult:
    """One whole call between `agent` and a persona caller (virtual time, no wall waits)."""
    specs = {name: ToolSpec.model_validate(spec) for name, spec in (tools or {}).items()}
    runtime = ToolSet(specs).open(Backend({}), seed_parts=(seed, "call"))
    setup = CallSetup(
        conversation_id="call",
        scenario_id="persona",
        run_seed=seed,
        language=language,
        persona=who,
        settings=EngineSettings(),
        max_turns=max_turns,
    )
    caller = PersonaCaller(who, language, seed, events=events)
    return asyncio.run(ConversationEngine(setup, agent, caller, runtime).run())


def caller_lines(result: ConversationResult) -> list[str]:
    """What the caller said, turn by turn (barge-ins included)."""
    return [turn.text for turn in result.turns if turn.speaker is Speaker.CALLER]


def said_any(text: str, lines: Iterable[str]) -> bool:
    """Whether `text` contains one of the phrase-table lines."""
    return any(line in text for line in lines)
