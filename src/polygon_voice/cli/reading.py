"""Reading stored runs: `runs`, `show` and `gate`.

What these commands print is read from the store only (no call is run again). Heavy imports
(the store, the report views) are inside the commands, so `--help` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, JsonOption, console, fail, open_store, print_json

if TYPE_CHECKING:
    from polygon_voice.model import ConversationResult
    from polygon_voice.store import RunRecord, Store

JudgementSetOption = Annotated[
    str,
    typer.Option(
        "--judgement-set",
        help="Which judgement set to show: '' (the run's own, default) or a rejudge's name.",
    ),
]


@app.command()
def runs(
    limit: Annotated[int, typer.Option(min=1, help="How many runs to list.")] = 20,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """List stored runs, newest first."""
    records = _list_runs(db, limit)
    if as_json:
        from polygon_voice.report.run_list import run_entry

        print_json({"runs": [run_entry(record) for record in records]})
        return
    from polygon_voice.report.run_list import runs_table

    console.print(runs_table(records))


def _list_runs(db: str | None, limit: int) -> list[RunRecord]:
    # A current SQLite file is read with the standard library (no SQLAlchemy import, most of
    # this command's time); anything else, a new database included, goes through the Store.
    from polygon_voice.store import StoreError, list_runs_read_only, resolve_db_url

    # The databases' LIMIT is a 64-bit integer: a larger --limit means every run.
    limit = min(limit, 2**63 - 1)
    try:
        url = resolve_db_url(db)
    except StoreError as exc:
        fail(str(exc))
    records = list_runs_read_only(url, limit)
    if records is not None:
        return records
    store = open_store(db)
    try:
        return store.list_runs(limit=limit)
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", "-c", help="Show this conversation turn by turn."),
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            "-s",
            help="Only calls whose scenario id matches this pattern (* and ? as in the shell); "
            "repeat the option for several.",
        ),
    ] = None,
    judgement_set: JudgementSetOption = "",
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show a stored run's calls with their verdicts, or one call turn by turn.

    A call is shown with its timeline, its expected outcome and its judgement.
    """
    from polygon_voice.store import StoreError

    store = open_store(db)
    try:
        record = store.get_run(run_id)
        if judgement_set and judgement_set not in store.stage_result_names(record.id, "judge"):
            fail(_no_such_set(store, record.id, judgement_set))
        if conversation is not None:
            _show_conversation(store, record, conversation, judgement_set, as_json)
        else:
            _show_run(store, record, scenario or [], judgement_set, as_json)
    except StoreError as exc:
        fail(str(exc))


def _no_such_set(store: Store, run_id: str, name: str) -> str:
    sets = [repr(n) for n in store.stage_result_names(run_id, "judge")]
    known = ", ".join(sets) if sets else "none (the run was not judged)"
    return f"run {run_id} has no judgement set {name!r}; its sets: {known}"


def _show_run(
    store: Store, record: RunRecord, patterns: list[str], judgement_set: str, as_json: bool
) -> None:
    from polygon_voice.report.stored import (
        call_verdicts,
        filtered_summaries,
        run_document,
        scenario_filter,
    )
    from polygon_voice.report.terminal import conversations_table

    keep = scenario_filter(patterns)
    if as_json:
        print_json(run_document(store, record, judgement_set, keep))
        return
    title = f"Run {record.id}: {_who(record)}"
    if patterns:
        title += f", scenarios {' '.join(patterns)}"
    verdicts = call_verdicts(store, record.id, judgement_set)
    table = conversations_table(filtered_summaries(store, record.id, keep), title, verdicts)
    if patterns and not table.row_count:
        fail(f"no call of run {record.id} has a scenario matching {' '.join(patterns)}")
    console.print(table)
    _print_failures(store, record.id, judgement_set, keep)
    _print_trials(store, record.id, judgement_set, keep)
    sets = store.stage_result_names(record.id, "judge")
    if any(sets):  # rejudged: say which sets exist and how to see one
        names = ", ".join(repr(name) for name in sets)
        console.print(f"Judgement sets: {escape(names)} (--judgement-set NAME)")


def _print_trials(
    store: Store, run_id: str, judgement_set: str, keep: Callable[[str], bool]
) -> None:
    """The trials table of the shown calls, when a scenario ran more than once."""
    from collections import Counter

    from polygon_voice.api.collect import read_run
    from polygon_voice.cli.run_view import print_trials

    # The summaries are light; the stages (every judgement) are read only when needed.
    counts = Counter(s.scenario_id for s in store.iter_summaries(run_id) if keep(s.scenario_id))
    if not counts or max(counts.values()) < 2:
        return
    calls = read_run(store, run_id, judgement_set).calls
    print_trials([c for c in calls if keep(c.scenario)])


# A run whose model was down for every call lists its first failures, then counts the rest.
SHOWN_FAILURES = 20


def _print_failures(
    store: Store, run_id: str, judgement_set: str, keep: Callable[[str], bool]
) -> None:
    """The calls a model or endpoint failed for, one line per role: the stored error
    shortened for the screen (`--conversation ID` or `--json` show the whole of it)."""
    from polygon_voice.cli.run_view import ROLE_WORDS, on_screen
    from polygon_voice.report.stored import run_failures
    from polygon_voice.textsafe import visible

    shown = more = 0
    for summary, found in run_failures(store, run_id, judgement_set):
        if not keep(summary.scenario_id):
            continue
        for role, error in found.items():
            if shown == SHOWN_FAILURES:
                more += 1
                continue
            shown += 1
            what = ROLE_WORDS.get(role, (f"the {role} failed", ""))[0]
            console.print(
                f"[red]{escape(visible(summary.id))}: {escape(what)}:[/] "
                f"{escape(visible(on_screen(error)))}"
            )
    if more:
        console.print(f"... and {more} more model failures (polygon show {run_id} --json)")


