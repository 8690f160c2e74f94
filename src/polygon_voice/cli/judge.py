"""`polygon rejudge`: judge a stored run's conversations again, without running them again.

The new judgements are a named set of stage `judge` beside the run's own (name ""), never
in place of it: a verdict keeps the rubric version it was made under (RUB-6, GATE-3), so a
rejudge under v2 of a v1 run adds a v2 set and the v1 verdicts stay as they were.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.checks.expect import check_expectations
from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, LlmConfigOption, console, errors, fail, open_store
from polygon_voice.cli.persona_runs import check_resumed_personas, with_stored_personas
from polygon_voice.cli.runs import _load, judging_for, merged_usage
from polygon_voice.judge import (
    DEFAULT_RUBRIC,
    MAX_JUDGE_REPEATS,
    JudgeInput,
    Judging,
    judge_conversation_async,
)
from polygon_voice.judge.run import judge_model_failed
from polygon_voice.model import CaseScore, ExpectResult, Scenario, Suite
from polygon_voice.model.judgement import ConversationChecks, Judgement
from polygon_voice.report import write_run_files
from polygon_voice.report.terminal import verdict_table
from polygon_voice.runner import merged_records
from polygon_voice.store import RunRecord, Store, StoreError

JUDGE_STAGE = "judge"


@app.command()
def rejudge(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    judge: Annotated[str, typer.Option(help="Who scores: deterministic or llm.")] = (
        "deterministic"
    ),
    rubric: Annotated[
        str, typer.Option(help="Rubric: v1, v2 or a rubric YAML file.")
    ] = DEFAULT_RUBRIC,
    judge_repeats: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_JUDGE_REPEATS,
            help="Judge each call K times; the median counts (RUB-5).",
        ),
    ] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations judged at once.")] = 8,
    out: Annotated[
        Path | None,
        typer.Option(help="Write report.json and transcripts.jsonl here, with the new set."),
    ] = None,
    llm_config: LlmConfigOption = None,
    db: DbOption = None,
) -> None:
    """Judge a stored run again as a new named judgement set; the run's own set stays."""
    store = open_store(db)
    try:
        record = store.get_run(run_id)
    except StoreError as exc:
        fail(str(exc))
    suite = _suite_of(store, record)
    judging = judging_for(judge, rubric, judge_repeats, llm_config)
    name = new_set_name(store, record.id, judging)
    try:
        tally = asyncio.run(_rejudge_all(store, record, suite, judging, name, concurrency))
    except StoreError as exc:
        fail(str(exc))
    verdicts, composites, failed = tally
    mean = sum(composites) / len(composites) if composites else None
    console.print(f"Judgement set [bold]{escape(name)}[/] of run {record.id}:")
    console.print(verdict_table(dict(verdicts), mean))
    if failed:  # unscored is no pass, but a set judged by nobody must not look quiet
        errors.print(
            f"[red]judge model failed for {len(failed)} calls:[/] {escape(failed[0])}; "
            "their verdict is unscored"
        )
    usage = merged_usage(judging.usage)
    if usage is not None:
        judge_usage = usage["judge"]
        console.print(
            f"judge model: {judge_usage['calls']} calls ({judge_usage['cached_calls']} cached), "
            f"{judge_usage['tokens_in']} tokens in, {judge_usage['tokens_out']} out"
        )
    if out is not None:
        report, _ = write_run_files(store, store.get_run(record.id), out, judgement_set=name)
        console.print(f"Report with this set: {escape(str(report))}")
    console.print(
        f"See one: polygon show {record.id} --conversation ID --judgement-set {escape(name)}"
    )


def new_set_name(store: Store, run_id: str, judging: Judging) -> str:
    """`<rubric version>:<judge>:<k>`, with `#2`, `#3` … when that name is taken, so a
    rejudge never overwrites an earlier set."""
    base = f"{judging.rubric.version}:{judging.judge.name}:{judging.repeats}"
    taken = set(store.stage_result_names(run_id, JUDGE_STAGE))
    name, number = base, 1
    while name in taken:
        number += 1
        name = f"{base}#{number}"
    return name


def _suite_of(store: Store, record: RunRecord) -> Suite:
    # The personas' facts and forbidden phrases come from the suite: it must be the one the
    # run was made from, or the judge would read ground truth the calls were not played with.
    loaded = _load(Path(record.suite_path))
    if loaded.hash != record.suite_hash:
        fail(
            f"run {record.id} was made from a different version of {loaded.path} "
            f"(hash {record.suite_hash}, now {loaded.hash}); cannot rejudge it against this one"
        )
    loaded = with_stored_personas(store, loaded)
    check_resumed_personas(record, loaded)
    return loaded.suite


async def _rejudge_all(
    store: Store, record: RunRecord, suite: Suite, judging: Judging, name: str, concurrency: int
) -> tuple[Counter[str], list[float], list[str]]:
    """Verdict counts, composites, and the errors of the judgements the judge model failed."""
    # Ids first, then one conversation at a time: no read stays open while the set is written.
    ids = [summary.id for summary in store.iter_summaries(record.id)]
    scenarios = {scenario.id: scenario for scenario in suite.scenarios}
    verdicts: Counter[str] = Counter()
    composites: list[float] = []
    failed: list[str] = []
    try:
        for start in range(0, len(ids), concurrency):
            batch = ids[start : start + concurrency]
            judged = await asyncio.gather(
                *(_rejudge_one(store, record.id, cid, suite, scenarios, judging) for cid in batch)
            )
            for conversation_id, judgement in zip(batch, judged, strict=True):
                if judgement is None:
                    continue
                store.add_stage_result(record.id, conversation_id, JUDGE_STAGE, judgement, name)
                verdicts[judgement.verdict] += 1
                if judgement.composite is not None:
                    composites.append(judgement.composite)
                error = judge_model_failed(judgement)
                if error is not None:
                    failed.append(error)
    finally:
        await judging.aclose()
    return verdicts, composites, failed


async def _rejudge_one(
    store: Store,
    run_id: str,
    conversation_id: str,
    suite: Suite,
    scenarios: dict[str, Scenario],
    judging: Judging,
) -> Judgement | None:
    result = store.get_conversation(run_id, conversation_id)
    scenario = scenarios.get(result.scenario_id)
    if scenario is None:
        errors.print(f"[red]skipped {escape(conversation_id)}:[/] its scenario is not in the suite")
        return None
    # The stored checks are the facts the run was judged on; recomputed only if absent.
    stored = store.get_stage_result(run_id, conversation_id, "conversation_checks")
    checks = (
        ConversationChecks.model_validate(stored)
        if stored is not None
        else check_conversation(result, [*suite.forbidden_phrases, *scenario.forbidden_phrases])
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
        result, scenario.persona, checks, case, initial, scenario, suite.tools, expect
    )
    try:
        return await judge_conversation_async(judging.judge, judging.rubric, given, judging.repeats)
    except Exception as exc:  # a judge bug must not stop the others being judged
        errors.print(f"[red]judge failed on {escape(conversation_id)}:[/] {escape(str(exc))}")
        return None
