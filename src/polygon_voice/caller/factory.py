"""Which caller plays a scenario (scenario.caller): scripted, persona engine, or a model."""

from __future__ import annotations

from dataclasses import dataclass

from polygon_voice.caller.base import Caller
from polygon_voice.caller.scripted import ScriptedCaller
from polygon_voice.model import Scenario


@dataclass(frozen=True)
class CallerContext:
    """What a caller is built with, besides its scenario."""

    conversation_id: str
    language: str
    seed: int


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
    raise NotImplementedError(f"the {kind} caller is not available yet")
