"""Running suites and reading stored runs: `run`, `runs`, `show`, `schema`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn, ParamSpec, TypeVar

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from polygon_voice import __version__
from polygon_voice.agents import AgentLoadError, describe_agent, resolve_agent
from polygon_voice.checks import RunSummary
from polygon_voice.cli.app import app
from polygon_voice.cli.common import (
    DbOption,
    LlmConfigOption,
    console,
    errors,
    fail,
    open_store,
)
from polygon_voice.cli.persona_runs import (
    caller_client_for,
    check_resumed_personas,
    run_persona_config,
    with_stored_personas,
)
from polygon_voice.cli.probes import ProbesOption, probing_for
from polygon_voice.judge import (
    BUILTIN,
    DEFAULT_RUBRIC,
    MAX_JUDGE_REPEATS,
    Judging,
    RubricError,
    load_rubric,
)
from polygon_voice.judge.run import JudgeUnavailable, judge_named
from polygon_voice.llm import LLMClient, LLMConfigError, Usage, load_llm_config, make_client
from polygon_voice.masking import MASK, mask_url
from polygon_voice.model import ConversationResult
from polygon_voice.noise import NoiseError
from polygon_voice.probes import Probing
from polygon_voice.report import write_run_files
from polygon_voice.report.terminal import (
    axes_table,
    conversations_table,
    end_reason_table,
    fix_list_table,
    gate_table,
    not_exercised_table,
    verdict_table,
)
from polygon_voice.runner import CallBuilder, RunTally, SuiteRunner, count_calls
from polygon_voice.runner.resume import calls_to_rejudge
from polygon_voice.scenario import LoadedSuite, SuiteError, load_suite
from polygon_voice.store import (
    ConversationSummary,
    RunRecord,
    Store,
    StoreError,
    new_run_id,
)
from polygon_voice.store.leases import LeaseKeeper
from polygon_voice.suites import builtin_suite_path
from polygon_voice.tools import ToolConfigError

SHOWN_INLINE = 30
P = ParamSpec("P")
R = TypeVar("R")
# The run leases this command holds (store/leases.py): taken when a run starts or resumes.
_HELD_LEASES: list[LeaseKeeper] = []


def _releasing_leases(function: Callable[P, R]) -> Callable[P, R]:
    """`function` giving up, however it ends (an error, exit or Ctrl-C), the leases it took."""

    @functools.wraps(function)
    def releasing(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        finally:
            while _HELD_LEASES:
                _give_up(_HELD_LEASES.pop())

    return releasing


def _give_up(keeper: LeaseKeeper) -> None:
    keeper.__exit__(None, None, None)
    if keeper.lost and keeper.lease is not None:
        errors.print(
            f"warning: the lease of run {keeper.lease.run_id} lapsed during this command and "
            "another process took the run over; check it with polygon show",
            markup=False,
        )


@app.command()
def run(
    suite: Annotated[
        Path, typer.Argument(help="Suite file (YAML or JSON), or a built-in suite: three-layer.")
    ],
    agent: Annotated[
        str | None,
        typer.Option(help="Agent: a registered name, package.module:attr or file.py:attr."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Run seed: the same seed replays the same calls.")] = 0,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations at once.")] = 8,
    out: Annotated[
        Path | None, typer.Option(help="Folder for report.json and transcripts.jsonl.")
    ] = None,
    resume: Annotated[
        str | None, typer.Option(help="Finish an interrupted run (its id) instead of a new one.")
    ] = None,
    noise: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Recognition noise level for every call, 0 (none) to 1; overrides the suite's.",
        ),
    ] = None,
    gate: Annotated[
        bool, typer.Option("--gate", help="Exit 1 when the release gate (REL-1..4) fails.")
    ] = False,
    judge: Annotated[
        str | None,
        typer.Option(
            help="Who scores the rubric: deterministic or llm (the judge role's model). "
            "[default: deterministic; a resumed run: its own]"
        ),
    ] = None,
    rubric: Annotated[
        str | None,
        typer.Option(help="Rubric: v1, v2 or a rubric YAML file. [default: v2; resumed: its own]"),
    ] = None,
    judge_repeats: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_JUDGE_REPEATS,
            help="Judge each call K times; the median counts (RUB-5). [default: 1; resumed: own]",
        ),
    ] = None,
    llm_config: LlmConfigOption = None,
    probes: ProbesOption = None,
    no_probes: Annotated[
        bool,
        typer.Option(
            "--no-probes", help="Skip the probe pass (it never changes the verdict, PROBE-3)."
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Run a suite against an agent; store every call; write report.json and transcripts.jsonl."""
    loaded = _load(suite)
    store = open_store(db)
    judge, rubric, judge_repeats = judging_options(store, resume, judge, rubric, judge_repeats)
    judging = judging_for(judge, rubric, judge_repeats, llm_config)
    if no_probes and probes is not None:
        fail("give --probes FILE or --no-probes, not both")
    # Built-in deterministic probes by default; None skips the stage (no `probes` in reports).
    probing = None if no_probes else probing_for(probes, llm_config)
    record, tally = execute_run(
        store,
        loaded,
        agent,
        seed,
        concurrency,
        resume,
        noise,
        llm_config=llm_config,
        judging=judging,
        probing=probing,
    )
    out_dir = out or Path(".polygon") / "runs" / record.id
    report, transcripts = write_run_files(store, store.get_run(record.id), out_dir)
    _print_summary(store, record.id, tally)
    if tally.cases.seen:
        print_three_layer({mask_url(record.agent): tally.cases})
    console.print(f"Run [bold]{record.id}[/]: {escape(str(report))}, {escape(str(transcripts))}")
    console.print(f"See a call turn by turn: polygon show {record.id} --conversation ID")
    if gate and not (tally.cases.total and tally.cases.gate()["passed"]):
        errors.print(
            "release gate: FAIL" if tally.cases.total else "release gate: no exercised cases"
        )
        raise typer.Exit(1)


