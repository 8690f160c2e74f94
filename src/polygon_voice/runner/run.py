"""Runs a suite: conversations in parallel on one event loop, each stored as it finishes."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from polygon_voice.agents import AgentFactory
from polygon_voice.agents.http_agent import HttpAgentFactory
from polygon_voice.checks import RunSummary, is_case, score_case
from polygon_voice.checks.expect import check_expectations
from polygon_voice.conversation import Hearing
from polygon_voice.judge import Judging, judge_stage_async
from polygon_voice.judge.run import judge_answers_unusable, judge_model_failed
from polygon_voice.model import CaseScore, ConversationResult, EndReason, ExpectResult, Suite
from polygon_voice.model.judgement import Judgement
from polygon_voice.model.probes import ProbeResults
from polygon_voice.probes import Probing, probe_stage
from polygon_voice.runner.build import AgentBuildError, CallBuilder, failed_call, merged_records
from polygon_voice.runner.failures import RoleFailures
from polygon_voice.runner.plan import PlannedCall, plan_calls
from polygon_voice.runner.threads import run_to_end
from polygon_voice.store import Store
from polygon_voice.store.store import StageResult
from polygon_voice.tools.http_server import ToolServer

if TYPE_CHECKING:
    from polygon_voice.llm import LLMClient

OnFinished = Callable[[ConversationResult], None]


@dataclass
class RunTally:
    """Running totals of a run; small and flat, whatever the number of conversations."""

    conversations: int = 0
    turns: int = 0
    tool_calls: int = 0
    end_reasons: Counter[str] = field(default_factory=Counter)
    errors: list[tuple[str, str]] = field(default_factory=list)
    max_errors_kept: int = 20
    cases: RunSummary = field(default_factory=RunSummary)
    verdicts: Counter[str] = field(default_factory=Counter)
    composite_total: float = 0.0
    composites: int = 0
    expectations: Counter[str] = field(default_factory=Counter)  # met / not_met / not_exercised
    judge_failures: int = 0  # judgements whose judge model never answered (infrastructure)
    first_judge_error: str | None = None
    # Infrastructure failures per role (agent, caller, judge, probes): counted, not verdicts.
    failures: RoleFailures = field(default_factory=RoleFailures)
    # Judged calls that did not test the agent (their verdict says "not exercised: ..."),
    # shown apart from the verdicts while the run works.
    not_exercised: int = 0

    def add_expectation(self, result: ExpectResult) -> None:
        """Count how one conversation stands against its scenario's expected outcome."""
        if result.not_exercised is not None:
            self.expectations["not_exercised"] += 1
        else:
            self.expectations["met" if result.met else "not_met"] += 1

    def add_judgement(self, judgement: Judgement) -> None:
        """Count one conversation's verdict and composite."""
        self.verdicts[judgement.verdict] += 1
        if any(reason.startswith("not exercised: ") for reason in judgement.reasons):
            self.not_exercised += 1
        failed = judge_model_failed(judgement)
        if failed is not None:
            self.judge_failures += 1
            self.first_judge_error = self.first_judge_error or failed
            self.failures.add("judge", failed)
        unusable = judge_answers_unusable(judgement)
        if unusable is not None:
            self.failures.add("judge", unusable)
        if judgement.composite is not None:
            self.composite_total += judgement.composite
            self.composites += 1

    @property
    def mean_composite(self) -> float | None:
        """The mean composite of the calls judged in this run; None when none was."""
        return self.composite_total / self.composites if self.composites else None

    def add(self, result: ConversationResult) -> None:
        """Count one finished conversation."""
        self.conversations += 1
        self.turns += len(result.turns)
        self.tool_calls += len(result.tool_calls)
        self.end_reasons[result.end.reason.value] += 1
        if result.end.reason is EndReason.ERROR and len(self.errors) < self.max_errors_kept:
            self.errors.append((result.id, result.end.message))
        self.failures.add_call(result)


