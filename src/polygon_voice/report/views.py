"""View models of stored runs for the HTML report and the web app (plain dicts, no ORM).

`run_view` streams a run's conversations once and keeps one small row per call, never the
transcripts; `conversation_view` reads one call in full; `comparison_view` is `compare()`
(compare.json) plus what a screen shows beside it: per-conversation score changes and the
first calls of each scenario side by side. The numbers are those of report.json and
compare.json, computed by the same code.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from polygon_voice.checks import RunSummary
from polygon_voice.checks.causes import DETECTORS
from polygon_voice.compare.build import CompareError, compare, config_row
from polygon_voice.compare.lifecycle import call_turns
from polygon_voice.compare.stats import mean_interval
from polygon_voice.compare.trials import TrialOutcome, outcome_of_entry
from polygon_voice.model import AXES, CaseScore, ConversationResult, Persona, Speaker
from polygon_voice.probes.summary import report_rows, run_compliance, stored_answers
from polygon_voice.report import charts
from polygon_voice.report.files import (
    Aligned,
    SummaryTotals,
    case_entry,
    conversation_entry,
    iter_conversation_entries,
)
from polygon_voice.report.marks import Segment, find, noise_edits, quotes, segments
from polygon_voice.report.run_list import run_header
from polygon_voice.report.trials_view import (
    CHANGE_COLUMNS,
    CHANGE_NOTE,
    change_rows,
    trials_view_of,
)
from polygon_voice.store import RunRecord, Store, StoreError

View = dict[str, Any]

VERDICTS = ("pass", "warn", "fail", "unscored")
_TURN_REF = re.compile(r"\bturn (\d+)\b")
_CAUSE_TEXT = {name: " ".join((detector.__doc__ or "").split()) for name, detector in DETECTORS}
_CAUSE_TEXT["unclassified"] = "The case failed and no detector found its evidence."


class ComparisonRefused(CompareError):
    """The runs cannot be put side by side; `reason` says why (RUB-6, unknown run, one run)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- identifiers ---------------------------------------------------------------------------


def _slug(text: str) -> str:
    """`text` as an HTML id part: safe characters, plus a short hash when any were replaced
    (so two ids that differ only in replaced characters stay apart)."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", text)
    if safe == text:
        return text
    return f"{safe}-{hashlib.sha256(text.encode()).hexdigest()[:6]}"


def run_anchor(run_id: str) -> str:
    """The id of a run's section in the one-file report (`#run-ID`)."""
    return f"run-{_slug(run_id)}"


def conversation_anchor(run_id: str, conversation_id: str) -> str:
    """The id of a conversation's viewer in the one-file report (`#conv-RUN-ID`)."""
    return f"conv-{_slug(run_id)}-{_slug(conversation_id)}"


def turn_prefix(run_id: str, conversation_id: str) -> str:
    """The prefix of turn ids in the one-file report, where many viewers share a page."""
    return f"{_slug(run_id)}-{_slug(conversation_id)}-"


# -- run -----------------------------------------------------------------------------------


def header(run: RunRecord, judgement_set: str = "", judged: dict[str, Any] | None = None) -> View:
    """What identifies a run: its header, the configuration it stands for, how it was judged.

    `judged` is one of the set's judgements: a rejudged set names its own rubric and judge."""
    config = config_row(run)
    rubric = (judged or {}).get("rubric_version") or run.config.get("rubric")
    return {
        **run_header(run),
        "model": config["model"],
        "prompt_version": config["prompt_version"],
        "profile_hash": config["profile_hash"],
        "rubric_version": rubric,
        "judge": (judged or {}).get("judge") or run.config.get("judge"),
        "judge_repeats": (judged or {}).get("repeats") or run.config.get("judge_repeats"),
        "judgement_set": judgement_set,
    }


def personas_of(run: RunRecord) -> dict[str, str]:
    """Scenario id -> the stored persona it played in this run (scenarios with `persona_ref`)."""
    found: dict[str, str] = {}
    for entry in run.config.get("personas") or ():
        if isinstance(entry, dict) and entry.get("scenario") and entry.get("persona"):
            found[str(entry["scenario"])] = str(entry["persona"])
    return found


