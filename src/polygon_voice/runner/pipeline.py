"""The stages of one call after the wiring: play it, check it, judge it, probe it.

`CallPipeline` holds no store and no tally, so the same code serves the driver's own
workers (`runner/run.py`) and a remote worker (`runner/ray_executor.py`), which returns
what the pipeline made and leaves the storing to the driver. A stage's failure is added
to `errors` (conversation id, message) and never loses the call or an earlier stage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from polygon_voice.agents.http_agent import HttpAgentFactory
from polygon_voice.checks import is_case, score_case
from polygon_voice.checks.expect import check_expectations
from polygon_voice.judge import Judging, judge_stage_async
from polygon_voice.model import CaseScore, ConversationResult, ExpectResult
from polygon_voice.probes import Probing, probe_stage
from polygon_voice.runner.build import AgentBuildError, CallBuilder, failed_call, merged_records
from polygon_voice.runner.plan import PlannedCall
from polygon_voice.store.store import StageResult
from polygon_voice.tools.http_server import ToolServer

if TYPE_CHECKING:
    from polygon_voice.agents import AgentFactory
    from polygon_voice.llm import LLMClient

ErrorList = list[tuple[str, str]]


@dataclass
class CallPipeline:
    """Plays, checks, judges and probes calls of one suite with one builder."""

    builder: CallBuilder
    judging: Judging | None = field(default_factory=Judging)  # None: no judge stage
    probing: Probing | None = None  # None: no probes stage
    # Judge and probe the calls as real ones (IMP-2): a replay's caller has no known facts.
    real_calls: bool = False

    @property
    def asks_a_model(self) -> bool:
        """Whether judging or probing a call waits for a model (and may wait long)."""
        judge = self.judging.judge if self.judging is not None else None
        probe_client = self.probing.client if self.probing is not None else None
        return hasattr(judge, "run") or probe_client is not None

    async def play(self, planned: PlannedCall) -> ConversationResult:
        """One conversation; whatever goes wrong ends only this conversation."""
        return await run_one(self.builder, planned)

    def checked(
        self, planned: PlannedCall, result: ConversationResult, errors: ErrorList
    ) -> list[StageResult]:
        """The deterministic checks (stages `checks`, `expect`); none when scoring fails."""
        try:
            return stage_results(self.builder, planned, result)
        except Exception as exc:  # a scoring bug must not lose the conversation
            errors.append((result.id, f"checks failed: {type(exc).__name__}: {exc}"))
            return []

    async def judged_and_probed(
        self,
        planned: PlannedCall,
        result: ConversationResult,
        stages: list[StageResult],
        errors: ErrorList,
        probes: bool = True,
    ) -> list[StageResult]:
        """Stages `conversation_checks`, `judge` and (when `probes`) `probes`."""
        later: list[StageResult] = []
        try:  # on its own: a judge bug must not lose the three-layer checks either
            later.extend(await self._judged(planned, result, stages))
        except Exception as exc:
            errors.append((result.id, f"judge failed: {type(exc).__name__}: {exc}"))
        try:  # after the judge and apart from it: probes never feed the verdict (PROBE-3)
            later.extend(await self._probed(planned, result) if probes else [])
        except Exception as exc:
            errors.append((result.id, f"probes failed: {type(exc).__name__}: {exc}"))
        return later

    async def aclose(self, agent_factory: AgentFactory, caller: LLMClient | None) -> None:
        """Close what the run opened: the tool server, the model clients, the agents'."""
        if self.builder.tool_server is not None:
            self.builder.tool_server.close()
        if caller is not None:
            # Its HTTP connections belong to this event loop; the client reopens if reused.
            await caller.aclose()
        if self.judging is not None:
            await self.judging.aclose()  # the judge model's client, likewise
        if self.probing is not None and self.probing.client is not None:
            await self.probing.client.aclose()  # the probe model's client, likewise
        close_agents = getattr(agent_factory, "aclose", None)
        if close_agents is not None:  # e.g. the prompt agent's shared model client
            await close_agents()

    async def _judged(
        self, planned: PlannedCall, result: ConversationResult, stages: list[StageResult]
    ) -> list[StageResult]:
        # Stages "conversation_checks" and "judge"; the judge reads the case's axes if any.
        if self.judging is None:
            return []
        suite = self.builder.suite
        case = next((s for _, _, s in stages if isinstance(s, CaseScore)), None)
        expect = next((s for _, _, s in stages if isinstance(s, ExpectResult)), None)
        initial = merged_records(suite.backend, planned.scenario.backend)
        checks, judgement = await judge_stage_async(
            self.judging,
            suite,
            planned.scenario,
            result,
            case,
            initial,
            expect,
            real_call=self.real_calls,
        )
        return [("conversation_checks", "", checks), ("judge", "", judgement)]

    async def _probed(self, planned: PlannedCall, result: ConversationResult) -> list[StageResult]:
        # Stage "probes": reads the conversation (and the case's backend), not the judgement.
        if self.probing is None:
            return []
        suite = self.builder.suite
        initial = merged_records(suite.backend, planned.scenario.backend)
        probes = await probe_stage(
            self.probing,
            result,
            planned.scenario,
            suite.tools,
            initial,
            real_call=self.real_calls,
        )
        return [("probes", "", probes)]


def serve_tools_if_needed(builder: CallBuilder) -> None:
    """HTTP agents may call their tools themselves: serve the stubs to them on loopback."""
    factory = builder.agent_factory
    if isinstance(factory, HttpAgentFactory):
        builder.tool_server = ToolServer.start()
        factory.tool_server = builder.tool_server.base_url
        factory.configure(builder.suite.settings)  # deadline, byte cap, connections


def stage_results(
    builder: CallBuilder, planned: PlannedCall, result: ConversationResult
) -> list[StageResult]:
    """The deterministic checks: a three-layer case's axes (stage "checks") and the scenario's
    expected outcome (stage "expect"); none for a scenario that states neither."""
    scenario = planned.scenario
    initial = merged_records(builder.suite.backend, scenario.backend)
    stages: list[StageResult] = []
    case = None
    if is_case(scenario):
        case = score_case(result, scenario, builder.suite.tools, initial)
        stages.append(("checks", "", case))
    expect = check_expectations(result, scenario, initial, case, builder.suite.tools)
    if expect is not None:
        stages.append(("expect", "", expect))
    return stages


async def run_one(builder: CallBuilder, planned: PlannedCall) -> ConversationResult:
    """One conversation; whatever goes wrong ends only this conversation."""
    setup = builder.setup(planned)
    try:
        engine = builder.engine(planned)
    except Exception as exc:
        what = "build the agent" if isinstance(exc, AgentBuildError) else "set up the call"
        detail = str(exc) if isinstance(exc, AgentBuildError) else f"{type(exc).__name__}: {exc}"
        return failed_call(setup, f"could not {what}: {detail}")
    server = builder.tool_server
    if server is not None:
        server.register(setup.conversation_id, engine)
    try:
        return await engine.run()
    except Exception as exc:  # a harness bug must not take the other conversations down
        message = f"internal error in the engine: {type(exc).__name__}: {exc}"
        try:
            return engine.abort(message)
        except Exception:
            return failed_call(setup, message)
    finally:
        if server is not None:
            server.unregister(setup.conversation_id)
