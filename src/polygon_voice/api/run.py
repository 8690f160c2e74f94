"""Running a suite from code: `run_suite` (blocking) and `run_suite_async` (on your loop).

Both do what `polygon run` does — load and check the suite, check every model role the run
needs before its first call, start or resume the run, play, check, judge and probe every call,
store each as it finishes, write the report files — and return a `RunResult`. Errors are
exceptions (`InputError`, `SetupError`, `RunInterrupted`); nothing is printed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.config import RunOptions
from polygon_voice.api.errors import InputError, RunInterrupted, SetupError
from polygon_voice.api.events import RunObserver, RunStarted, activity_of
from polygon_voice.api.results import RunResult
from polygon_voice.api.suites import IN_CODE, load_suite, select_scenarios

if TYPE_CHECKING:
    from polygon_voice.agents import AgentFactory
    from polygon_voice.api.setup import WorkerSetup
    from polygon_voice.judge import Judging
    from polygon_voice.llm import LLMClient, Usage
    from polygon_voice.model import Suite
    from polygon_voice.probes import Probing
    from polygon_voice.runner import RunTally, SuiteRunner
    from polygon_voice.runner.executors import Executor
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.store import RunRecord, Store
    from polygon_voice.store.leases import LeaseKeeper


@dataclass
class _Prepared:
    """A run set up and leased, about to play its calls."""

    loaded: LoadedSuite
    record: RunRecord
    runner: SuiteRunner
    judging: Judging
    probing: Probing | None
    caller_client: LLMClient | None
    lease: LeaseKeeper
    started: RunStarted
    clients: list[Any] = field(default_factory=list)


def run_suite(
    suite: str | Path | Suite | LoadedSuite,
    options: RunOptions | None = None,
    *,
    store: Store | None = None,
    db: str | None = None,
    observer: RunObserver | None = None,
    **overrides: Any,
) -> RunResult:
    """Run `suite` (a file, a built-in suite's name or a `Suite`) and return its results.

    `options` (or keyword overrides of it: `run_suite("three-layer", agent="reference:robust",
    seed=3)`) say how; `store` or `db` (a database URL or SQLite file; default: POLYGON_DB or
    .polygon/polygon.db) where the run is stored. Blocks until the run ends.
    """
    options = _options(options, overrides)
    with _prepared_run(store, db, suite, options, observer) as (opened, prepared):
        try:
            tally = prepared.runner.run()
        except KeyboardInterrupt:
            raise _interrupted(opened, prepared) from None
        return _finish(opened, prepared, tally, options)


async def run_suite_async(
    suite: str | Path | Suite | LoadedSuite,
    options: RunOptions | None = None,
    *,
    store: Store | None = None,
    db: str | None = None,
    observer: RunObserver | None = None,
    **overrides: Any,
) -> RunResult:
    """`run_suite` on the running event loop. Cancelling it stops the run as Ctrl-C does:
    the finished calls stay stored and the run can be resumed."""
    options = _options(options, overrides)
    with _prepared_run(store, db, suite, options, observer) as (opened, prepared):
        try:
            tally = await prepared.runner.run_async()
        except asyncio.CancelledError:
            _interrupted(opened, prepared)
            raise
        return _finish(opened, prepared, tally, options)


@contextmanager
def _prepared_run(
    store: Store | None,
    db: str | None,
    suite: str | Path | Suite | LoadedSuite,
    options: RunOptions,
    observer: RunObserver | None,
) -> Iterator[tuple[Store, _Prepared]]:
    """The store and the run ready to play; the run's lease is given up however it ends."""
    observer = observer or RunObserver()
    with _opened(store, db) as opened:
        prepared = _prepare(opened, suite, options, observer)
        try:
            yield opened, prepared
        finally:
            _release(prepared.lease, observer)


def _options(options: RunOptions | None, overrides: dict[str, Any]) -> RunOptions:
    options = options or RunOptions()
    if not overrides:
        return options
    known = set(RunOptions.__dataclass_fields__)
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise InputError(f"unknown run option {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return replace(options, **overrides)


@contextmanager
def _opened(store: Store | None, db: str | None) -> Iterator[Store]:
    """The given store, or one opened from `db` (and closed afterwards)."""
    if store is not None:
        yield store
        return
    opened = open_store(db)
    try:
        yield opened
    finally:
        opened.close()


def open_store(db: str | None = None) -> Store:
    """The results database named by `db`, POLYGON_DB or the default file."""
    from polygon_voice.store import Store, StoreError, resolve_db_url

    try:
        return Store(resolve_db_url(db))
    except StoreError as exc:
        raise InputError(str(exc)) from None


# -- before the first call ---------------------------------------------------------------


def _prepare(
    store: Store,
    source: str | Path | Suite | LoadedSuite,
    options: RunOptions,
    observer: RunObserver,
) -> _Prepared:
    from polygon_voice.api import setup
    from polygon_voice.runner import RunTally, SuiteRunner, count_calls
    from polygon_voice.runner.resume import calls_to_rejudge

    loaded = setup.with_stored_personas(store, load_suite(source))
    resumed = setup.stored_run(store, options.resume) if options.resume is not None else None
    loaded, left_out = setup.without_unrealistic(
        store, loaded, resumed, options.include_unrealistic
    )
    for entry in left_out:
        note = f" ({entry['note']})" if entry.get("note") else ""
        observer.warning(
            f"scenario {entry['scenario']} left out: its persona {entry['persona']} is marked "
            f"unrealistic{note}; --include-unrealistic runs it"
        )
    loaded = select_scenarios(loaded, _scenario_filter(options, resumed))
    loaded = _with_trials(loaded, _run_trials(resumed, options.trials))
    judge, rubric, repeats = setup.judging_options(
        store, options.resume, options.judge, options.rubric, options.judge_repeats
    )
    noise = _run_noise(resumed, options.noise)
    setup.check_tools_and_noise(loaded, noise)
    agent_spec, agent, (base_dir, cwd) = _agent(options, loaded, resumed)
    wiring = setup.CallWiring(
        loaded=loaded,
        agent=agent,
        agent_name=agent_spec,
        agent_base_dir=base_dir,
        agent_cwd=cwd,
        llm_config=options.llm_config,
        judge=judge,
        rubric=rubric,
        judge_repeats=repeats,
        probes=options.probes,
        run_probes=options.run_probes,
    )
    parts = setup.call_parts(wiring)  # the same function builds each Ray worker's parts
    judging, probing, caller_client, factory = (
        parts.judging,
        parts.probing,
        parts.caller_client,
        parts.agent_factory,
    )
    if options.preflight:
        _preflight(options, loaded, judging, probing, factory)
    if resumed is None:
        record, lease, done = _start(store, loaded, agent_spec, options, judging, noise, left_out)
    else:
        record, lease, done = _resume(store, loaded, resumed, agent_spec, observer)
    try:
        rejudge = calls_to_rejudge(store, record.id, done) if done else frozenset()
        if rejudge:
            observer.note(
                f"{len(rejudge)} stored calls without a judgement (or whose judge model "
                "failed) are judged again, not run again."
            )
        tally = RunTally()
        tally.failures.on_first = observer.role_failed
        # After the preflight: a Ray worker adopts what its probe found.
        worker_setup = setup.WorkerSetup.of_this_process(wiring, record.seed, noise)
        runner = SuiteRunner(
            suite=parts.suite,
            agent_factory=factory,
            store=store,
            run_id=record.id,
            seed=record.seed,
            concurrency=options.concurrency,
            noise=noise,
            skip=frozenset(done),
            rejudge=rejudge,
            caller_client=caller_client,
            judging=judging,
            probing=probing,
            tally=tally,
            executor=_executor(options, worker_setup, observer),
        )
        runner.on_finished = lambda result: observer.call_finished(result, tally)
        clients = [caller_client, getattr(judging.judge, "client", None)]
        clients.append(probing.client if probing is not None else None)
        started = RunStarted(
            run_id=record.id,
            suite=record.suite,
            agent=_masked(record.agent),
            total=count_calls(loaded.suite) - len(done) + len(rejudge),
            kept=len(done) - len(rejudge),
            rejudged=len(rejudge),
            # The agent factory: a prompt agent counts its model's requests (live before its
            # first call opens the client).
            activity=lambda: activity_of([*clients, factory]),
        )
    except BaseException:
        lease.__exit__(None, None, None)
        raise
    observer.run_started(started)
    return _Prepared(loaded, record, runner, judging, probing, caller_client, lease, started)


def _scenario_filter(options: RunOptions, resumed: RunRecord | None) -> tuple[str, ...]:
    """The scenario globs of the run; a resumed run keeps the ones it was started with."""
    if resumed is None:
        return tuple(options.scenarios)
    recorded = tuple(resumed.config.get("scenarios", ()))
    if options.scenarios and tuple(options.scenarios) != recorded:
        shown = " ".join(f"--scenario {p}" for p in recorded) or "no --scenario"
        raise InputError(f"run {resumed.id} was started with {shown}; resume it with the same")
    return recorded


def _run_trials(resumed: RunRecord | None, given: int | None) -> int | None:
    """The run's trials per scenario; a resumed run keeps the number it was started with."""
    if resumed is None:
        return given
    recorded = resumed.config.get("trials")
    if given is not None and given != recorded:
        started = "without --trials" if recorded is None else f"with --trials {recorded}"
        raise InputError(f"run {resumed.id} was started {started}; resume it with the same")
    return None if recorded is None else int(recorded)


def _with_trials(loaded: LoadedSuite, trials: int | None) -> LoadedSuite:
    """The suite with `trials` conversations per scenario in place of its `repeat:`, within
    the repeat and call limits (docs/suites.md, "Limits")."""
    if trials is None:
        return loaded
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.limits import Limits

    try:
        limits = Limits.from_env()
    except SuiteError as exc:
        raise InputError(str(exc)) from None
    calls = trials * len(loaded.suite.scenarios)
    if trials > limits.max_repeat:
        raise InputError(
            f"trials {trials:,}: over the repeat limit of {limits.max_repeat:,} "
            "(raise it with POLYGON_MAX_REPEAT)"
        )
    if calls > limits.max_calls:
        raise InputError(
            f"{calls:,} calls (scenarios x trials): over the limit of {limits.max_calls:,} "
            "(raise it with POLYGON_MAX_CALLS)"
        )
    # A copy, not a revalidation: the suite was checked when it was loaded.
    suite = loaded.suite.model_copy(update={"repeat": trials})
    return type(loaded)(suite=suite, path=loaded.path, hash=loaded.hash, base_dir=loaded.base_dir)


def _run_noise(resumed: RunRecord | None, given: float | None) -> float | None:
    """The run's noise level; a resumed run keeps the one it was started with."""
    if resumed is None:
        return given
    recorded = resumed.config.get("noise")
    if given is not None and given != recorded:
        started = "without --noise" if recorded is None else f"with --noise {recorded}"
        raise InputError(f"run {resumed.id} was started {started}; resume it with the same level")
    return None if recorded is None else float(recorded)


def _agent(
    options: RunOptions, loaded: LoadedSuite, resumed: RunRecord | None
) -> tuple[str, str | Any, tuple[Path | None, Path | None]]:
    """The agent's name as the run records it, the agent as given (a spec string, or a class
    or factory) and where a relative agent file is looked for."""
    from polygon_voice.masking import MASK, mask_url

    given = options.agent
    if given is not None and not isinstance(given, str):
        name = f"{getattr(given, '__module__', '?')}:{getattr(given, '__qualname__', '?')}"
        if resumed is not None and resumed.agent != name:
            raise InputError(f"run {resumed.id} was started with agent {resumed.agent}, not {name}")
        return name, given, (None, None)
    if resumed is not None:
        if given is not None and mask_url(given) != resumed.agent:
            raise InputError(
                f"run {resumed.id} was started with --agent {resumed.agent}; resume it with "
                "the same agent (or leave it out)"
            )
        if given is None and MASK in resumed.agent:
            raise InputError(
                f"run {resumed.id}'s agent {resumed.agent} carries a credential, which is "
                "never stored; resume it with --agent and the full URL again"
            )
        spec = given or resumed.agent
    else:
        spec = given or loaded.suite.agent or ""
        if not spec:
            raise InputError(
                f"{_shown_path(loaded)}: no agent given: pass --agent or add an 'agent:' key "
                "to the suite"
            )
    return spec, spec, _agent_places(spec, options, loaded)


def _executor(
    options: RunOptions, worker_setup: WorkerSetup, observer: RunObserver
) -> Executor | None:
    """The run's executor: None for the local one (the runner's own workers)."""
    if options.executor == "local":
        return None
    from polygon_voice.runner.ray_executor import RayExecutor, import_ray

    import_ray()  # InputError naming the extra, before the run is started
    _check_picklable(worker_setup)
    return RayExecutor(
        setup=worker_setup,
        workers=options.workers,
        address=options.ray_address,
        concurrency=options.concurrency,
        on_note=observer.note,
    )


def _check_picklable(worker_setup: WorkerSetup) -> None:
    """InputError when the run's agent cannot travel to a Ray worker."""
    import ray.cloudpickle as cloudpickle

    try:
        cloudpickle.dumps(worker_setup)  # type: ignore[no-untyped-call]
    except Exception as exc:
        agent = worker_setup.wiring.agent_name
        raise InputError(
            f"the Ray executor cannot send agent {agent} to its workers ({type(exc).__name__}: "
            f"{exc}); give it as a spec string (module:attr, file.py:attr, prompt:FILE) instead"
        ) from None


def _agent_places(
    spec: str, options: RunOptions, loaded: LoadedSuite
) -> tuple[Path | None, Path | None]:
    """Where a relative agent file is looked for: (the suite's folder, the folder first).

    An agent given on the command line is the user's: the current folder first, then the
    suite's. One the suite names itself (its `agent:` key) belongs to the suite: its folder
    first, so an unrelated file of that name in the current folder cannot take its place."""
    if _in_code(loaded):
        return None, None
    from_suite = options.agent is None and spec == loaded.suite.agent
    return loaded.base_dir, loaded.base_dir if from_suite else None


def _preflight(
    options: RunOptions,
    loaded: LoadedSuite,
    judging: Judging,
    probing: Probing | None,
    factory: AgentFactory,
) -> None:
    """Stop before the first call when a model role the run needs cannot work."""
    from polygon_voice import preflight
    from polygon_voice.agents.prompt_agent import PromptAgentFactory
    from polygon_voice.api.setup import llm_settings

    prompt_agent = factory if isinstance(factory, PromptAgentFactory) else None
    model_probes = (
        [p.id for p in probing.probes if p.rule is None]
        if probing is not None and probing.client is not None
        else []
    )
    problems = preflight.check_run_roles(
        llm_settings(options.llm_config),
        judge_llm=judging.judge.name != "deterministic",
        llm_caller_scenarios=[s.id for s in loaded.suite.scenarios if s.caller == "llm"],
        prompt_agent=prompt_agent.role_config if prompt_agent is not None else None,
        prompt_agent_file=str(prompt_agent.path) if prompt_agent is not None else None,
        model_probes=model_probes,
    )
    if problems:
        error = SetupError(str(preflight.SetupError(problems)))
        error.problems = problems  # type: ignore[attr-defined]
        raise error


def _start(
    store: Store,
    loaded: LoadedSuite,
    agent_spec: str,
    options: RunOptions,
    judging: Judging,
    noise: float | None,
    left_out: list[dict[str, str]],
) -> tuple[RunRecord, LeaseKeeper, set[str]]:
    from polygon_voice import __version__
    from polygon_voice.agents import describe_agent
    from polygon_voice.api.setup import UNREALISTIC_KEY, run_persona_config
    from polygon_voice.store import RunRecord, new_run_id

    base_dir, cwd = _agent_places(agent_spec, options, loaded)
    describe = {} if _in_code(loaded) else describe_agent(agent_spec, base_dir, cwd=cwd)
    record = RunRecord(
        id=new_run_id(),
        suite=loaded.suite.name,
        suite_path=str(loaded.path),
        suite_hash=loaded.hash,
        agent=agent_spec,
        seed=options.seed,
        status="running",
        started_at=datetime.now(UTC),
        config={
            "agent_spec": agent_spec,
            # A prompt agent's model, prompt version and profile hash (empty for others).
            **describe,
            "noise": noise,
            # Recorded with the run, so its report says which judge and rubric scored it.
            "judge": judging.judge.name,
            "rubric": judging.rubric.version,
            "judge_repeats": judging.repeats,
            **({"trials": options.trials} if options.trials is not None else {}),
            **({"scenarios": list(options.scenarios)} if options.scenarios else {}),
            **run_persona_config(loaded.suite),
            # Scenarios left out because their stored persona is marked unrealistic.
            **({UNREALISTIC_KEY: left_out} if left_out else {}),
        },
        polygon_version=__version__,
    )
    store.create_run(record)
    return record, _hold_lease(store, record.id, None), set()


def _resume(
    store: Store,
    loaded: LoadedSuite,
    record: RunRecord,
    agent_spec: str,
    observer: RunObserver,
) -> tuple[RunRecord, LeaseKeeper, set[str]]:
    from polygon_voice.api.setup import check_resumed_personas

    record = record.model_copy(update={"agent": agent_spec})
    lease = _hold_lease(store, record.id, observer)  # before anything is read
    try:
        if record.suite_hash != loaded.hash:
            raise InputError(
                f"run {record.id} was made from a different version of {_shown_path(loaded)} "
                f"(hash {record.suite_hash}, now {loaded.hash}); start a new run instead"
            )
        check_resumed_personas(record, loaded)
        done = store.conversation_ids(record.id)
    except BaseException:
        lease.__exit__(None, None, None)
        raise
    observer.note(f"Resuming run {record.id}: {len(done)} calls already stored are kept.")
    return record, lease, done


def _hold_lease(store: Store, run_id: str, observer: RunObserver | None) -> LeaseKeeper:
    """The run's lease, renewed until released; InputError when another process holds it."""
    from polygon_voice.store import StoreError
    from polygon_voice.store.leases import LeaseKeeper

    try:
        keeper = LeaseKeeper(store, run_id).__enter__()
    except StoreError as exc:  # LeaseHeld among them
        raise InputError(str(exc)) from None
    if observer is not None and keeper.lease is not None and keeper.lease.taken_over:
        observer.note(f"Run {run_id}: the process that held it is gone; taking it over.")
    return keeper


def _release(keeper: LeaseKeeper, observer: RunObserver) -> None:
    keeper.__exit__(None, None, None)
    if keeper.lost and keeper.lease is not None:
        observer.warning(
            f"the lease of run {keeper.lease.run_id} lapsed during this run and another "
            "process took the run over; check it with polygon show"
        )


# -- after the last call -----------------------------------------------------------------


def _interrupted(store: Store, prepared: _Prepared) -> RunInterrupted:
    record = prepared.record
    store.finish_run(record.id, "interrupted", datetime.now(UTC))
    where = record.suite_path if record.suite_path != IN_CODE else "SUITE"
    return RunInterrupted(
        f"interrupted; finished calls are stored. Resume with: polygon run {where} "
        f"--resume {record.id}",
        run_id=record.id,
    )


def _finish(store: Store, prepared: _Prepared, tally: RunTally, options: RunOptions) -> RunResult:
    from polygon_voice.api.collect import read_run
    from polygon_voice.api.setup import merged_usage

    record = prepared.record
    probe_client = prepared.probing.client if prepared.probing is not None else None
    caller = prepared.caller_client
    usage = merged_usage(
        caller.usage if caller is not None else None,
        prepared.judging.usage,
        probe_client.usage if probe_client is not None else None,
        _agent_usage(prepared.runner.agent_factory),
        *getattr(prepared.runner.executor, "usages", ()),  # the Ray workers' clients
    )
    updates = {"llm_usage": usage} if usage is not None else None
    store.finish_run(record.id, "finished", datetime.now(UTC), config_updates=updates)
    report = transcripts = None
    if options.write_files:
        from polygon_voice.report import write_run_files

        out_dir = options.out or Path(".polygon") / "runs" / record.id
        try:
            report, transcripts = write_run_files(store, store.get_run(record.id), out_dir)
        except OSError as exc:
            raise InputError(
                f"run {record.id} is stored, but its report cannot be written to {out_dir}: "
                f"{exc.strerror or exc} (polygon show {record.id} reads the stored run)"
            ) from None
    stored = read_run(store, record.id)
    return RunResult(
        run_id=record.id,
        suite=record.suite,
        agent=_masked(record.agent),
        status="finished",
        calls=stored.calls,
        calls_run=tally.conversations,
        cases=stored.cases,
        expectations=stored.expectations,
        failures=tuple(tally.failures.in_order()),
        usage=usage,
        probes=stored.probes,
        report_path=report,
        transcripts_path=transcripts,
        errors=tuple(tally.errors),
        turns_run=tally.turns,
        tool_calls_run=tally.tool_calls,
    )


def _agent_usage(factory: object) -> Usage | None:
    """The prompt agent's model usage (the agent role); other agents use no Polygon model."""
    from polygon_voice.agents.prompt_agent import PromptAgentFactory

    return factory.usage if isinstance(factory, PromptAgentFactory) else None


def _masked(agent: str) -> str:
    from polygon_voice.masking import mask_url

    return mask_url(agent)


def _in_code(loaded: LoadedSuite) -> bool:
    return str(loaded.path) == IN_CODE


def _shown_path(loaded: LoadedSuite) -> str:
    return f"suite {loaded.suite.name}" if _in_code(loaded) else str(loaded.path)
