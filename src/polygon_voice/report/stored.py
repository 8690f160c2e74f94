"""Stored results read for the reading commands (`runs`, `show`, `gate`) and their `--json`.

The JSON shapes reuse report.json's: a run is `run_header`, a conversation is report.json's
conversation entry (`conversation_entry`), a case is `case_entry`. docs/results.md lists them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from fnmatch import fnmatchcase
from typing import Any

from polygon_voice.model import CaseScore
from polygon_voice.report.files import (
    Aligned,
    case_entry,
    conversation_entry,
    iter_conversation_entries,
)
from polygon_voice.report.run_list import run_entry
from polygon_voice.report.terminal import CallVerdict
from polygon_voice.store import ConversationSummary, RunRecord, Store


def call_verdicts(store: Store, run_id: str, judgement_set: str = "") -> dict[str, CallVerdict]:
    """Each judged call's verdict and composite, by conversation id, from the judge stage's
    set `judgement_set` ("" is the run's own); the conversations themselves are not read."""
    return {
        conversation_id: CallVerdict(str(data.get("verdict", "")), _number(data.get("composite")))
        for conversation_id, data in store.iter_stage_results(run_id, "judge", judgement_set)
    }


def run_failures(
    store: Store, run_id: str, judgement_set: str = ""
) -> Iterator[tuple[ConversationSummary, dict[str, str]]]:
    """Each stored call a model or endpoint failed for, with {role: whole error}, in plan
    order: read from the call's end message, judgement and probe answers, streamed (one
    call and the next result of each stage are held at a time)."""
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.runner.failures import call_failures

    judged = Aligned(store.iter_stage_results(run_id, "judge", judgement_set))
    probed = Aligned(store.iter_stage_results(run_id, "probes"))
    for summary in store.iter_summaries(run_id):
        data, probes = judged.get(summary.id), probed.get(summary.id)
        # Unvalidated: only the stored errors and answers are read.
        judgement = Judgement.model_construct(**data) if data is not None else None
        answers = probes.get("answers", []) if probes is not None else []
        reasons = [str(a.get("reason", "")) for a in answers if isinstance(a, dict)]
        found = call_failures(summary.end_reason, summary.end_message, judgement, reasons)
        if found:
            yield summary, found


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def scenario_filter(patterns: Iterable[str]) -> Callable[[str], bool]:
    """Whether a scenario id matches any of the shell-style patterns; no pattern: all do."""
    given = list(patterns)
    if not given:
        return lambda _: True
    return lambda scenario: any(fnmatchcase(scenario, pattern) for pattern in given)


def filtered_summaries(
    store: Store, run_id: str, keep: Callable[[str], bool]
) -> Iterator[ConversationSummary]:
    """A run's conversation summaries in plan order, those whose scenario `keep` accepts."""
    return (s for s in store.iter_summaries(run_id) if keep(s.scenario_id))


def conversation_entries(
    store: Store, run_id: str, judgement_set: str, keep: Callable[[str], bool]
) -> Iterator[dict[str, Any]]:
    """report.json's conversation entries of a run in plan order, streamed, filtered by scenario."""
    for result, entry in iter_conversation_entries(store, run_id, judgement_set):
        if keep(result.scenario_id):
            yield entry


def run_document(
    store: Store, run: RunRecord, judgement_set: str, keep: Callable[[str], bool]
) -> dict[str, Any]:
    """`show RUN --json`: the run's header, its judgement sets and its conversation entries."""
    return {
        **run_entry(run),
        "judgement_set": judgement_set,
        "judgement_sets": store.stage_result_names(run.id, "judge"),
        "conversations": list(conversation_entries(store, run.id, judgement_set, keep)),
    }


def conversation_document(
    store: Store, run: RunRecord, conversation_id: str, judgement_set: str
) -> dict[str, Any]:
    """`show RUN --conversation ID --json`: report.json's entry for the call, its three-layer
    case (null for other scenarios) and the whole stored conversation (a transcripts.jsonl
    line)."""
    played = store.get_conversation(run.id, conversation_id)

    def stage(name: str, set_name: str = "") -> dict[str, Any] | None:
        return store.get_stage_result(run.id, conversation_id, name, set_name)

    entry = conversation_entry(
        played, stage("judge", judgement_set), stage("conversation_checks"), stage("probes"),
        stage("expect"),
    )  # fmt: skip
    case = stage("checks")
    return {
        "run_id": run.id,
        "judgement_set": judgement_set,
        **entry,
        "case": None if case is None else case_entry(CaseScore.model_validate(case)),
        "conversation": played.model_dump(mode="json"),
    }