@_releasing_leases
def execute_run(
    store: Store,
    loaded: LoadedSuite,
    agent: str | None,
    seed: int,
    concurrency: int,
    resume: str | None = None,
    noise: float | None = None,
    *,
    llm_config: Path | None = None,
    judging: Judging | None = None,
    probing: Probing | None = None,
) -> tuple[RunRecord, RunTally]:
    """Check, start (or resume) and finish one run with a progress bar; exits on bad input."""
    loaded = with_stored_personas(store, loaded)  # persona_ref: from the database
    _check_tools(loaded)
    _check_noise(loaded, noise)
    caller_client = caller_client_for(loaded, llm_config)  # None unless a scenario has caller: llm
    judging = judging or Judging()
    record, done = _start_or_resume(store, loaded, agent, seed, resume, noise, judging)
    rejudge = calls_to_rejudge(store, record.id, done) if done else frozenset()
    if rejudge:
        console.print(
            f"{len(rejudge)} stored calls without a judgement (or whose judge model failed) "
            "are judged again, not run again."
        )
    noise = _run_noise(loaded, record, noise)
    try:
        factory = resolve_agent(record.agent, loaded.base_dir)
    except AgentLoadError as exc:
        store.finish_run(record.id, "failed", datetime.now(UTC))
        fail(str(exc))
    runner = SuiteRunner(
        suite=loaded.suite,
        agent_factory=factory,
        store=store,
        run_id=record.id,
        seed=record.seed,
        concurrency=concurrency,
        noise=noise,
        skip=frozenset(done),
        rejudge=rejudge,
        caller_client=caller_client,
        judging=judging,
        probing=probing,  # None: no probes stage
    )
    tally = _run_with_progress(runner, store, record, total=count_calls(loaded.suite) - len(done))
    probe_client = probing.client if probing is not None else None
    usage = merged_usage(
        caller_client.usage if caller_client else None,
        judging.usage,
        probe_client.usage if probe_client is not None else None,
    )
    updates = {"llm_usage": usage} if usage is not None else None
    store.finish_run(record.id, "finished", datetime.now(UTC), config_updates=updates)
    return record, tally


def merged_usage(*usages: Usage | None) -> dict[str, Any] | None:
    """The caller's, the judge's and the probes' model usage as one `llm_usage` (None when
    no model ran); the probes share the judge role, so their tallies add to the judge's."""
    # By identity: a client shared by two stages must not count its calls twice.
    present = list({id(u): u for u in usages if u is not None}.values())
    if not present:
        return None
    total = Usage()
    for usage in present:
        for role, tally in usage.roles.items():
            total.roles[role].add(tally)
    return total.to_dict()


def judging_for(judge: str, rubric: str, repeats: int, llm_config: Path | None = None) -> Judging:
    """The run's judge, rubric and repeats from the command line; exits on a bad one."""
    try:
        return Judging(
            judge_named(judge, _judge_client(judge, llm_config)), load_rubric(rubric), repeats
        )
    except (JudgeUnavailable, RubricError) as exc:
        fail(str(exc))


def _judge_client(judge: str, llm_config: Path | None) -> LLMClient | None:
    # Only `--judge llm` reads the LLM settings: the deterministic judge needs no model.
    if judge != "llm":
        return None
    try:
        settings = load_llm_config(llm_config)
        return make_client(settings, "judge") if settings.is_configured("judge") else None
    except LLMConfigError as exc:
        fail(str(exc))