def inline_personas(run: RunRecord) -> dict[str, View]:
    """Scenario id -> the persona written in the suite itself, read from the run's suite file
    when it is still there and unchanged (same hash); {} otherwise. Only for display and
    matching: the run's results never depend on it."""
    return dict(_suite_personas(run.suite_path, run.suite_hash))


@lru_cache(maxsize=16)
def _suite_personas(path: str, suite_hash: str) -> tuple[tuple[str, View], ...]:
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.loader import load_suite

    if not path or path.startswith("<") or not Path(path).is_file():
        return ()
    try:
        loaded = load_suite(path)
    except (SuiteError, OSError, ValueError):
        return ()  # a suite that no longer loads: the report goes on without its personas
    if loaded.hash != suite_hash:
        return ()
    return tuple(
        (scenario.id, _persona_fields(None, scenario.persona))
        for scenario in loaded.suite.scenarios
        if scenario.persona_ref is None
    )


def _persona_fields(persona_id: str | None, persona: Persona) -> View:
    return {
        "id": persona_id,
        "name": persona.name,
        "type": persona.type.value,
        "intended_outcome": persona.intended_outcome.value,
        "difficulty": persona.difficulty,
    }


def _persona_keys(run: RunRecord) -> dict[str, str]:
    """Scenario id -> what tells its persona apart: the stored persona's id, else the name
    of the persona written in the suite."""
    keys = {scenario: str(p["name"]) for scenario, p in inline_personas(run).items()}
    keys.update(personas_of(run))
    return keys


def _conversation_row(entry: dict[str, Any], persona: str | None) -> View:
    judgement = entry.get("judgement") or {}
    return {
        "id": entry["id"],
        "scenario_id": entry["scenario_id"],
        "persona": persona,
        "end_reason": entry["end_reason"],
        "end_message": entry["end_message"],
        "turns": entry["turns"],
        "tool_calls": entry["tool_calls"],
        "wer": entry["wer"],
        "verdict": judgement.get("verdict"),
        "composite": judgement.get("composite"),
        "not_exercised": entry["not_exercised"],
        "failures": entry["failures"],
    }


class _Totals(SummaryTotals):
    """report.json's summary and what a run's page shows beside it (composites, criteria),
    counted as the conversations stream by."""

    def __init__(self) -> None:
        super().__init__()
        self.composites: list[float] = []
        self.criteria: dict[str, list[float]] = {}
        # Criterion -> calls where it did not apply (a real call, IMP-2): never a score.
        self.not_applicable: dict[str, int] = {}
        self.names: dict[str, None] = {}  # every criterion met, in the rubric's order
        self.first_judgement: dict[str, Any] | None = None

    def add(self, entry: dict[str, Any]) -> None:
        super().add(entry)
        judgement = entry.get("judgement")
        if judgement is None:
            return
        self.first_judgement = self.first_judgement or judgement
        if judgement["composite"] is not None:
            self.composites.append(float(judgement["composite"]))
        for name, result in (judgement.get("criteria") or {}).items():
            result = result if isinstance(result, dict) else {}
            self.names.setdefault(name, None)
            score = result.get("score")
            if result.get("status") == "not_applicable":
                self.not_applicable[name] = self.not_applicable.get(name, 0) + 1
            elif score is not None:
                self.criteria.setdefault(name, []).append(float(score))

    def criteria_rows(self) -> list[View]:
        """Each criterion's mean over the calls that scored it, and how many it did not
        apply to (a criterion that applied to none has no mean)."""
        rows = []
        for name in self.names:
            values = self.criteria.get(name, [])
            if not values and not self.not_applicable.get(name):
                continue  # never scored, never not applicable: nothing to show, as before
            mean = round(sum(values) / len(values), 3) if values else None
            row: View = {"name": name, "mean": mean, "n": len(values)}
            row["not_applicable"] = self.not_applicable.get(name, 0)
            rows.append(row)
        return rows


def _cases(store: Store, run_id: str) -> tuple[RunSummary, list[View]]:
    """The three-layer totals and one row per case, each with the conversation it scored."""
    summary = RunSummary()
    rows: list[View] = []
    for conversation_id, data in store.iter_stage_results(run_id, "checks"):
        score = CaseScore.model_validate(data)
        summary.add(score)
        rows.append({**case_entry(score), "conversation_id": conversation_id})
    return summary, rows


