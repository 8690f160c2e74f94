"""One replayed call wired up: the recorded answers as stubs, the replay caller, the engine.

`ReplayCallBuilder` is the runner's `CallBuilder` for a replay (the runner takes it through
its `builder_factory`): each call keeps the stored call's id and scenario id, its tools are
the run's tool names with this call's recorded answers, and its caller is a `ReplayCaller`.
`ReplayEngine` is the conversation engine with two hooks the caller and the stubs use: a
trace note, and ending the call with a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from polygon_voice.caller.base import Caller
from polygon_voice.conversation import CallSetup, ConversationEngine
from polygon_voice.model import EndReason, Persona
from polygon_voice.replay.caller import OnMismatch, ReplayCaller, ReplayHooks
from polygon_voice.replay.plan import ReplayedCall
from polygon_voice.replay.stubs import RecordedAnswers, ReplayStub
from polygon_voice.runner.build import CallBuilder, merged_records
from polygon_voice.runner.plan import PlannedCall
from polygon_voice.seeding import derive_seed
from polygon_voice.tools import Backend, ToolSet
from polygon_voice.tools.runtime import CompiledTool


class ReplayEngine(ConversationEngine):
    """The engine, with a trace note and an end-with-message for the replay's parts."""

    def replay_note(self, kind: str, data: dict[str, Any]) -> None:
        """A trace entry of the replay (a mismatch, a stub's answer)."""
        self._record_note("engine", kind, data)

    def stop_replay(self, message: str) -> None:
        """End the call as the caller hanging up, saying why (`--on-mismatch stop`)."""
        self._stop(EndReason.CALLER_HANGUP, message)


class _Notes:
    """Forwards notes to the engine once it exists (the stubs are built before it)."""

    def __init__(self) -> None:
        self.engine: ReplayEngine | None = None

    def note(self, kind: str, data: dict[str, Any]) -> None:
        if self.engine is not None:
            self.engine.replay_note(kind, data)

    def stop(self, message: str) -> None:
        if self.engine is not None:
            self.engine.stop_replay(message)


class ReplayToolSet(ToolSet):
    """The run's tools with one call's recorded answers as their stubs."""

    def __init__(self, base: ToolSet, answers: RecordedAnswers, notes: _Notes) -> None:
        self._tools: dict[str, CompiledTool] = {}
        for name in base.names:
            tool = base.get(name)
            assert tool is not None
            stub = ReplayStub(name, answers, notes.note)
            self._tools[name] = replace(tool, stub=stub)


@dataclass
class ReplayCallBuilder(CallBuilder):
    """Builds the engine of each replayed call (see the module doc)."""

    calls: dict[str, ReplayedCall] = field(default_factory=dict)  # by the suite's scenario id
    on_mismatch: OnMismatch = "continue"

    def setup(self, planned: PlannedCall) -> CallSetup:
        """The call keeps the stored call's id, scenario id and language."""
        call = self.calls[planned.scenario.id]
        return replace(
            super().setup(planned),
            conversation_id=call.call_id,
            scenario_id=call.scenario_id,
            language=call.language,
        )

    def engine(self, planned: PlannedCall) -> ConversationEngine:
        """A ready engine; raises whatever building the user's agent raises."""
        setup = self.setup(planned)
        call = self.calls[planned.scenario.id]
        notes = _Notes()
        backend = Backend(merged_records(self.suite.backend, planned.scenario.backend))
        base = self._toolset(planned.scenario)
        tools = ReplayToolSet(base, RecordedAnswers.of(call.tool_calls), notes).open(
            backend, seed_parts=(self.run_seed, setup.conversation_id)
        )
        agent = self.build_agent(setup.conversation_id, setup.scenario_id, setup.language)
        caller = ReplayCaller(
            call,
            self.on_mismatch,
            ReplayHooks(note=notes.note, stop=notes.stop),
            llm_caller=self._llm_caller(setup),
        )
        engine = ReplayEngine(setup, agent, caller, tools, self._hearing(planned.scenario))
        notes.engine = engine
        return engine

    def _llm_caller(self, setup: CallSetup) -> Any:
        client = self.caller_client
        if client is None or self.on_mismatch != "llm":
            return None
        from polygon_voice.caller.llm import LLMCaller

        seed = derive_seed(self.run_seed, setup.conversation_id, "caller")

        def build(persona: Persona) -> Caller:
            return LLMCaller(persona, setup.language, client, seed)

        return build
