"""Which caller plays a scenario (scenario.caller): scripted, persona engine, or a model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from polygon_voice.caller.base import Caller
from polygon_voice.caller.persona import PersonaCaller
from polygon_voice.caller.scripted import ScriptedCaller
from polygon_voice.model import Scenario

if TYPE_CHECKING:
    from polygon_voice.llm import LLMClient


@dataclass(frozen=True)
class CallerContext:
    """What a caller is built with, besides its scenario."""

    conversation_id: str
    language: str
    seed: int
    # The caller role's client, for `caller: llm` scenarios (None: no model configured).
    llm_client: LLMClient | None = None


def caller_kind(scenario: Scenario) -> str:
    """The caller a scenario gets: `auto` is scripted with a script, else the persona engine."""
    if scenario.caller != "auto":
        return scenario.caller
    return "scripted" if scenario.script else "persona"


def make_caller(scenario: Scenario, context: CallerContext) -> Caller:
    """Build the caller for one conversation."""
    kind = caller_kind(scenario)
    if kind == "scripted":
        return ScriptedCaller(scenario.script)
    if kind == "llm":
        # Imported here: a run without a model never loads the LLM caller.
        from polygon_voice.caller.llm import LLMCaller, no_caller_model

        if context.llm_client is None:
            raise no_caller_model(scenario.id)
        return LLMCaller(scenario.persona, context.language, context.llm_client, context.seed)
    if kind == "persona":
        # The persona engine plays the persona; a script's barge-ins come along as events.
        events = [step.barge_in for step in scenario.script if step.barge_in is not None]
        return PersonaCaller(scenario.persona, context.language, context.seed, events=events)
    raise NotImplementedError(f"the {kind} caller is not available yet")