def fix_list(summary: RunSummary) -> list[View]:
    """The root causes, largest group first, each with what it says went wrong."""
    return [
        {**row, "what": _CAUSE_TEXT.get(row["cause"], ""), "layer": row["layer"]}
        for row in summary.fix_list()
    ]


def _three_layer(summary: RunSummary, rows: list[View]) -> View | None:
    if not summary.seen:
        return None
    report = summary.as_report()
    return {
        "axes": [{"axis": name, **report["axes"][name]} for name in AXES],
        "e2e_integrity": report["e2e_integrity"],
        "root_causes": fix_list(summary),
        "release_gate": report["release_gate"],
        "not_exercised": report["not_exercised"],
        "cases": rows,
        # Case id -> the conversation that played it (the fix list links to the viewers).
        "case_conversations": {row["id"]: row["conversation_id"] for row in rows},
        "report": report,  # report.json's keys, as written there
    }


def _composite_view(values: list[float]) -> View:
    mean, interval = mean_interval(values)
    return {
        "mean": None if mean is None else round(mean, 2),
        "ci_low": None if interval is None else round(interval[0], 2),
        "ci_high": None if interval is None else round(interval[1], 2),
        "n": len(values),
        "interval": "student-t 95%",
    }


def run_view(store: Store, run_id: str, judgement_set: str = "") -> View:
    """A run's page: header, verdicts, criteria, axes, causes, gate, probes, one row per call.

    Streamed: the conversations are read one at a time and only their rows are kept."""
    run = store.get_run(run_id)
    personas = _persona_keys(run)
    totals = _Totals()
    rows: list[View] = []
    trials: list[TrialOutcome] = []
    for result, entry in iter_conversation_entries(store, run.id, judgement_set):
        totals.add(entry)
        rows.append(_conversation_row(entry, personas.get(result.scenario_id)))
        trials.append(outcome_of_entry(entry))
    summary, case_rows = _cases(store, run.id)
    probes = report_rows(run_compliance(a for _, a in stored_answers(store, run.id)))
    criteria = totals.criteria_rows()
    view: View = {
        "header": header(run, judgement_set, totals.first_judgement),
        "summary": totals.summary(),
        "verdicts": {v: totals.verdicts.get(v, 0) for v in VERDICTS},
        "judged": bool(totals.verdicts),
        "composite": _composite_view(totals.composites),
        "criteria": criteria,
        "three_layer": _three_layer(summary, case_rows),
        "probes": probes,
        # Per-scenario pass rates, pass^k and spreads; None unless a scenario ran twice.
        "trials": trials_view_of(trials),
        "conversations": rows,
    }
    view["charts"] = run_charts([view])
    return view


def run_charts(runs: list[View]) -> dict[str, dict[str, Any]]:
    """The four charts over one or more run views (the comparison draws several runs), each
    run labelled by its agent and id."""
    label = charts.run_labels([(r["header"]["run_id"], r["header"]["agent"]) for r in runs])
    calls = [
        {
            "run": label[r["header"]["run_id"]],
            "conversation": c["id"],
            "scenario": c["scenario_id"],
            "composite": c["composite"],
        }
        for r in runs
        for c in r["conversations"]
    ]
    criteria = [
        {"run": label[r["header"]["run_id"]], "criterion": c["name"], "mean": c["mean"]}
        for r in runs
        for c in r["criteria"]
        if c["mean"] is not None  # applied to no call: nothing to draw
    ]
    probes = [
        {
            "run": label[r["header"]["run_id"]],
            "probe": p["id"],
            "compliance": p["compliance"],
            "ci_low": p["ci_low"],
            "ci_high": p["ci_high"],
        }
        for r in runs
        for p in r["probes"]
    ]
    return {
        "composite": charts.composite_chart(calls),
        "criteria": charts.criteria_chart(criteria),
        "probes": charts.probes_chart(probes),
        "repeats": charts.repeats_chart(calls),
    }


# -- conversation ----------------------------------------------------------------------------


def _turn_refs(text: str) -> list[int]:
    return [int(n) for n in _TURN_REF.findall(text)]


