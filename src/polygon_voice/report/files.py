"""report.json and transcripts.jsonl, streamed from the store (views of the stored run)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from polygon_voice.api.results import trial_of
from polygon_voice.checks import RunSummary
from polygon_voice.checks.exercised import not_played
from polygon_voice.compare.trials import (
    TrialOutcome,
    judge_spread_of,
    outcome_of_entry,
    trials_section,
)
from polygon_voice.model import AXES, CaseScore, ConversationResult
from polygon_voice.model.judgement import Judgement
from polygon_voice.noise import caller_wer
from polygon_voice.probes.summary import report_rows, run_compliance, stored_answers
from polygon_voice.report.run_list import run_header
from polygon_voice.runner.failures import ROLES, call_failures
from polygon_voice.store import RunRecord, Store

REPORT_FILE = "report.json"
TRANSCRIPTS_FILE = "transcripts.jsonl"


def write_run_files(
    store: Store, run: RunRecord, out_dir: Path, judgement_set: str = ""
) -> tuple[Path, Path]:
    """Write both files for a stored run; returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return write_report(store, run, out_dir / REPORT_FILE, judgement_set), write_transcripts(
        store, run.id, out_dir / TRANSCRIPTS_FILE
    )


def write_transcripts(store: Store, run_id: str, path: Path) -> Path:
    """One conversation per line in plan order; nothing that varies between runs of a seed."""
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for result in store.iter_conversations(run_id):
            out.write(result.model_dump_json())
            out.write("\n")
    tmp.replace(path)
    return path


def write_report(store: Store, run: RunRecord, path: Path, judgement_set: str = "") -> Path:
    """The run's report: its identity, one entry per conversation, and a summary.

    `judgement_set` picks the judge's named set ("" is the run's own; a rejudge adds others).
    """
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write("{\n")
        header = {**run_header(run), "judgement_set": judgement_set}
        for key, value in header.items():
            out.write(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},\n")
        trials: list[TrialOutcome] = []
        summary = _write_conversations(store, run.id, out, judgement_set, trials)
        out.write(f',\n  "summary": {json.dumps(summary, ensure_ascii=False)}')
        # Pass rate, pass^k and the two spreads per scenario (docs/experiments.md).
        out.write(f',\n  "trials": {json.dumps(trials_section(trials), ensure_ascii=False)}')
        _write_probes(store, run.id, out)
        _write_cases(store, run.id, out)
        out.write("\n}\n")
    tmp.replace(path)
    return path


