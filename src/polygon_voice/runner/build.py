"""Wires one planned conversation: backend, stub tools, caller, agent, engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polygon_voice.agents import Agent, AgentContext, AgentFactory
from polygon_voice.caller.factory import CallerContext, make_caller
from polygon_voice.conversation import CallSetup, ConversationEngine, Hearing
from polygon_voice.model import (
    CallEnd,
    ConversationResult,
    EndReason,
    Scenario,
    Suite,
)
from polygon_voice.noise import NoiseError, hearing, language_code, require_dependencies
from polygon_voice.runner.plan import PlannedCall
from polygon_voice.seeding import derive_seed
from polygon_voice.tools import Backend, ToolConfigError, ToolSet
from polygon_voice.tools.http_server import ToolServer

if TYPE_CHECKING:
    from polygon_voice.llm import LLMClient


class AgentBuildError(Exception):
    """The user's agent factory raised while building the agent for one call."""


@dataclass
class CallBuilder:
    """Builds engines for one suite; compiles each scenario's tool set once."""

    suite: Suite
    agent_factory: AgentFactory
    run_seed: int
    # One hearing for every call (a custom ASR, a test); None: each scenario's noise level.
    hearing: Hearing | None = None
    # The run's noise level (`polygon run --noise`), over the suite's and the scenarios'.
    noise: float | None = None
    # The caller role's client for `caller: llm` scenarios; None when no model is configured.
    caller_client: LLMClient | None = None
    # Serves the stub tools over HTTP to agents that call them themselves (HTTP agents).
    tool_server: ToolServer | None = None
    _toolsets: dict[str, ToolSet] = field(default_factory=dict)
    _hearings: dict[float, Hearing] = field(default_factory=dict)

    def setup(self, planned: PlannedCall) -> CallSetup:
        """The fixed parameters of one call."""
        scenario = planned.scenario
        return CallSetup(
            conversation_id=planned.conversation_id,
            scenario_id=scenario.id,
            run_seed=self.run_seed,
            language=scenario.persona.language or self.suite.language,
            persona=scenario.persona,
            settings=self.suite.settings,
            max_turns=scenario.max_turns or self.suite.settings.max_turns,
        )

    def engine(self, planned: PlannedCall) -> ConversationEngine:
        """A ready engine; raises whatever building the user's agent raises."""
        setup = self.setup(planned)
        backend = Backend(merged_records(self.suite.backend, planned.scenario.backend))
        tools = self._toolset(planned.scenario).open(
            backend, seed_parts=(self.run_seed, planned.conversation_id)
        )
        agent = self.build_agent(planned.conversation_id, planned.scenario.id, setup.language)
        caller = make_caller(
            planned.scenario,
            CallerContext(
                conversation_id=planned.conversation_id,
                language=setup.language,
                seed=derive_seed(self.run_seed, planned.conversation_id, "caller"),
                llm_client=self.caller_client,
            ),
        )
        return ConversationEngine(setup, agent, caller, tools, self._hearing(planned.scenario))

    def check(self) -> None:
        """Compile every scenario's tools against its backend; raises ToolConfigError."""
        for scenario in self.suite.scenarios:
            records = merged_records(self.suite.backend, scenario.backend)
            try:
                self._toolset(scenario).check_backend(Backend(records))
            except ToolConfigError as exc:
                raise ToolConfigError(f"scenario {scenario.id!r}: {exc}") from exc

    def noise_level(self, scenario: Scenario) -> float:
        """A scenario's noise level: the run's if given, else the scenario's, else the suite's."""
        if self.noise is not None:
            return self.noise
        return scenario.noise if scenario.noise is not None else self.suite.settings.noise

    def check_noise(self) -> None:
        """Raise NoiseError before a run whose noise cannot work (language, dependencies)."""
        if self.hearing is not None:
            return  # a hearing given for every call is the caller's business
        noisy = [s for s in self.suite.scenarios if self.noise_level(s) > 0]
        if noisy:
            require_dependencies()
        for scenario in noisy:
            try:
                language_code(scenario.persona.language or self.suite.language)
            except NoiseError as exc:
                raise type(exc)(f"scenario {scenario.id!r}: {exc}") from exc

    def _hearing(self, scenario: Scenario) -> Hearing:
        if self.hearing is not None:
            return self.hearing
        level = self.noise_level(scenario)
        if level not in self._hearings:
            self._hearings[level] = hearing(level)
        return self._hearings[level]

    def build_agent(self, conversation_id: str, scenario_id: str, language: str) -> Agent:
        """The call's agent from the factory; AgentBuildError when the factory fails."""
        context = AgentContext(
            conversation_id=conversation_id,
            scenario_id=scenario_id,
            language=language,
            seed=derive_seed(self.run_seed, conversation_id, "agent"),
            tools=self.suite.tools,
        )
        try:
            return self.agent_factory(context)
        except Exception as exc:
            raise AgentBuildError(f"{type(exc).__name__}: {exc}") from exc

    def _toolset(self, scenario: Scenario) -> ToolSet:
        if scenario.id not in self._toolsets:
            specs = dict(self.suite.tools)
            for name, faults in scenario.faults.items():
                specs[name] = specs[name].model_copy(
                    update={"faults": [*specs[name].faults, *faults]}
                )
            self._toolsets[scenario.id] = ToolSet(specs)
        return self._toolsets[scenario.id]


def merged_records(
    suite_records: Mapping[str, Mapping[str, dict[str, Any]]],
    scenario_records: Mapping[str, Mapping[str, dict[str, Any]]],
) -> dict[str, dict[str, dict[str, Any]]]:
    """The suite's backend with the scenario's records added or replacing by key (not copied)."""
    merged = {name: dict(records) for name, records in suite_records.items()}
    for name, records in scenario_records.items():
        merged.setdefault(name, {}).update(records)
    return merged


def failed_call(setup: CallSetup, message: str) -> ConversationResult:
    """The record of a call that could not run at all (e.g. the agent could not be built)."""
    return ConversationResult(
        id=setup.conversation_id,
        scenario_id=setup.scenario_id,
        seed=setup.run_seed,
        language=setup.language,
        end=CallEnd(reason=EndReason.ERROR, time=0.0, message=message),
        turns=[],
        tool_calls=[],
        state_updates=[],
        backend_writes=[],
        trace=[],
    )