def _evidence_spans(
    result: ConversationResult, criteria: dict[str, Any]
) -> dict[int, list[tuple[int, int]]]:
    """Per turn index, the spans of text the judge quoted (only quotes found in the turn)."""
    spans: dict[int, list[tuple[int, int]]] = {}
    for data in criteria.values():
        if not isinstance(data, dict):
            continue
        evidence = str(data.get("evidence") or "")
        turn = data.get("turn")
        if isinstance(turn, int):
            # A line naming its turn quotes it: look for the quoted text in that turn only.
            found = [t for t in result.turns if t.index == turn]
            wanted = quotes(evidence)
        elif data.get("evidence_found"):
            # A model judge's quote, which the judge checked occurs in the transcript.
            found, wanted = list(result.turns), [evidence.strip()]
        else:
            continue
        for candidate in found:
            # The most likely quote that occurs; nothing is marked on a guess.
            span = next((s for q in wanted if (s := find(candidate.text, q)) is not None), None)
            if span is not None:
                spans.setdefault(candidate.index, []).append(span)
                break
    return spans


def _segments_view(parts: list[Segment]) -> list[View]:
    return [{"text": s.text, "noise": s.noise, "evidence": s.evidence} for s in parts]


def _tool_call_view(call: Any, turn: int | None) -> View:
    return {
        "call_id": call.call_id,
        "tool": call.tool,
        "turn": turn,
        "args": call.args,
        "args_valid": call.args_valid,
        "arg_errors": list(call.arg_errors),
        "state_version": call.state_version,
        "idempotency_key": call.idempotency_key,
        "status": call.status.value,
        "history": [{"status": h.status.value, "time": h.time} for h in call.history],
        "fault": None if call.fault is None else call.fault.value,
        "result": call.result,
        "error": None if call.error is None else call.error.value,
        "error_message": call.error_message,
        "late_result_at": call.late_result_at,
    }


def _axes_view(case: dict[str, Any] | None) -> View | None:
    if case is None:
        return None
    score = CaseScore.model_validate(case)
    rows = []
    for name in AXES:
        verdict = score.axes.get(name)
        if verdict is None:
            continue
        refs = _turn_refs(verdict.why)
        rows.append(
            {
                "axis": name,
                "passed": verdict.passed,
                "why": verdict.why,
                "turn": (refs[0] if refs else None),
            }
        )
    cause = score.root_cause
    return {
        "case": case_entry(score),
        "rows": rows,
        "root_cause": None
        if cause is None
        else {
            "cause": cause.cause,
            "layer": None if cause.layer is None else cause.layer.value,
            "what": _CAUSE_TEXT.get(cause.cause, ""),
            "evidence": json.dumps(cause.evidence, ensure_ascii=False, sort_keys=True, default=str),
        },
    }


def conversation_view(
    store: Store, run_id: str, conversation_id: str, judgement_set: str = "", prefix: str = ""
) -> View:
    """One call turn by turn: said vs heard with noise edits, its tool calls through their
    lifecycle, backend writes, state updates, axes, judge criteria and probe answers.

    `prefix` goes before every turn id (`PREFIXturn-N`): the one-file report holds many
    viewers on one page."""
    run = store.get_run(run_id)
    result = store.get_conversation(run.id, conversation_id)
    stages = {
        name: store.get_stage_result(run.id, conversation_id, name, set_name)
        for name, set_name in _stage_names(judgement_set)
    }
    return _conversation_view(store, run, result, stages, prefix)


def _stage_names(judgement_set: str) -> list[tuple[str, str]]:
    """The stages a viewer shows, each with the set read ("" but for the judge's)."""
    return [("judge", judgement_set), ("conversation_checks", ""), ("probes", ""),
            ("expect", ""), ("checks", "")]  # fmt: skip


