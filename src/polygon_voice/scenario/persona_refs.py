"""Scenarios that name a stored persona (`persona_ref: p-1a2b3c4d`) instead of writing one out.

The suite file stays as written (its hash is the suite's version); the persona is looked
up when the suite runs, and the run records which persona version played which scenario.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from polygon_voice.model import Persona, Suite
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.loader import LoadedSuite
from polygon_voice.seeding import content_hash

# id -> the stored persona; raises LookupError (with a message for the user) when unknown.
PersonaLookup = Callable[[str], Persona]


def persona_version(persona: Persona) -> str:
    """The content hash of a persona: tells a refreshed persona's versions apart."""
    return content_hash(persona.model_dump_json())


def uses_stored_personas(suite: Suite) -> bool:
    """Whether any scenario names a stored persona."""
    return any(scenario.persona_ref is not None for scenario in suite.scenarios)


def resolve_persona_refs(loaded: LoadedSuite, lookup: PersonaLookup) -> LoadedSuite:
    """The suite with every `persona_ref` filled in from `lookup`; SuiteError names the first miss.

    A resolved scenario keeps its `persona_ref`, so later stages know where its persona came from.
    """
    if not uses_stored_personas(loaded.suite):
        return loaded
    scenarios = []
    for index, scenario in enumerate(loaded.suite.scenarios):
        ref = scenario.persona_ref
        if ref is not None:
            try:
                persona = lookup(ref)
            except LookupError as exc:
                raise SuiteError(
                    str(loaded.path),
                    f"scenario {scenario.id!r} references the stored persona {ref!r}: {exc}",
                    field=f"scenarios[{index}].persona_ref",
                ) from exc
            scenario = scenario.model_copy(update={"persona": persona})
        scenarios.append(scenario)
    return replace(loaded, suite=loaded.suite.model_copy(update={"scenarios": scenarios}))


def persona_links(suite: Suite) -> list[dict[str, str]]:
    """Which stored persona (and version) plays which scenario, for the run's config."""
    return [
        {
            "scenario": scenario.id,
            "persona": scenario.persona_ref,
            "version": persona_version(scenario.persona),
        }
        for scenario in suite.scenarios
        if scenario.persona_ref is not None
    ]


def without_scenarios(loaded: LoadedSuite, scenario_ids: set[str]) -> LoadedSuite:
    """The suite without the scenarios of these ids (a copy: the suite was checked on load)."""
    kept = [s for s in loaded.suite.scenarios if s.id not in scenario_ids]
    return replace(loaded, suite=loaded.suite.model_copy(update={"scenarios": kept}))