def _show_conversation(
    store: Store, record: RunRecord, conversation: str, judgement_set: str, as_json: bool
) -> None:
    from polygon_voice.model import CaseScore, ExpectResult
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.report.terminal import (
        case_view,
        conversation_view,
        expect_view,
        judgement_view,
    )

    if as_json:
        from polygon_voice.report.stored import conversation_document

        print_json(conversation_document(store, record, conversation, judgement_set))
        return
    played = store.get_conversation(record.id, conversation)
    console.print(conversation_view(played))
    _print_call_failures(store, record.id, played, judgement_set)
    checks = store.get_stage_result(record.id, conversation, "checks")
    if checks is not None:
        console.print(case_view(CaseScore.model_validate(checks)))
    expected = store.get_stage_result(record.id, conversation, "expect")
    if expected is not None:
        console.print(expect_view(ExpectResult.model_validate(expected), played.scenario_id))
    judged = store.get_stage_result(record.id, conversation, "judge", judgement_set)
    if judged is not None:
        label = f"set '{judgement_set}'" if judgement_set else "the run's own"
        console.print(judgement_view(Judgement.model_validate(judged), label))
    elif judgement_set:
        fail(f"conversation {conversation} has no judgement in set '{judgement_set}'")


def _print_call_failures(
    store: Store, run_id: str, played: ConversationResult, judgement_set: str
) -> None:
    """Each role a model failed for in this call, with its whole stored error."""
    from polygon_voice.cli.run_view import ROLE_WORDS
    from polygon_voice.report.files import conversation_entry
    from polygon_voice.textsafe import visible

    def stage(name: str, set_name: str = "") -> dict[str, Any] | None:
        return store.get_stage_result(run_id, played.id, name, set_name)

    entry = conversation_entry(played, stage("judge", judgement_set), None, stage("probes"))
    for role, error in entry["failures"].items():
        what = ROLE_WORDS.get(role, (f"the {role} failed", ""))[0]
        console.print(f"[bold red]{escape(what)}:[/] {escape(visible(error))}")
    if entry["not_exercised"] is not None:
        console.print(f"[yellow]not exercised:[/] {escape(visible(entry['not_exercised']))}")


# Runs of real calls: no simulated caller, no ground-truth facts, so no three-layer cases.
REAL_CALL_KINDS = ("imported", "replay")
GATE_NOT_APPLICABLE = "not applicable: real calls have no three-layer cases"


def _gate_not_applicable(record: RunRecord, as_json: bool) -> None:
    """IMP-2: the gate neither passes nor fails a run of real calls; said, exit 0."""
    kind = record.config.get("kind")
    if as_json:
        print_json({"run_id": record.id, "agent": record.agent, "kind": kind,
                    "applicable": False, "passed": None, "reason": GATE_NOT_APPLICABLE,
                    "checks": [], "not_exercised": []})  # fmt: skip
    else:
        console.print(
            f"Release gate for run {record.id} ({escape(record.agent)}, {kind}): "
            f"{GATE_NOT_APPLICABLE} (IMP-2)"
        )
    raise typer.Exit(0)


@app.command()
def gate(
    run_id: Annotated[str, typer.Argument(help="Run id (a unique prefix is enough).")],
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """The release gate of a stored run: exit 0 when it passes, 1 when it fails.

    The gate's four checks read the run's three-layer cases; a run without any exits 2. For
    real calls (an imported run, or its replay) the gate is not applicable (IMP-2): exit 0.
    """
    from polygon_voice.report import case_summary
    from polygon_voice.store import StoreError

    store = open_store(db)
    try:
        record = store.get_run(run_id)
        summary = case_summary(store, record.id)
    except StoreError as exc:
        fail(str(exc))
    if summary is None and record.config.get("kind") in REAL_CALL_KINDS:
        _gate_not_applicable(record, as_json)
    if summary is None:
        fail(f"run {record.id} has no three-layer cases to gate (suite {record.suite})")
    result = summary.gate()
    if as_json:
        print_json({"run_id": record.id, "agent": record.agent, **result,
                    "not_exercised": summary.skipped})  # fmt: skip
        raise typer.Exit(0 if result["passed"] else 1)
    from polygon_voice.report.terminal import gate_table, not_exercised_table

    verdict = "passes" if result["passed"] else "fails"
    console.print(
        gate_table(result, f"Release gate for run {record.id} ({record.agent}): {verdict}")
    )
    if summary.skipped:
        console.print(not_exercised_table(summary, "Not exercised (the gate ignores them)"))
    raise typer.Exit(0 if result["passed"] else 1)


def _who(record: RunRecord) -> str:
    """What the run played: the suite and agent with its seed, or, for real calls, whose."""
    from polygon_voice.report.run_list import IMPORTED, run_kind

    if run_kind(record) == IMPORTED:
        return f"{record.suite}, real calls imported ({record.status})"
    return f"{record.suite} with {record.agent} (seed {record.seed}, {record.status})"