def _conversation_view(
    store: Store,
    run: RunRecord,
    result: ConversationResult,
    stages: dict[str, dict[str, Any] | None],
    prefix: str,
) -> View:
    judgement, probes = stages["judge"], stages["probes"]
    entry = conversation_entry(
        result, judgement, stages["conversation_checks"], probes, stages["expect"]
    )
    criteria = (judgement or {}).get("criteria") or {}
    evidence = _evidence_spans(result, criteria)
    placed = call_turns(result)
    calls_by_turn: dict[int, list[View]] = {}
    for call in result.tool_calls:
        at = placed.get(call.call_id)
        calls_by_turn.setdefault(at if at is not None else -1, []).append(_tool_call_view(call, at))
    turns = []
    for position, turn in enumerate(result.turns):
        said_noise, heard_noise = (
            noise_edits(turn.text, turn.heard)
            if turn.speaker is Speaker.CALLER and turn.text != turn.heard
            else ([], [])
        )
        marks = evidence.get(turn.index, [])
        turns.append(
            {
                "index": turn.index,
                "id": f"{prefix}turn-{turn.index}",
                "speaker": turn.speaker.value,
                "start": turn.start,
                "end": turn.end,
                "said": _segments_view(segments(turn.text, said_noise, marks)),
                "heard": _segments_view(segments(turn.heard, heard_noise)),
                "heard_differs": turn.heard != turn.text,
                "interrupted": turn.interrupted,
                "barge_in": turn.barge_in,
                "tool_calls": calls_by_turn.get(position, []),
            }
        )
    persona_id = personas_of(run).get(result.scenario_id)
    persona = (
        _persona(store, persona_id)
        if persona_id is not None
        else inline_personas(run).get(result.scenario_id)
    )
    return {
        "run_id": run.id,
        "id": result.id,
        "scenario_id": result.scenario_id,
        "persona": persona,
        "prefix": prefix,
        "entry": entry,
        "end": {
            "reason": result.end.reason.value,
            "time": result.end.time,
            "message": result.end.message,
        },
        "turns": turns,
        "unplaced_calls": calls_by_turn.get(-1, []),
        "backend_writes": [w.model_dump(mode="json") for w in result.backend_writes],
        "state_updates": [u.model_dump(mode="json") for u in result.state_updates],
        "axes": _axes_view(stages["checks"]),
        "judgement": _judgement_view(judgement),
        "probes": list((probes or {}).get("answers") or []),
    }


def _persona(store: Store, persona_id: str | None) -> View | None:
    if persona_id is None:
        return None
    try:
        record = store.get_persona(persona_id)
    except StoreError:
        return {"id": persona_id, "name": None}
    return _persona_fields(record.id, record.persona)


def _judgement_view(judgement: dict[str, Any] | None) -> View | None:
    if judgement is None:
        return None
    criteria = []
    for name, data in (judgement.get("criteria") or {}).items():
        data = data if isinstance(data, dict) else {}
        criteria.append(
            {
                "name": name,
                **{
                    k: data.get(k)
                    for k in ("score", "status", "evidence", "turn", "reason", "evidence_found")
                },
            }
        )
    return {
        "verdict": judgement.get("verdict"),
        "composite": judgement.get("composite"),
        "rubric_version": judgement.get("rubric_version"),
        "judge": judgement.get("judge"),
        "gates_failed": list(judgement.get("gates_failed") or []),
        "reasons": list(judgement.get("reasons") or []),
        "criteria": criteria,
        "not_applicable": dict(judgement.get("not_applicable") or {}),
    }


def iter_conversation_views(
    store: Store, run_id: str, judgement_set: str = "", prefixed: bool = True
) -> Iterator[View]:
    """Every call's viewer in plan order, one at a time (the one-file report renders them as
    they come): the conversations and each stage's results are streamed side by side."""
    run = store.get_run(run_id)
    streams = {
        name: Aligned(store.iter_stage_results(run.id, name, set_name))
        for name, set_name in _stage_names(judgement_set)
    }
    for result in store.iter_conversations(run.id):
        stages = {name: stream.get(result.id) for name, stream in streams.items()}
        prefix = turn_prefix(run.id, result.id) if prefixed else ""
        yield _conversation_view(store, run, result, stages, prefix)


# -- comparison ----------------------------------------------------------------------------


