"""A stored run read back as typed results: every call with its stages, in plan order."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from polygon_voice.api.results import (
    CallResult,
    Packed,
    Packer,
    ProbeSummary,
    StoredCallResult,
)

if TYPE_CHECKING:
    from polygon_voice.checks import RunSummary
    from polygon_voice.store import Store
    from polygon_voice.store.records import ConversationSummary


@dataclass(frozen=True)
class StoredRun:
    """What `read_run` found: the calls, the cases' summary, expectations and probes."""

    calls: tuple[CallResult, ...]
    cases: RunSummary
    expectations: dict[str, int]
    probes: tuple[ProbeSummary, ...]


def read_run(store: Store, run_id: str, judgement_set: str = "") -> StoredRun:
    """Every stored call of `run_id` with its judgement (from `judgement_set`), case score,
    expectation and probe answers; one pass over each stage.

    The calls and their stages stream in together, in plan order, so nothing is held for the
    whole run but the calls: each call's stages are validated once (for the run's totals, and
    so that an unreadable row fails here, as it always has) and kept packed
    (`StoredCallResult`), ~1 KB a call rather than the ~25 KB of its models."""
    from polygon_voice.model import CaseScore, ExpectResult
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.model.probes import ProbeResults

    def answers(data: Any) -> tuple[Any, ...]:
        return tuple(ProbeResults.model_validate(data).answers)

    stages: dict[str, tuple[str, str, Callable[[Any], Any]]] = {
        "judgement": ("judge", judgement_set, Judgement.model_validate),
        "case": ("checks", "", CaseScore.model_validate),
        "expect": ("expect", "", ExpectResult.model_validate),
        "probes": ("probes", "", answers),
    }
    streams = {
        field: _StageStream(store.iter_stage_results(run_id, stage, name), Packer(load))
        for field, (stage, name, load) in stages.items()
    }
    try:
        return _joined(store, run_id, streams) or _read_run_by_id(store, run_id, judgement_set)
    finally:
        for stream in streams.values():
            stream.close()


def _joined(store: Store, run_id: str, streams: dict[str, _StageStream]) -> StoredRun | None:
    """The calls with their stages, each stage's rows taken in the calls' order; None when a
    stage's rows are in another order (no run Polygon stores), to be joined by id instead."""
    totals = _Totals()
    calls: list[CallResult] = []
    for s in store.iter_summaries(run_id):
        packed = {
            field: found
            for field, stream in streams.items()
            if (found := stream.take(s.id)) is not None
        }
        call = _call(s, **{field: stage.value() for field, stage in packed.items()})
        totals.add(call)
        calls.append(StoredCallResult.stored(call, packed))
    if any(stream.left_over() for stream in streams.values()):
        return None
    return totals.stored_run(tuple(calls))


class _StageStream:
    """One stage's rows in plan order, taken as the calls they belong to come by."""

    def __init__(self, rows: Iterator[tuple[str, dict[str, Any]]], packer: Packer) -> None:
        self._rows = rows
        self._packer = packer
        self._next: tuple[str, dict[str, Any]] | None = None
        self._ended = False

    def take(self, conversation_id: str) -> Packed | None:
        """The packed row of this call, or None when the stage stored none for it."""
        if self._next is None and not self._ended:
            self._next = next(self._rows, None)
            self._ended = self._next is None
        if self._next is None or self._next[0] != conversation_id:
            return None  # a row of a later call (the rows are in the calls' order)
        row, self._next = self._next, None
        return self._packer.pack(row[1])

    def close(self) -> None:
        """Let the store's connection for these rows go, read to the end or not."""
        close = getattr(self._rows, "close", None)
        if close is not None:
            close()

    def left_over(self) -> bool:
        """Whether rows were never taken (they were not in the calls' order)."""
        return self._next is not None or (not self._ended and next(self._rows, None) is not None)


def _read_run_by_id(store: Store, run_id: str, judgement_set: str) -> StoredRun:
    """`read_run` joining each stage to its calls by id, whatever the rows' order."""
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
        _call(
            s,
            judgement=judgements.get(s.id),
            case=cases.get(s.id),
            expect=expects.get(s.id),
            probes=tuple(probes.get(s.id, ())),
        )
        for s in store.iter_summaries(run_id)
    )
    return summarised(calls)


def _call(summary: ConversationSummary, **stages: Any) -> CallResult:
    """One call of a run: its stored summary with the stage results given."""
    return CallResult(
        id=summary.id,
        scenario=summary.scenario_id,
        end_reason=summary.end_reason,
        end_message=summary.end_message,
        turns=summary.turn_count,
        tool_calls=summary.tool_call_count,
        **stages,
    )


def summarised(calls: tuple[CallResult, ...]) -> StoredRun:
    """The calls with their three-layer summary, expectations and probe summaries."""
    totals = _Totals()
    for call in calls:
        totals.add(call)
    return totals.stored_run(calls)


class _Totals:
    """The three-layer summary, expectations and probe counts, added up one call at a time."""

    def __init__(self) -> None:
        from polygon_voice.checks import RunSummary

        self.summary = RunSummary()
        self.expectations: Counter[str] = Counter()
        self.probe_counts: dict[tuple[str, str], list[int]] = {}

    def add(self, call: CallResult) -> None:
        if call.case is not None:
            self.summary.add(call.case)
        expect = call.expect
        if expect is not None:
            if expect.not_exercised is not None:
                self.expectations["not_exercised"] += 1
            else:
                self.expectations["met" if expect.met else "not_met"] += 1
        self._add_probes(call.probes)

    def _add_probes(self, answers: Iterable[Any]) -> None:
        for answer in answers:
            row = self.probe_counts.setdefault((answer.id, answer.polarity), [0, 0, 0, 0])
            row[0] += answer.answer == "yes"
            row[1] += answer.answer == "no"
            row[2] += answer.answer == "not_applicable"
            row[3] += bool(answer.complied)

    def stored_run(self, calls: tuple[CallResult, ...]) -> StoredRun:
        expectations = {key: self.expectations[key] for key in ("met", "not_met", "not_exercised")}
        return StoredRun(calls, self.summary, expectations, self._probe_summaries())

    def _probe_summaries(self) -> tuple[ProbeSummary, ...]:
        summaries = []
        for (probe_id, polarity), (yes, no, na, right) in sorted(self.probe_counts.items()):
            applicable = yes + no
            rate = right / applicable if applicable else None
            summaries.append(ProbeSummary(probe_id, polarity, yes, no, na, rate))
        return tuple(summaries)