def judging_options(
    store: Store, resume: str | None, judge: str | None, rubric: str | None, repeats: int | None
) -> tuple[str, str, int]:
    """The judge options of a run; a resumed run keeps its own and refuses others, so that one
    run's judgements are all made the same way (comparable, RUB-6)."""
    if resume is None:
        return judge or "deterministic", rubric or DEFAULT_RUBRIC, repeats or 1
    try:
        record = store.get_run(resume)
    except StoreError as exc:
        fail(str(exc))
    config = record.config
    was_judge = str(config.get("judge", "deterministic"))
    was_rubric = str(config.get("rubric", DEFAULT_RUBRIC))
    was_repeats = int(config.get("judge_repeats", 1))
    started = f"run {record.id} was started with"
    if judge is not None and judge != was_judge:
        fail(f"{started} --judge {was_judge}; resume it with the same judge (or leave it out)")
    if repeats is not None and repeats != was_repeats:
        fail(f"{started} --judge-repeats {was_repeats}; resume it with the same (or leave it out)")
    if rubric is None:
        if was_rubric not in BUILTIN:
            fail(f"{started} the rubric file version {was_rubric}; pass --rubric FILE again")
        rubric = was_rubric
    try:
        version = load_rubric(rubric).version
    except RubricError as exc:
        fail(str(exc))
    if version != was_rubric:
        fail(f"{started} rubric {was_rubric}, not {version}; resume it with the same rubric")
    return was_judge, rubric, was_repeats


def print_three_layer(columns: dict[str, RunSummary]) -> None:
    """The axes side by side, then each run's fix list and release gate."""
    console.print(axes_table(columns))
    for name, summary in columns.items():
        if summary.fix_list():
            console.print(fix_list_table(summary, f"Fix list for {name}: failures by root cause"))
        if summary.skipped:
            console.print(not_exercised_table(summary, f"Not exercised for {name} (counted apart)"))
        verdict = "passes" if summary.gate()["passed"] else "fails"
        console.print(gate_table(summary.gate(), f"Release gate for {name}: {verdict}"))


def _load(path: Path) -> LoadedSuite:
    builtin = builtin_suite_path(str(path)) if not path.exists() else None
    try:
        return load_suite(builtin or path)
    except SuiteError as exc:
        fail(str(exc))


def _check_tools(loaded: LoadedSuite) -> None:
    try:
        CallBuilder(loaded.suite, lambda _: _no_agent(), 0).check()
    except ToolConfigError as exc:
        fail(f"{loaded.path}: {exc}")


def _check_noise(loaded: LoadedSuite, noise: float | None) -> None:
    try:
        CallBuilder(loaded.suite, lambda _: _no_agent(), 0, noise=noise).check_noise()
    except NoiseError as exc:
        fail(f"{loaded.path}: {exc}")


def _run_noise(loaded: LoadedSuite, record: RunRecord, given: float | None) -> float | None:
    """The run's --noise level; a resumed run keeps the one it was started with."""
    recorded = record.config.get("noise")
    if given is not None and given != recorded:
        started = "without --noise" if recorded is None else f"with --noise {recorded}"
        fail(f"run {record.id} was started {started}; resume it with the same level")
    if recorded != given:
        _check_noise(loaded, recorded)
    return None if recorded is None else float(recorded)


def _no_agent() -> NoReturn:
    raise AssertionError("checking tools builds no agent")


def _start_or_resume(
    store: Store,
    loaded: LoadedSuite,
    agent: str | None,
    seed: int,
    resume: str | None,
    noise: float | None = None,
    judging: Judging | None = None,
) -> tuple[RunRecord, set[str]]:
    if resume is not None:
        return _resume(store, loaded, resume, agent)
    agent_name = agent or loaded.suite.agent
    if agent_name is None:
        fail(f"{loaded.path}: no agent given: pass --agent or add an 'agent:' key to the suite")
    record = RunRecord(
        id=new_run_id(),
        suite=loaded.suite.name,
        suite_path=str(loaded.path),
        suite_hash=loaded.hash,
        agent=agent_name,
        seed=seed,
        status="running",
        started_at=datetime.now(UTC),
        config={
            "agent_spec": agent_name,
            # A prompt agent's model, prompt version and profile hash (empty for others).
            **describe_agent(agent_name, loaded.base_dir),
            "noise": noise,
            **_judging_config(judging or Judging()),
            **run_persona_config(loaded.suite),
        },
        polygon_version=__version__,
    )
    store.create_run(record)
    _hold_lease(store, record.id)
    return record, set()


def _judging_config(judging: Judging) -> dict[str, object]:
    # Recorded with the run, so its report says which judge and rubric version scored it.
    return {
        "judge": judging.judge.name,
        "rubric": judging.rubric.version,
        "judge_repeats": judging.repeats,
    }