def conversation_entry(
    result: ConversationResult,
    judgement: dict[str, Any] | None = None,
    checks: dict[str, Any] | None = None,
    probes: dict[str, Any] | None = None,
    expect: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report's entry for one conversation; later stages add their own keys here."""
    entry: dict[str, Any] = {
        "id": result.id,
        "scenario_id": result.scenario_id,
        "trial": trial_of(result.id, result.scenario_id),
        "end_reason": result.end.reason.value,
        "end_message": result.end.message,
        "turns": len(result.turns),
        "tool_calls": len(result.tool_calls),
        # Caller turns, said vs heard (recognition noise); null without caller turns.
        "wer": caller_wer(result),
    }
    if judgement is not None:
        entry["judgement"] = judgement_entry(judgement)
    if checks is not None:
        entry["checks"] = {k: v for k, v in checks.items() if k != "stage"}
    if probes is not None:
        entry["probes"] = probes.get("answers", [])  # each with its evidence quote and turn
    if expect is not None:
        entry["expect"] = {k: v for k, v in expect.items() if k != "stage"}
    entry["not_exercised"] = _not_exercised(result, judgement, expect)
    entry["failures"] = _failures(result, judgement, probes)
    return entry


def _not_exercised(
    result: ConversationResult, judgement: dict[str, Any] | None, expect: dict[str, Any] | None
) -> str | None:
    """Why the call did not test the agent, as its judgement or expectation says; else
    whether its caller failed or never spoke (a call with neither stage); None: exercised."""
    prefix = "not exercised: "
    reasons = judgement.get("reasons", []) if judgement is not None else []
    said = next((r[len(prefix) :] for r in reasons if str(r).startswith(prefix)), None)
    if said is None and expect is not None:
        said = expect.get("not_exercised")
    return str(said) if said is not None else not_played(result)


def _failures(
    result: ConversationResult, judgement: dict[str, Any] | None, probes: dict[str, Any] | None
) -> dict[str, str]:
    """The roles whose model failed for this call, each with its whole stored error."""
    # Unvalidated: only the stored errors and answers are read, and a report streams many calls.
    judged = Judgement.model_construct(**judgement) if judgement is not None else None
    answers = probes.get("answers", []) if probes is not None else []
    reasons = [str(a.get("reason", "")) for a in answers if isinstance(a, dict)]
    return call_failures(result.end.reason.value, result.end.message, judged, reasons)


def judgement_entry(data: dict[str, Any]) -> dict[str, Any]:
    """A stored judgement as the report shows it (stage "judge")."""
    keys = ("rubric_version", "judge", "repeats", "composite", "partial", "unscored", "verdict")
    return {
        **{key: data.get(key) for key in keys},
        "gates_failed": data.get("gates_failed", []),
        "reasons": data.get("reasons", []),
        "criteria": data.get("criteria", {}),
        # The LLM judge's flags; the prompt and raw answers stay in the database (large).
        "evidence_not_found": data.get("evidence_not_found", []),
        "errors": data.get("errors", []),
        # Criterion -> why it does not apply (a real call, IMP-2); {} for a simulated call.
        "not_applicable": data.get("not_applicable", {}),
        # The composite's stdev across the judge's repeats (RUB-5); null with one repeat.
        "judge_spread": _judge_spread(data),
    }


def _judge_spread(data: dict[str, Any]) -> float | None:
    criteria = data.get("criteria")
    raw = data.get("raw_answers")
    spread = judge_spread_of(
        str(data.get("judge", "")),
        int(data.get("repeats") or 1),
        str(data.get("rubric_version", "")),
        [str(c) for c in criteria] if isinstance(criteria, dict) else [],
        [a if isinstance(a, str) else None for a in raw] if isinstance(raw, list) else [],
    )
    return None if spread is None else round(spread, 2)


class Aligned:
    """One stage's results, read alongside the conversations in the same (plan) order.

    Both streams are ordered by index, and a stage skips conversations it has nothing
    for, so a result belongs to the current conversation or to a later one: nothing is
    held but the next result.
    """

    def __init__(self, results: Iterator[tuple[str, dict[str, Any]]]) -> None:
        self._results = results
        self._next = next(results, None)

    def get(self, conversation_id: str) -> dict[str, Any] | None:
        if self._next is None or self._next[0] != conversation_id:
            return None
        data = self._next[1]
        self._next = next(self._results, None)
        return data


def iter_conversation_entries(
    store: Store, run_id: str, judgement_set: str = ""
) -> Iterator[tuple[ConversationResult, dict[str, Any]]]:
    """Each stored conversation of a run in plan order with its report.json entry, streamed:
    one conversation and the next result of each stage are held at a time."""
    judged = Aligned(store.iter_stage_results(run_id, "judge", judgement_set))
    checked = Aligned(store.iter_stage_results(run_id, "conversation_checks"))
    probed = Aligned(store.iter_stage_results(run_id, "probes"))
    expected = Aligned(store.iter_stage_results(run_id, "expect"))
    for result in store.iter_conversations(run_id):
        stages = [stage.get(result.id) for stage in (judged, checked, probed, expected)]
        yield result, conversation_entry(result, *stages)


def _write_conversations(
    store: Store,
    run_id: str,
    out: TextIO,
    judgement_set: str = "",
    trials: list[TrialOutcome] | None = None,
) -> dict[str, Any]:
    # Streamed entry by entry, so a run of any size is never held in memory.
    totals = SummaryTotals()
    out.write('  "conversations": [')
    for _, entry in iter_conversation_entries(store, run_id, judgement_set):
        out.write(
            ("\n    " if totals.count == 0 else ",\n    ") + json.dumps(entry, ensure_ascii=False)
        )
        totals.add(entry)
        if trials is not None:
            trials.append(outcome_of_entry(entry))
    out.write("\n  ]" if totals.count else "]")
    return totals.summary()


class SummaryTotals:
    """report.json's summary, counted as the conversations' entries stream by: counters and
    a running mean only, so nothing grows with the run."""

    def __init__(self) -> None:
        self.count = self.turns = self.calls = self.unexercised = 0
        self.reasons: Counter[str] = Counter()
        self.verdicts: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.failed: Counter[str] = Counter()  # calls per role whose model failed for them
        self.composite_total, self.composite_count = 0.0, 0

    def add(self, entry: dict[str, Any]) -> None:
        self.count += 1
        self.turns += entry["turns"]
        self.calls += entry["tool_calls"]
        self.reasons[entry["end_reason"]] += 1
        self.unexercised += entry["not_exercised"] is not None
        self.failed.update(entry["failures"].keys())
        self.outcomes[_expect_outcome(entry.get("expect"))] += 1
        judgement = entry.get("judgement")
        if judgement is None:
            return
        self.verdicts[judgement["verdict"]] += 1
        if judgement["composite"] is not None:
            self.composite_total += judgement["composite"]
            self.composite_count += 1

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {
            "conversations": self.count,
            "turns": self.turns,
            "tool_calls": self.calls,
            "end_reasons": dict(sorted(self.reasons.items())),
            "expectations": {k: self.outcomes[k] for k in EXPECT_OUTCOMES},
            "not_exercised": self.unexercised,
            "failures": {role: self.failed[role] for role in ROLES if self.failed[role]},
        }
        if self.verdicts:
            summary["verdicts"] = dict(sorted(self.verdicts.items()))
            count = self.composite_count
            summary["mean_composite"] = round(self.composite_total / count, 2) if count else None
        return summary


EXPECT_OUTCOMES = ("met", "not_met", "not_exercised", "unstated")
"""How a conversation stands against its scenario's expected outcome, in report.json's summary;
`unstated`: the scenario states none, so no verdict can tell "nothing done" from "done"."""


def _expect_outcome(expect: dict[str, Any] | None) -> str:
    if expect is None:
        return "unstated"
    if expect.get("not_exercised") is not None:
        return "not_exercised"
    return "met" if expect.get("met") else "not_met"


def _write_probes(store: Store, run_id: str, out: TextIO) -> None:
    # Compliance per probe wording with its Wilson interval (PROBE-2, -4); absent without probes.
    rows = report_rows(run_compliance(answers for _, answers in stored_answers(store, run_id)))
    if rows:
        out.write(f',\n  "probes": {json.dumps(rows, ensure_ascii=False)}')


def case_entry(score: CaseScore) -> dict[str, Any]:
    """The report's entry for one three-layer case."""
    cause = score.root_cause
    return {
        "id": score.case_id,
        "category": score.category,
        # A case not exercised is no verdict on the agent: its axes are not given.
        **{name: None if score.not_exercised else score.passed(name) for name in AXES},
        "e2e": score.e2e,
        "root_cause": cause.cause if cause else None,
        "layer": cause.layer.value if cause and cause.layer else None,
        "evidence": cause.evidence if cause else None,
        "why": {name: v.why for name, v in score.axes.items() if not v.passed},
        "gate_breaks": score.gate_breaks,
        "not_exercised": score.not_exercised,
    }


def case_summary(store: Store, run_id: str) -> RunSummary | None:
    """The three-layer totals of a stored run, or None when it has no cases."""
    summary = RunSummary()
    for _, data in store.iter_stage_results(run_id, "checks"):
        summary.add(CaseScore.model_validate(data))
    return summary if summary.seen else None


def _write_cases(store: Store, run_id: str, out: TextIO) -> None:
    # Cases are streamed like conversations; the totals follow them.
    summary = RunSummary()
    for _, data in store.iter_stage_results(run_id, "checks"):
        score = CaseScore.model_validate(data)
        prefix = ',\n  "cases": [\n    ' if summary.seen == 0 else ",\n    "
        out.write(prefix + json.dumps(case_entry(score), ensure_ascii=False))
        summary.add(score)
    if not summary.seen:
        return
    out.write("\n  ]")
    for key, value in summary.as_report().items():
        out.write(f",\n  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