def comparison_view(
    store: Store,
    run_ids: list[str],
    judgement_set: str = "",
    run_views: list[View] | None = None,
) -> View:
    """compare.json plus score changes per conversation and side-by-side first calls;
    ComparisonRefused when the runs cannot be compared. `run_views`: the runs' `run_view`s
    when the caller has them already (the report shows them too), in any order."""
    try:
        result = compare(store, run_ids, judgement_set)
    except ComparisonRefused:
        raise
    except (CompareError, StoreError) as exc:
        raise ComparisonRefused(str(exc)) from exc
    given = {view["header"]["run_id"]: view for view in run_views or ()}
    runs = [
        given.get(card["run_id"]) or run_view(store, card["run_id"], judgement_set)
        for card in result["scorecards"]
    ]
    return {
        **result,
        "runs": [r["header"] for r in runs],
        "score_changes": score_changes(runs),
        # Each later run against the first: its marks as rows (compare.json's `changes`).
        "change_tables": [{**change, "rows": change_rows(change)} for change in result["changes"]],
        "change_columns": list(CHANGE_COLUMNS),
        "change_note": CHANGE_NOTE,
        "side_by_side": _side_by_side(store, result["divergence"], runs),
        "charts": run_charts(runs),
    }


def score_changes(runs: list[View]) -> list[View]:
    """Each call matched across runs by scenario, persona and repeat (its n-th call of the
    scenario), with its composite per run and the change from the first run."""
    keyed: dict[tuple[str, str, int], dict[str, View]] = {}
    for run in runs:
        seen: Counter[tuple[str, str]] = Counter()
        for row in run["conversations"]:
            key = (row["scenario_id"], row["persona"] or "")
            keyed.setdefault((*key, seen[key]), {})[run["header"]["run_id"]] = row
            seen[key] += 1
    first = runs[0]["header"]["run_id"]
    changes = []
    for (scenario, persona, repeat), by_run in sorted(keyed.items()):
        base = by_run.get(first, {}).get("composite")
        cells = {
            run_id: {
                "conversation": row["id"],
                "composite": row["composite"],
                "verdict": row["verdict"],
            }
            for run_id, row in by_run.items()
        }
        deltas = {
            run_id: None
            if base is None or cell["composite"] is None
            else round(cell["composite"] - base, 2)
            for run_id, cell in cells.items()
            if run_id != first
        }
        changes.append(
            {
                "scenario": scenario,
                "persona": persona or None,
                "repeat": repeat,
                "cells": cells,
                "deltas": deltas,
                "complete": len(cells) == len(runs),
            }
        )
    return changes


def _side_by_side(store: Store, diverged: list[View], runs: list[View]) -> list[View]:
    """Each divergence row's two first calls turn by turn: the scenarios of the matrix and
    those compared by turns only (a call in every run, unscored in some)."""
    first_call: dict[tuple[str, str], str] = {}
    for run in runs:
        for row in run["conversations"]:
            first_call.setdefault((run["header"]["run_id"], row["scenario_id"]), row["id"])
    out = []
    for point in diverged:
        a = store.get_conversation(point["a"], first_call[(point["a"], point["scenario"])])
        b = store.get_conversation(point["b"], first_call[(point["b"], point["scenario"])])
        placed_a, placed_b = call_turns(a), call_turns(b)
        rows = []
        for i in range(max(len(a.turns), len(b.turns))):
            rows.append({
                "index": i,
                "a": _side_turn(a, i, placed_a),
                "b": _side_turn(b, i, placed_b),
                "divergence": point["turn"] == i,
            })  # fmt: skip
        out.append(
            {
                **point,
                "a_conversation": a.id,
                "b_conversation": b.id,
                "rows": rows,
                "a_end": a.end.reason.value,
                "b_end": b.end.reason.value,
            }
        )
    return out


def _side_turn(
    result: ConversationResult, i: int, placed: dict[str, int] | None = None
) -> View | None:
    """Turn `i` as a side-by-side cell, with the tool calls it made (the divergence rule
    `tool_calls` compares those)."""
    if i >= len(result.turns):
        return None
    turn = result.turns[i]
    where = placed if placed is not None else call_turns(result)
    calls = [
        {"tool": c.tool, "args": c.args, "status": c.status.value,
         "idempotency_key": c.idempotency_key}
        for c in result.tool_calls
        if where.get(c.call_id) == i
    ]  # fmt: skip
    return {"speaker": turn.speaker.value, "text": turn.text, "start": turn.start, "calls": calls}