def _resume(
    store: Store, loaded: LoadedSuite, run_id: str, agent: str | None = None
) -> tuple[RunRecord, set[str]]:
    """The stored run, with its agent as given again (`agent`) when the stored one is masked."""
    try:
        record = store.get_run(run_id)
    except StoreError as exc:
        fail(str(exc))
    record = record.model_copy(update={"agent": _resumed_agent(record, agent)})
    _hold_lease(store, record.id)  # before anything is read: a second resume stops here
    if record.suite_hash != loaded.hash:
        fail(
            f"run {record.id} was made from a different version of {loaded.path} "
            f"(hash {record.suite_hash}, now {loaded.hash}); start a new run instead"
        )
    check_resumed_personas(record, loaded)
    done = store.conversation_ids(record.id)
    console.print(f"Resuming run {record.id}: {len(done)} calls already stored are kept.")
    return record, done


def _hold_lease(store: Store, run_id: str) -> None:
    """Take the run's lease until execute_run ends; refused when another process holds it."""
    try:
        keeper = LeaseKeeper(store, run_id).__enter__()
    except StoreError as exc:  # LeaseHeld among them: one line, exit 2
        fail(str(exc))
    if keeper.lease is not None and keeper.lease.taken_over:
        console.print(f"Run {run_id}: the process that held it is gone; taking it over.")
    _HELD_LEASES.append(keeper)  # released when execute_run returns or exits


def _resumed_agent(record: RunRecord, agent: str | None) -> str:
    # Only the masked agent URL is stored: a credential it carried must be given again.
    if agent is not None and mask_url(agent) != record.agent:
        fail(
            f"run {record.id} was started with --agent {record.agent}; resume it with the "
            "same agent (or leave it out)"
        )
    if agent is None and MASK in record.agent:
        fail(
            f"run {record.id}'s agent {record.agent} carries a credential, which is never "
            "stored; resume it with --agent and the full URL again"
        )
    return agent or record.agent


def _run_with_progress(
    runner: SuiteRunner, store: Store, record: RunRecord, total: int
) -> RunTally:
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(f"{record.suite} with {mask_url(record.agent)}", total=total)

        def finished(_: ConversationResult) -> None:
            progress.advance(task)

        runner.on_finished = finished
        try:
            return runner.run()
        except KeyboardInterrupt:
            store.finish_run(record.id, "interrupted", datetime.now(UTC))
            fail(
                f"interrupted; finished calls are stored. Resume with: "
                f"polygon run {record.suite_path} --resume {record.id}",
                code=130,
            )


def _print_summary(store: Store, run_id: str, tally: RunTally) -> None:
    summaries = list(_first(store, run_id, SHOWN_INLINE + 1))
    if len(summaries) <= SHOWN_INLINE:
        console.print(conversations_table(summaries, "Conversations"))
    counts: dict[str, int] = {}
    for summary in store.iter_summaries(run_id):
        counts[summary.end_reason] = counts.get(summary.end_reason, 0) + 1
    console.print(end_reason_table(counts))
    if tally.verdicts:
        console.print(verdict_table(tally.verdicts, tally.mean_composite))
    console.print(expectations_line(tally))
    console.print(
        f"{tally.conversations} calls run now, {tally.turns} turns, {tally.tool_calls} tool calls."
    )
    for conversation_id, message in tally.errors:
        errors.print(f"[red]error in {escape(conversation_id)}:[/] {escape(message)}")
    if tally.judge_failures:
        # Unscored is no pass, but a run judged by nobody must not look quiet either.
        errors.print(
            f"[red]judge model failed for {tally.judge_failures} calls:[/] "
            f"{escape(tally.first_judge_error or '')}; their verdict is unscored "
            f"(polygon run SUITE --resume {run_id} judges them again)"
        )


def expectations_line(tally: RunTally) -> str:
    """How the calls stand against their scenarios' expected outcomes, and how many state none."""
    counts = tally.expectations
    stated = sum(counts.values())
    line = (
        f"Expected outcomes: {counts['met']} met, {counts['not_met']} not met, "
        f"{counts['not_exercised']} not exercised"
    )
    unstated = tally.conversations - stated
    if unstated:
        line += (
            f"; {unstated} call(s) from scenarios without `expect:`, whose verdicts cannot "
            "tell a request done from one ignored (docs/suites.md)"
        )
    return line


def _first(store: Store, run_id: str, limit: int) -> list[ConversationSummary]:
    rows: list[ConversationSummary] = []
    for summary in store.iter_summaries(run_id):
        rows.append(summary)
        if len(rows) >= limit:
            break
    return rows
