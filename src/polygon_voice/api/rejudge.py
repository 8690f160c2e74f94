"""Judging a stored run again, without running its calls again: a new named judgement set.

The new judgements are a named set of stage `judge` beside the run's own (name ""), never in
place of it: a verdict keeps the rubric version it was made under, so a rejudge under v2 of a
v1 run adds a v2 set and the v1 verdicts stay as they were.

An imported run (`polygon import`) has no suite file: each call's scenario is rebuilt from the
stored call itself (imports/judging.py), its expectation from the stored `expect` stage or
the `import` trace entry, and it is judged as a real call (`JudgeInput.real_call`). So is a
replay of one (`polygon replay`, config `kind: replay`): its calls' scenarios are rebuilt the
same way, with the expectation of the imported call each replays.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.errors import InputError, SetupError
from polygon_voice.api.events import RunObserver, RunStarted, activity_of
from polygon_voice.api.results import RunResult
from polygon_voice.api.run import _opened
from polygon_voice.api.suites import IN_CODE, load_suite

if TYPE_CHECKING:
    from polygon_voice.judge import Judging
    from polygon_voice.model import ConversationResult, Scenario, Suite
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.runner import RunTally
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.store import RunRecord, Store

JUDGE_STAGE = "judge"
REPLAY_KIND = "replay"  # api/replay.py's run kind: `polygon replay` of an imported run
# A call's scenario and suite, and whether it is a real call; None: not in the suite.
ScenarioOf = Callable[["ConversationResult"], "tuple[Scenario, Suite, bool] | None"]
# Set names are shown in commands (`--judgement-set NAME`): printable, no spaces, bounded.
MAX_SET_NAME = 64


@dataclass(frozen=True)
class RejudgeOptions:
    """How a stored run is judged again; the defaults are those of `polygon rejudge`."""

    judge: str = "deterministic"
    rubric: str | Path | None = None  # None: the default rubric (v3)
    judge_repeats: int = 1
    concurrency: int = 8
    name: str | None = None  # the new set's name; None: <rubric>:<judge>:<k>, numbered
    llm_config: Path | None = None
    out: Path | None = None  # write report.json and transcripts.jsonl with the new set here
    preflight: bool = True


def rejudge_run(
    run_id: str,
    options: RejudgeOptions | None = None,
    *,
    suite: str | Path | Suite | LoadedSuite | None = None,
    store: Store | None = None,
    db: str | None = None,
    observer: RunObserver | None = None,
    **overrides: Any,
) -> RunResult:
    """Judge the stored calls of `run_id` (a unique prefix is enough) again as a new named set
    and return the run's results under that set (`RunResult.judgement_set`).

    `suite` is the suite the run was made from, when its file is not where the run recorded
    it (a suite built in code). InputError when the suite changed since the run, or the set's
    name is taken or empty.
    """
    options = options or RejudgeOptions()
    if overrides:
        from dataclasses import replace

        options = replace(options, **overrides)
    observer = observer or RunObserver()
    with _opened(store, db) as opened:
        return _rejudge(opened, run_id, options, suite, observer)


def _rejudge(
    store: Store,
    run_id: str,
    options: RejudgeOptions,
    suite: str | Path | Suite | LoadedSuite | None,
    observer: RunObserver,
) -> RunResult:
    from polygon_voice.api.collect import read_run
    from polygon_voice.api.setup import judging_for, merged_usage, stored_run
    from polygon_voice.judge import DEFAULT_RUBRIC
    from polygon_voice.runner import RunTally
    from polygon_voice.store import StoreError

    record = stored_run(store, run_id)
    scenario_of = _scenarios_of(store, record, suite)
    judging = judging_for(
        options.judge, options.rubric or DEFAULT_RUBRIC, options.judge_repeats, options.llm_config
    )
    if options.preflight and judging.judge.name != "deterministic":
        _preflight_judge(options)
    name = set_name(store, record.id, judging, options.name)
    ids = [summary.id for summary in store.iter_summaries(record.id)]
    tally = RunTally()
    tally.failures.on_first = observer.role_failed
    client = getattr(judging.judge, "client", None)
    observer.run_started(
        RunStarted(
            run_id=record.id,
            suite=record.suite,
            agent=record.agent,
            total=len(ids),
            kept=0,
            rejudged=len(ids),
            activity=lambda: activity_of([client]),
        )
    )
    try:
        asyncio.run(
            _judge_all(store, record, scenario_of, judging, name, ids, options, tally, observer)
        )
    except StoreError as exc:
        raise InputError(str(exc)) from None
    report = transcripts = None
    if options.out is not None:
        from polygon_voice.report import write_run_files

        report, transcripts = write_run_files(
            store, store.get_run(record.id), options.out, judgement_set=name
        )
    stored = read_run(store, record.id, name)
    return RunResult(
        run_id=record.id,
        suite=record.suite,
        agent=record.agent,
        status=record.status,
        calls=stored.calls,
        calls_run=tally.conversations,
        cases=stored.cases,
        expectations=stored.expectations,
        failures=tuple(tally.failures.in_order()),
        usage=merged_usage(judging.usage),
        probes=stored.probes,
        report_path=report,
        transcripts_path=transcripts,
        judgement_set=name,
        errors=tuple(tally.errors),
    )


def set_name(store: Store, run_id: str, judging: Judging, wanted: str | None = None) -> str:
    """The new set's name: `wanted`, refused when taken or not a plain name; else
    `<rubric version>:<judge>:<k>`, with `#2`, `#3` … when that is taken, so a rejudge never
    overwrites an earlier set."""
    taken = set(store.stage_result_names(run_id, JUDGE_STAGE))
    if wanted is not None:
        _check_name(wanted, taken, run_id)
        return wanted
    base = f"{judging.rubric.version}:{judging.judge.name}:{judging.repeats}"
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}#{number}"
    return name


def _check_name(name: str, taken: set[str], run_id: str) -> None:
    if not name.strip():
        raise InputError(
            "a judgement set needs a name: the empty name is the run's own set, "
            "which a rejudge never replaces"
        )
    if len(name) > MAX_SET_NAME or not name.isprintable() or name != name.strip() or " " in name:
        raise InputError(
            f"judgement set name {name!r}: use up to {MAX_SET_NAME} printable characters "
            "without spaces"
        )
    if name in taken:
        raise InputError(
            f"run {run_id} already has a judgement set {name!r}; choose another name "
            "(sets are never overwritten)"
        )


def _preflight_judge(options: RejudgeOptions) -> None:
    from polygon_voice import preflight
    from polygon_voice.api.setup import llm_settings

    problems = preflight.check_run_roles(llm_settings(options.llm_config), judge_llm=True)
    if problems:
        raise SetupError(str(preflight.SetupError(problems)))


def _scenarios_of(
    store: Store, record: RunRecord, given: str | Path | Suite | LoadedSuite | None
) -> ScenarioOf:
    """Where each call's scenario comes from: the run's suite, or (an imported run, unless a
    suite is given) the call itself."""
    from polygon_voice.imports.run import is_imported

    if given is None and is_imported(record.config):
        return _imported_scenario(record)
    if given is None and record.config.get("kind") == REPLAY_KIND:
        return _replayed_scenario(store, record)
    suite = _suite_of(store, record, given)
    scenarios = {scenario.id: scenario for scenario in suite.scenarios}

    def of_suite(result: ConversationResult) -> tuple[Scenario, Suite, bool] | None:
        scenario = scenarios.get(result.scenario_id)
        return None if scenario is None else (scenario, suite, False)

    return of_suite


def _imported_scenario(record: RunRecord) -> ScenarioOf:
    from polygon_voice.imports.judging import setup_for, stored_expect

    phrases = [str(p) for p in record.config.get("forbidden_phrases") or ()]

    def of_call(result: ConversationResult) -> tuple[Scenario, Suite, bool]:
        setup = setup_for(result, stored_expect(result), record.suite, phrases)
        return setup.scenario, setup.suite, True

    return of_call


def _replayed_scenario(store: Store, record: RunRecord) -> ScenarioOf:
    """A replay's calls are real calls too (the caller's lines are a real person's): each
    call's scenario is rebuilt as for the imported call it replays (same call id, same
    scenario id), with the `expect:` block that call kept. The replay's stored `expect`
    stage is what the judge reads; the block is for the scenario (its tools, and the LLM
    judge's prompt). When the imported run or call is gone, the scenario has no block."""
    from polygon_voice.imports.judging import setup_for, stored_expect
    from polygon_voice.store import StoreError

    source = record.config.get("replay_of")
    phrases = [str(p) for p in record.config.get("forbidden_phrases") or ()]

    def of_call(result: ConversationResult) -> tuple[Scenario, Suite, bool]:
        expect = None
        if isinstance(source, str) and source:
            try:
                expect = stored_expect(store.get_conversation(source, result.id))
            except StoreError:
                expect = None
        setup = setup_for(result, expect, record.suite, phrases)
        return setup.scenario, setup.suite, True

    return of_call


def _suite_of(
    store: Store, record: RunRecord, given: str | Path | Suite | LoadedSuite | None
) -> Suite:
    """The suite the run was made from: the personas' facts and forbidden phrases come from
    it, so a changed suite would judge calls against ground truth they were not played with."""
    from polygon_voice.api.setup import check_resumed_personas, with_stored_personas

    if given is None and record.suite_path == IN_CODE:
        raise InputError(
            f"run {record.id} was made from a suite built in code; pass it again (suite=...)"
        )
    loaded = load_suite(given if given is not None else Path(record.suite_path))
    if loaded.hash != record.suite_hash:
        raise InputError(
            f"run {record.id} was made from a different version of {loaded.path} "
            f"(hash {record.suite_hash}, now {loaded.hash}); cannot rejudge it against this one"
        )
    loaded = with_stored_personas(store, loaded)
    check_resumed_personas(record, loaded)
    return loaded.suite


async def _judge_all(
    store: Store,
    record: RunRecord,
    scenario_of: ScenarioOf,
    judging: Judging,
    name: str,
    ids: list[str],
    options: RejudgeOptions,
    tally: RunTally,
    observer: RunObserver,
) -> None:
    # Ids first, then one conversation at a time: no read stays open while the set is written.
    try:
        for start in range(0, len(ids), options.concurrency):
            batch = ids[start : start + options.concurrency]
            judged = await asyncio.gather(
                *(_judge_one(store, record.id, cid, scenario_of, judging) for cid in batch)
            )
            for conversation_id, (result, judgement, error) in zip(batch, judged, strict=True):
                tally.conversations += 1
                if judgement is None:
                    tally.errors.append((conversation_id, error))
                    observer.warning(f"skipped {conversation_id}: {error}")
                    continue
                store.add_stage_result(record.id, conversation_id, JUDGE_STAGE, judgement, name)
                tally.add_judgement(judgement)
                if result is not None:
                    observer.call_finished(result, tally)
    finally:
        await judging.aclose()


async def _judge_one(
    store: Store,
    run_id: str,
    conversation_id: str,
    scenario_of: ScenarioOf,
    judging: Judging,
) -> tuple[Any, Judgement | None, str]:
    """(the call, its new judgement, "") or (…, None, why it was skipped)."""
    from polygon_voice.checks.conversation import check_conversation
    from polygon_voice.checks.expect import check_expectations
    from polygon_voice.judge import JudgeInput, judge_conversation_async
    from polygon_voice.model import CaseScore, ExpectResult
    from polygon_voice.model.judgement import ConversationChecks
    from polygon_voice.runner import merged_records

    result = store.get_conversation(run_id, conversation_id)
    try:
        found = scenario_of(result)
    except ValueError as exc:  # an imported call's stored expectation no longer validates
        return result, None, f"its expectation cannot be read: {exc}"
    if found is None:
        return result, None, "its scenario is not in the suite"
    scenario, suite, real_call = found
    # The stored checks are the facts the run was judged on; recomputed only if absent.
    stored = store.get_stage_result(run_id, conversation_id, "conversation_checks")
    phrases = (*suite.forbidden_phrases, *scenario.forbidden_phrases)
    checks = (
        ConversationChecks.model_validate(stored)
        if stored is not None
        else check_conversation(result, list(phrases))
    )
    case_data = store.get_stage_result(run_id, conversation_id, "checks")
    case = CaseScore.model_validate(case_data) if case_data is not None else None
    initial = merged_records(suite.backend, scenario.backend)
    # The stored expectation check, or (a run from before it existed) the same check now.
    expect_data = store.get_stage_result(run_id, conversation_id, "expect")
    expect = (
        ExpectResult.model_validate(expect_data)
        if expect_data is not None
        else check_expectations(result, scenario, initial, case, suite.tools)
    )
    given = JudgeInput(
        result,
        scenario.persona,
        checks,
        case,
        initial,
        scenario,
        suite.tools,
        expect,
        real_call=real_call,
        forbidden_phrases=phrases,
    )
    try:
        judgement = await judge_conversation_async(
            judging.judge, judging.rubric, given, judging.repeats
        )
    except Exception as exc:  # a judge bug must not stop the others being judged
        return result, None, f"the judge failed: {type(exc).__name__}: {exc}"
    return result, judgement, ""