@dataclass
class SuiteRunner:
    """Runs every planned conversation of a suite against one agent."""

    suite: Suite
    agent_factory: AgentFactory
    store: Store
    run_id: str
    seed: int = 0
    concurrency: int = 8
    hearing: Hearing | None = None  # None: each scenario's noise level (see CallBuilder)
    noise: float | None = None
    skip: frozenset[str] = frozenset()
    # Stored calls to judge again, not run (`--resume`: judgement missing or left unscored
    # by the judge model failing; see runner/resume.py).
    rejudge: frozenset[str] = frozenset()
    on_finished: OnFinished | None = None
    caller_client: LLMClient | None = None  # for `caller: llm` scenarios (see CallBuilder)
    judging: Judging | None = field(default_factory=Judging)  # None: no judge stage
    probing: Probing | None = None  # None: no probes stage (`polygon run` passes its own)
    # The tally the run counts into; given by a caller that watches it live (progress).
    tally: RunTally | None = None
    # What builds each call's engine: CallBuilder, or a subclass of it (the replay's).
    builder_factory: Callable[..., CallBuilder] = CallBuilder
    # Judge and probe the calls as real ones (IMP-2): a replay's caller has no known facts.
    real_calls: bool = False

    def run(self) -> RunTally:
        """Run to completion (blocking)."""
        # Not asyncio.run: a thread an agent left stuck must not keep the run from ending.
        return run_to_end(self.run_async())

    async def run_async(self) -> RunTally:
        """Run to completion on the current event loop."""
        builder = self.builder_factory(
            self.suite,
            self.agent_factory,
            self.seed,
            hearing=self.hearing,
            noise=self.noise,
            caller_client=self.caller_client,
        )
        if isinstance(self.agent_factory, HttpAgentFactory):
            # HTTP agents may call their tools themselves: serve them on loopback.
            builder.tool_server = ToolServer.start()
            self.agent_factory.tool_server = builder.tool_server.base_url
            self.agent_factory.configure(self.suite.settings)  # deadline, byte cap, connections
        todo = (
            p
            for p in plan_calls(self.suite)
            if p.conversation_id not in self.skip or p.conversation_id in self.rejudge
        )
        tally = self.tally if self.tally is not None else RunTally()
        workers = [self._worker(todo, builder, tally) for _ in range(max(1, self.concurrency))]
        try:
            await asyncio.gather(*workers)
        finally:
            if builder.tool_server is not None:
                builder.tool_server.close()
            if self.caller_client is not None:
                # Its HTTP connections belong to this event loop; the client reopens if reused.
                await self.caller_client.aclose()
            if self.judging is not None:
                await self.judging.aclose()  # the judge model's client, likewise
            if self.probing is not None and self.probing.client is not None:
                await self.probing.client.aclose()  # the probe model's client, likewise
            close_agents = getattr(self.agent_factory, "aclose", None)
            if close_agents is not None:  # e.g. the prompt agent's shared model client
                await close_agents()
        return tally

    async def _worker(
        self, todo: Iterator[PlannedCall], builder: CallBuilder, tally: RunTally
    ) -> None:
        # Workers pull from one shared plan, so memory does not grow with the run's size.
        for planned in todo:
            if planned.conversation_id in self.rejudge:
                await self._judge_stored(builder, planned, tally)
                continue
            result = await run_one(builder, planned)
            stages = self._checked(builder, planned, result, tally)
            if self._asks_a_model:
                # Stored before judging: a judge model can take minutes (a 429 storm), and a
                # kill meanwhile must not lose the finished call (`--resume` judges it then).
                self.store.add_conversation_with_results(self.run_id, planned.index, result, stages)
                later = await self._judged_and_probed(builder, planned, result, stages, tally)
                self.store.add_stage_results(self.run_id, result.id, later)
            else:  # judged in microseconds: one commit, half the cost per call
                later = await self._judged_and_probed(builder, planned, result, stages, tally)
                self.store.add_conversation_with_results(
                    self.run_id, planned.index, result, [*stages, *later]
                )
            tally.add(result)
            self._count(tally, [*stages, *later])
            if self.on_finished is not None:
                self.on_finished(result)
            # Deterministic agents never await: yield so the other workers get their turn and
            # the loop can run its clean-ups (closed generators, cancelled timers), which would
            # otherwise pile up until the run ends and make memory grow with its size.
            await asyncio.sleep(0)

    @property
    def _asks_a_model(self) -> bool:
        """Whether judging or probing a call waits for a model (and may wait long)."""
        judge = self.judging.judge if self.judging is not None else None
        probe_client = self.probing.client if self.probing is not None else None
        return hasattr(judge, "run") or probe_client is not None

    def _checked(
        self,
        builder: CallBuilder,
        planned: PlannedCall,
        result: ConversationResult,
        tally: RunTally,
    ) -> list[StageResult]:
        try:
            return stage_results(builder, planned, result)
        except Exception as exc:  # a scoring bug must not lose the conversation
            tally.errors.append((result.id, f"checks failed: {type(exc).__name__}: {exc}"))
            return []

    async def _judged_and_probed(
        self,
        builder: CallBuilder,
        planned: PlannedCall,
        result: ConversationResult,
        stages: list[StageResult],
        tally: RunTally,
        probes: bool = True,
    ) -> list[StageResult]:
        later: list[StageResult] = []
        try:  # on its own: a judge bug must not lose the three-layer checks either
            later.extend(await self._judged(builder, planned, result, stages))
        except Exception as exc:
            tally.errors.append((result.id, f"judge failed: {type(exc).__name__}: {exc}"))
        try:  # after the judge and apart from it: probes never feed the verdict (PROBE-3)
            later.extend(await self._probed(builder, planned, result) if probes else [])
        except Exception as exc:
            tally.errors.append((result.id, f"probes failed: {type(exc).__name__}: {exc}"))
        return later

    async def _judge_stored(
        self, builder: CallBuilder, planned: PlannedCall, tally: RunTally
    ) -> None:
        """Judge again a stored call whose judgement is missing or was left unscored by its
        judge model failing (`--resume`); the call itself is not run again."""
        conversation_id = planned.conversation_id
        result = self.store.get_conversation(self.run_id, conversation_id)
        stages = self._checked(builder, planned, result, tally)  # the judge reads them
        stored = self.store.get_stage_result(self.run_id, conversation_id, "probes")
        later = await self._judged_and_probed(
            builder, planned, result, stages, tally, probes=stored is None
        )
        self.store.add_stage_results(self.run_id, conversation_id, later, replace=True)
        self._count(tally, later)
        if self.on_finished is not None:  # judged again: done, as far as a watcher can tell
            self.on_finished(result)
        await asyncio.sleep(0)

    @staticmethod
    def _count(tally: RunTally, stages: list[StageResult]) -> None:
        for _, _, score in stages:
            if isinstance(score, CaseScore):
                tally.cases.add(score)
            if isinstance(score, Judgement):
                tally.add_judgement(score)
            if isinstance(score, ExpectResult):
                tally.add_expectation(score)
            if isinstance(score, ProbeResults):
                tally.failures.add_probes(score)

    async def _judged(
        self,
        builder: CallBuilder,
        planned: PlannedCall,
        result: ConversationResult,
        stages: list[StageResult],
    ) -> list[StageResult]:
        # Stages "conversation_checks" and "judge"; the judge reads the case's axes if any.
        if self.judging is None:
            return []
        case = next((s for _, _, s in stages if isinstance(s, CaseScore)), None)
        expect = next((s for _, _, s in stages if isinstance(s, ExpectResult)), None)
        initial = merged_records(builder.suite.backend, planned.scenario.backend)
        checks, judgement = await judge_stage_async(
            self.judging,
            builder.suite,
            planned.scenario,
            result,
            case,
            initial,
            expect,
            real_call=self.real_calls,
        )
        return [("conversation_checks", "", checks), ("judge", "", judgement)]

    async def _probed(
        self, builder: CallBuilder, planned: PlannedCall, result: ConversationResult
    ) -> list[StageResult]:
        # Stage "probes": reads the conversation (and the case's backend), not the judgement.
        if self.probing is None:
            return []
        initial = merged_records(builder.suite.backend, planned.scenario.backend)
        probes = await probe_stage(
            self.probing,
            result,
            planned.scenario,
            builder.suite.tools,
            initial,
            real_call=self.real_calls,
        )
        return [("probes", "", probes)]


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
