"""Replaying an imported run against another agent: `replay_run` (what `polygon replay` does).

Each stored call of an imported run is played again: its caller lines, in order, against the
new agent, with the recorded tool results served where the new agent makes the same call
(docs/replay.md). The replay is stored as an ordinary run (config `kind: replay`,
`replay_of: RUN_ID`), checked, judged and probed as `polygon run` does, and its calls keep
the scenario ids of the calls they replay, so `polygon compare IMPORTED REPLAY` matches them
call by call. Errors are exceptions (`InputError`, `SetupError`, `RunInterrupted`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.errors import InputError, RunInterrupted, SetupError
from polygon_voice.api.events import RunObserver, RunStarted, activity_of
from polygon_voice.replay.caller import MISMATCH_KIND, ON_MISMATCH, OnMismatch
from polygon_voice.replay.plan import ReplayedCall, Skipped

if TYPE_CHECKING:
    from polygon_voice.agents import AgentFactory
    from polygon_voice.api.results import RunResult
    from polygon_voice.judge import Judging
    from polygon_voice.llm import LLMClient, LLMSettings
    from polygon_voice.model import ConversationResult, Suite
    from polygon_voice.store import RunRecord, Store

RUN_KIND = "replay"


@dataclass(frozen=True)
class ReplayOptions:
    """How to replay: the new agent (as `polygon run --agent` takes it) and the rest."""

    agent: str
    on_mismatch: OnMismatch = "continue"
    seed: int = 0
    concurrency: int = 8
    judge: str = "deterministic"
    rubric: str | Path | None = None
    llm_config: Path | None = None
    run_probes: bool = True
    out: Path | None = None
    write_files: bool = True
    preflight: bool = True  # check every model role the replay needs before its first call


@dataclass(frozen=True)
class ReplayResult:
    """The stored replay run, what of the imported run it replayed, and the mismatches."""

    run: RunResult
    replay_of: str
    replayed: int
    skipped: tuple[Skipped, ...] = ()
    mismatches: int = 0  # replay_mismatch entries over all calls
    calls_with_mismatch: int = 0
    first_mismatch: dict[str, int] = field(default_factory=dict)  # call id -> turn

    @property
    def compare_command(self) -> str:
        """The command that puts the replay beside the run it replays."""
        return f"polygon compare {self.replay_of} {self.run.run_id}"


def replay_run(
    run_id: str,
    options: ReplayOptions,
    *,
    store: Store | None = None,
    db: str | None = None,
    observer: RunObserver | None = None,
) -> ReplayResult:
    """Replay the calls of the imported run `run_id` against `options.agent` (module doc)."""
    from polygon_voice.api.run import _opened

    if options.on_mismatch not in ON_MISMATCH:
        raise InputError(
            f"--on-mismatch {options.on_mismatch!r}: use one of {', '.join(ON_MISMATCH)}"
        )
    observer = observer or RunObserver()
    with _opened(store, db) as opened:
        return _Replay(opened, run_id, options, observer).run()


class _Replay:
    def __init__(
        self, store: Store, run_id: str, options: ReplayOptions, observer: RunObserver
    ) -> None:
        self.store = store
        self.options = options
        self.observer = observer
        self.source = _imported_run(store, run_id)
        self.mismatches = 0
        self.first_mismatch: dict[str, int] = {}

    def run(self) -> ReplayResult:
        from polygon_voice.api import setup
        from polygon_voice.api.run import _hold_lease, _Prepared, _release
        from polygon_voice.api.suites import suite_in_code
        from polygon_voice.replay.plan import replay_suite

        calls, skipped = _calls(self.store, self.source.id)
        for skip in skipped:
            self.observer.warning(f"call {skip.call_id} skipped: {skip.reason}")
        if not calls:
            raise InputError(f"run {self.source.id} has no call to replay (each was skipped)")
        try:
            suite = replay_suite(f"replay of {self.source.suite}", calls)
        except ValueError as exc:  # pydantic's ValidationError among them
            raise InputError(f"run {self.source.id} cannot be replayed: {exc}") from None
        judging = setup.judging_for(
            self.options.judge,
            str(self.options.rubric or _default_rubric()),
            1,
            self.options.llm_config,
        )
        probing = (
            setup.probing_for(None, self.options.llm_config) if self.options.run_probes else None
        )
        factory = self._agent()
        settings = setup.llm_settings(self.options.llm_config)
        if self.options.preflight:
            _preflight(settings, self.options, judging, factory, calls)
        caller_client = self._caller_client(settings)
        record = self._record(suite, judging, factory, skipped)
        self.store.create_run(record)
        lease = _hold_lease(self.store, record.id, None)
        try:
            runner = self._runner(suite, factory, record, judging, probing, caller_client, calls)
            clients = [caller_client, getattr(judging.judge, "client", None)]
            started = RunStarted(
                run_id=record.id,
                suite=record.suite,
                agent=_masked(record.agent),
                total=len(calls),
                kept=0,
                rejudged=0,
                activity=lambda: activity_of([*clients, factory]),
            )
            self.observer.run_started(started)
            loaded = suite_in_code(suite)
            prepared = _Prepared(
                loaded, record, runner, judging, probing, caller_client, lease, started
            )
            try:
                tally = runner.run()
            except KeyboardInterrupt:
                self.store.finish_run(record.id, "interrupted", datetime.now(UTC))
                raise RunInterrupted(
                    f"interrupted; the calls replayed so far are stored in run {record.id}",
                    run_id=record.id,
                ) from None
            result = self._finish(prepared, tally)
        finally:
            _release(lease, self.observer)
        return ReplayResult(
            run=result,
            replay_of=self.source.id,
            replayed=len(calls),
            skipped=tuple(skipped),
            mismatches=self.mismatches,
            calls_with_mismatch=len(self.first_mismatch),
            first_mismatch=dict(self.first_mismatch),
        )

    def _agent(self) -> AgentFactory:
        from polygon_voice.agents import AgentLoadError, resolve_agent

        spec = self.options.agent
        if not spec:
            raise InputError("no agent given: pass --agent (as polygon run takes it)")
        try:
            return resolve_agent(spec, None, llm_config=self.options.llm_config)
        except AgentLoadError as exc:
            raise InputError(str(exc)) from None

    def _caller_client(self, settings: LLMSettings) -> LLMClient | None:
        if self.options.on_mismatch != "llm":
            return None
        from polygon_voice.llm import make_client

        if not settings.is_configured("caller"):
            raise SetupError(_NO_CALLER_MODEL)
        return make_client(settings, "caller")

    def _record(
        self, suite: Suite, judging: Judging, factory: AgentFactory, skipped: list[Skipped]
    ) -> RunRecord:
        from polygon_voice import __version__
        from polygon_voice.agents import describe_agent
        from polygon_voice.seeding import content_hash
        from polygon_voice.store import RunRecord, new_run_id

        del factory
        spec = self.options.agent
        return RunRecord(
            id=new_run_id(),
            suite=suite.name,
            suite_path=f"replay:{self.source.id}",
            suite_hash=content_hash(suite.model_dump_json().encode()),
            agent=spec,
            seed=self.options.seed,
            status="running",
            started_at=datetime.now(UTC),
            config={
                "kind": RUN_KIND,
                "replay_of": self.source.id,
                "agent_spec": spec,
                **describe_agent(spec),
                "on_mismatch": self.options.on_mismatch,
                "judge": judging.judge.name,
                "rubric": judging.rubric.version,
                "judge_repeats": judging.repeats,
                "skipped": [{"call_id": s.call_id, "reason": s.reason} for s in skipped],
            },
            polygon_version=__version__,
        )

    def _runner(
        self,
        suite: Suite,
        factory: AgentFactory,
        record: RunRecord,
        judging: Judging,
        probing: Any,
        caller_client: LLMClient | None,
        calls: list[ReplayedCall],
    ) -> Any:
        from polygon_voice.api.setup import with_agent_turn_limit
        from polygon_voice.replay.build import ReplayCallBuilder
        from polygon_voice.runner import RunTally, SuiteRunner

        tally = RunTally()
        tally.failures.on_first = self.observer.role_failed
        runner = SuiteRunner(
            suite=with_agent_turn_limit(suite, factory),
            agent_factory=factory,
            store=self.store,
            run_id=record.id,
            seed=record.seed,
            concurrency=self.options.concurrency,
            caller_client=caller_client,
            judging=judging,
            probing=probing,
            tally=tally,
            real_calls=True,
            builder_factory=functools.partial(
                ReplayCallBuilder,
                calls={call.suite_id: call for call in calls},
                on_mismatch=self.options.on_mismatch,
            ),
        )

        def finished(result: ConversationResult) -> None:
            self._count(result)
            self.observer.call_finished(result, tally)

        runner.on_finished = finished
        return runner

    def _count(self, result: ConversationResult) -> None:
        marks = [e for e in result.trace if e.kind == MISMATCH_KIND]
        self.mismatches += len(marks)
        if marks:
            self.first_mismatch[result.id] = int(marks[0].data.get("turn", 0))

    def _finish(self, prepared: Any, tally: Any) -> RunResult:
        from polygon_voice.api.config import RunOptions
        from polygon_voice.api.run import _finish

        # Recorded before the report files are written, so that report.json carries them.
        replayed = {"replayed": tally.conversations, "mismatches": self.mismatches}
        self.store.finish_run(prepared.record.id, "finished", datetime.now(UTC), replayed)
        options = RunOptions(out=self.options.out, write_files=self.options.write_files)
        return _finish(self.store, prepared, tally, options)


_NO_CALLER_MODEL = (
    "--on-mismatch llm hands the call to the LLM caller, but no caller model is configured: "
    "set POLYGON_CALLER_MODEL (and POLYGON_CALLER_BASE_URL or POLYGON_BASE_URL for the "
    "endpoint), or llm.caller.model in a config file (see docs/llm.md)"
)


def _imported_run(store: Store, run_id: str) -> RunRecord:
    from polygon_voice.api.setup import stored_run
    from polygon_voice.imports.run import is_imported

    record = stored_run(store, run_id)
    if not is_imported(record.config):
        raise InputError(
            f"run {record.id} is not an imported run; replay takes the calls of `polygon import`"
        )
    return record


def _calls(store: Store, run_id: str) -> tuple[list[ReplayedCall], list[Skipped]]:
    from polygon_voice.replay.plan import replayed_call

    calls: list[ReplayedCall] = []
    skipped: list[Skipped] = []
    for position, stored in enumerate(store.iter_conversations(run_id)):
        planned = replayed_call(stored, position)
        if isinstance(planned, ReplayedCall):
            calls.append(planned)
        else:
            skipped.append(planned)
    return calls, skipped


def _preflight(
    settings: LLMSettings,
    options: ReplayOptions,
    judging: Judging,
    factory: AgentFactory,
    calls: list[ReplayedCall],
) -> None:
    from polygon_voice import preflight
    from polygon_voice.agents.prompt_agent import PromptAgentFactory

    prompt_agent = factory if isinstance(factory, PromptAgentFactory) else None
    problems = preflight.check_run_roles(
        settings,
        judge_llm=judging.judge.name != "deterministic",
        llm_caller_scenarios=[c.call_id for c in calls] if options.on_mismatch == "llm" else [],
        prompt_agent=prompt_agent.role_config if prompt_agent is not None else None,
        prompt_agent_file=str(prompt_agent.path) if prompt_agent is not None else None,
    )
    if problems:
        error = SetupError(str(preflight.SetupError(problems)))
        error.problems = problems  # type: ignore[attr-defined]
        raise error


def _default_rubric() -> str:
    from polygon_voice.judge import DEFAULT_RUBRIC

    return str(DEFAULT_RUBRIC)


def _masked(agent: str) -> str:
    from polygon_voice.masking import mask_url

    return mask_url(agent)
