"""A stored run read back as typed results: every call with its stages, in plan order."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from polygon_voice.api.results import CallResult, ProbeSummary

if TYPE_CHECKING:
    from polygon_voice.checks import RunSummary
    from polygon_voice.store import Store


@dataclass(frozen=True)
class StoredRun:
    """What `read_run` found: the calls, the cases' summary, expectations and probes."""

    calls: tuple[CallResult, ...]
    cases: RunSummary
    expectations: dict[str, int]
    probes: tuple[ProbeSummary, ...]


def read_run(store: Store, run_id: str, judgement_set: str = "") -> StoredRun:
    """Every stored call of `run_id` with its judgement (from `judgement_set`), case score,
    expectation and probe answers; one pass over each stage."""
    from polygon_voice.model import CaseScore, ExpectResult
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.model.probes import ProbeResults

    judgements = {
        cid: Judgement.model_validate(data)
        for cid, data in store.iter_stage_results(run_id, "judge", judgement_set)
    }
    cases = {
        cid: CaseScore.model_validate(data)
        for cid, data in store.iter_stage_results(run_id, "checks")
    }
    expects = {
        cid: ExpectResult.model_validate(data)
        for cid, data in store.iter_stage_results(run_id, "expect")
    }
    probes = {
        cid: ProbeResults.model_validate(data).answers
        for cid, data in store.iter_stage_results(run_id, "probes")
    }
    calls = tuple(
        CallResult(
            id=s.id,
            scenario=s.scenario_id,
            end_reason=s.end_reason,
            end_message=s.end_message,
            turns=s.turn_count,
            tool_calls=s.tool_call_count,
            judgement=judgements.get(s.id),
            case=cases.get(s.id),
            expect=expects.get(s.id),
            probes=tuple(probes.get(s.id, ())),
        )
        for s in store.iter_summaries(run_id)
    )
    return summarised(calls)


def summarised(calls: tuple[CallResult, ...]) -> StoredRun:
    """The calls with their three-layer summary, expectations and probe summaries."""
    from polygon_voice.checks import RunSummary

    summary = RunSummary()
    for call in calls:
        if call.case is not None:
            summary.add(call.case)
    return StoredRun(calls, summary, _expectations(calls), _probe_summaries(calls))


def _expectations(calls: tuple[CallResult, ...]) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for call in calls:
        if call.expect is None:
            continue
        if call.expect.not_exercised is not None:
            counts["not_exercised"] += 1
        else:
            counts["met" if call.expect.met else "not_met"] += 1
    return {key: counts[key] for key in ("met", "not_met", "not_exercised")}


def _probe_summaries(calls: tuple[CallResult, ...]) -> tuple[ProbeSummary, ...]:
    counts: dict[tuple[str, str], list[int]] = {}
    for call in calls:
        for answer in call.probes:
            row = counts.setdefault((answer.id, answer.polarity), [0, 0, 0, 0])
            row[0] += answer.answer == "yes"
            row[1] += answer.answer == "no"
            row[2] += answer.answer == "not_applicable"
            row[3] += bool(answer.complied)
    summaries = []
    for (probe_id, polarity), (yes, no, na, right) in sorted(counts.items()):
        applicable = yes + no
        rate = right / applicable if applicable else None
        summaries.append(ProbeSummary(probe_id, polarity, yes, no, na, rate))
    return tuple(summaries)
