"""Runs a suite: the driver plays its calls through an executor and stores each as it finishes."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from polygon_voice.agents import AgentFactory
from polygon_voice.checks import RunSummary
from polygon_voice.conversation import Hearing
from polygon_voice.judge import Judging
from polygon_voice.judge.run import judge_answers_unusable, judge_model_failed
from polygon_voice.model import CaseScore, ConversationResult, EndReason, ExpectResult, Suite
from polygon_voice.model.judgement import Judgement
from polygon_voice.model.probes import ProbeResults
from polygon_voice.probes import Probing
from polygon_voice.runner.build import CallBuilder, failed_call
from polygon_voice.runner.executors import Executor, FinishedCall, LocalExecutor
from polygon_voice.runner.failures import RoleFailures
from polygon_voice.runner.pipeline import (
    CallPipeline,
    run_one,
    serve_tools_if_needed,
    stage_results,
)
from polygon_voice.runner.plan import PlannedCall, plan_calls
from polygon_voice.runner.threads import run_to_end
from polygon_voice.store import Store
from polygon_voice.store.store import StageResult

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

    # Where the calls are played; None: a LocalExecutor of `concurrency` workers.
    executor: Executor | None = None

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
        serve_tools_if_needed(builder)
        pipeline = CallPipeline(builder, self.judging, self.probing, self.real_calls)
        tally = self.tally if self.tally is not None else RunTally()
        driver = _Driver(self, pipeline, tally)
        local = LocalExecutor(max(1, self.concurrency))
        executor = self.executor or local
        try:
            if executor.remote:
                # Stored calls are judged again here, by the driver's judge; the rest go out.
                await asyncio.gather(
                    local.run(self._todo(rejudged=True), driver),
                    executor.run(self._todo(rejudged=False), driver),
                )
            else:
                await executor.run(self._todo(), driver)
        finally:
            await pipeline.aclose(self.agent_factory, self.caller_client)
        return tally

    def _todo(self, rejudged: bool | None = None) -> Iterator[PlannedCall]:
        """The planned calls still to do (lazily): not stored yet, or stored to judge again;
        `rejudged` True or False: only those judged again, or only those played."""
        for planned in plan_calls(self.suite):
            again = planned.conversation_id in self.rejudge
            if planned.conversation_id in self.skip and not again:
                continue
            if rejudged is None or rejudged == again:
                yield planned

    @staticmethod
    def count(tally: RunTally, stages: list[StageResult]) -> None:
        """Add one call's stage results to the tally."""
        for _, _, score in stages:
            if isinstance(score, CaseScore):
                tally.cases.add(score)
            if isinstance(score, Judgement):
                tally.add_judgement(score)
            if isinstance(score, ExpectResult):
                tally.add_expectation(score)
            if isinstance(score, ProbeResults):
                tally.failures.add_probes(score)


@dataclass
class _Driver:
    """The one writer of a run: stores each call, counts it and tells the watcher."""

    runner: SuiteRunner
    pipeline: CallPipeline
    tally: RunTally

    async def finish_here(self, planned: PlannedCall) -> None:
        """Play (or, for `--resume`, judge again) one call in this process and store it."""
        if planned.conversation_id in self.runner.rejudge:
            await self._judge_stored(planned)
            return
        runner, pipeline, errors = self.runner, self.pipeline, self.tally.errors
        result = await pipeline.play(planned)
        stages = pipeline.checked(planned, result, errors)
        if pipeline.asks_a_model:
            # Stored before judging: a judge model can take minutes (a 429 storm), and a
            # kill meanwhile must not lose the finished call (`--resume` judges it then).
            runner.store.add_conversation_with_results(runner.run_id, planned.index, result, stages)
            later = await pipeline.judged_and_probed(planned, result, stages, errors)
            runner.store.add_stage_results(runner.run_id, result.id, later)
        else:  # judged in microseconds: one commit, half the cost per call
            later = await pipeline.judged_and_probed(planned, result, stages, errors)
            runner.store.add_conversation_with_results(
                runner.run_id, planned.index, result, [*stages, *later]
            )
        self._counted(result, [*stages, *later])

    def store_finished(self, finished: FinishedCall) -> None:
        """Store a call played, checked, judged and probed elsewhere (one commit)."""
        runner = self.runner
        runner.store.add_conversation_with_results(
            runner.run_id, finished.index, finished.result, finished.stages
        )
        self.tally.errors.extend(finished.errors)
        self._counted(finished.result, finished.stages)

    async def store_lost(self, planned: PlannedCall, message: str) -> None:
        """Store, checked and judged here, an error call for a call no worker could play."""
        pipeline, errors = self.pipeline, self.tally.errors
        result = failed_call(pipeline.builder.setup(planned), message)
        stages = pipeline.checked(planned, result, errors)
        stages += await pipeline.judged_and_probed(planned, result, stages, errors)
        self.runner.store.add_conversation_with_results(
            self.runner.run_id, planned.index, result, stages
        )
        self._counted(result, stages)

    def _counted(self, result: ConversationResult, stages: list[StageResult]) -> None:
        self.tally.add(result)
        SuiteRunner.count(self.tally, stages)
        if self.runner.on_finished is not None:
            self.runner.on_finished(result)

    async def _judge_stored(self, planned: PlannedCall) -> None:
        """Judge again a stored call whose judgement is missing or was left unscored by its
        judge model failing (`--resume`); the call itself is not run again."""
        runner, pipeline, errors = self.runner, self.pipeline, self.tally.errors
        conversation_id = planned.conversation_id
        result = runner.store.get_conversation(runner.run_id, conversation_id)
        stages = pipeline.checked(planned, result, errors)  # the judge reads them
        stored = runner.store.get_stage_result(runner.run_id, conversation_id, "probes")
        later = await pipeline.judged_and_probed(
            planned, result, stages, errors, probes=stored is None
        )
        runner.store.add_stage_results(runner.run_id, conversation_id, later, replace=True)
        SuiteRunner.count(self.tally, later)
        if runner.on_finished is not None:  # judged again: done, as far as a watcher can tell
            runner.on_finished(result)


__all__ = ["RunTally", "SuiteRunner", "run_one", "stage_results"]
