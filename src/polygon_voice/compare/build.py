"""Read runs from the store and build the comparison (CMP-1, -2, -3, -4, -5, RUB-6).

The matrix holds the scenarios with a score in every run (CMP-5); the divergence points
(CMP-3) are about turns, not scores, so they are computed for every scenario with a call in
every run, scored or not (an imported call and its replay, both unscored, still part).

Everything is streamed per run except one conversation per scenario (the first by index),
which the divergence point needs in full.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

from polygon_voice.checks.score import RunSummary
from polygon_voice.compare.analysis import analysis
from polygon_voice.compare.divergence import divergence
from polygon_voice.compare.stats import mean_interval
from polygon_voice.model.checks import CaseScore
from polygon_voice.model.judgement import Judgement
from polygon_voice.probes.summary import report_rows, run_compliance, stored_answers
from polygon_voice.store import RunRecord, Store

# Keys a run's config may record for its configuration; the first one present is used.
# `agent_*` is what `polygon run` records for a prompt agent (agents/prompt_agent.py).
_MODEL_KEYS = ("agent_model", "model", "llm_model")
_PROMPT_KEYS = ("agent_prompt_version", "prompt_version", "prompt_hash")
_PROFILE_KEYS = ("agent_profile_hash", "profile_hash", "parameter_profile_hash")


class CompareError(Exception):
    """Runs that cannot be put side by side (RUB-6, unknown run, too few runs)."""


class Steps(Protocol):
    """Told of the comparison's steps as they are done (the command's progress bar)."""

    def more(self, count: int) -> None:
        """`count` more steps are to come than announced so far."""
        ...

    def done(self, what: str) -> None:
        """One step is done; `what` names it (a run or a scenario)."""
        ...


class _Quiet:
    def more(self, count: int) -> None:
        pass

    def done(self, what: str) -> None:
        pass


@dataclass
class RunData:
    """What the comparison needs of one run."""

    record: RunRecord
    rubric: str | None = None
    composites: dict[str, list[float]] = field(default_factory=dict)  # scenario -> per call
    first_call: dict[str, str] = field(default_factory=dict)  # scenario -> conversation id
    judgements: list[Judgement] = field(default_factory=list)


def load_run(store: Store, run_id: str, judgement_set: str = "") -> RunData:
    """One run's judgements, grouped by scenario; its rubric version must be single."""
    record = store.get_run(run_id)
    data = RunData(record)
    scenario_of: dict[str, str] = {}
    for summary in store.iter_summaries(record.id):
        scenario_of[summary.id] = summary.scenario_id
        data.first_call.setdefault(summary.scenario_id, summary.id)
    versions: set[str] = set()
    for conversation_id, raw in store.iter_stage_results(record.id, "judge", judgement_set):
        judgement = Judgement.model_validate(raw)
        versions.add(judgement.rubric_version)
        data.judgements.append(judgement)
        scenario = scenario_of.get(conversation_id)
        if scenario is None:
            continue
        values = data.composites.setdefault(scenario, [])
        if judgement.composite is not None:
            values.append(judgement.composite)
    if len(versions) > 1:
        raise CompareError(
            f"run {record.id} mixes rubric versions {', '.join(sorted(versions))}; "
            f"rejudge it onto one: polygon rejudge {record.id} --rubric VERSION"
        )
    data.rubric = next(iter(versions), None)
    return data


def check_rubrics(runs: list[RunData]) -> None:
    """RUB-6: refuse runs judged under different rubric versions."""
    versions = {r.record.id: r.rubric for r in runs if r.rubric is not None}
    if len(set(versions.values())) > 1:
        listed = ", ".join(f"{run} ({v})" for run, v in versions.items())
        newest = max(versions.values())
        raise CompareError(
            f"runs were judged under different rubric versions: {listed}; scores are only "
            f"comparable within one rubric version (RUB-6). Rejudge them onto one, e.g. "
            + "; ".join(
                f"polygon rejudge {run} --rubric {newest}"
                for run, v in versions.items()
                if v != newest
            )
        )


def config_row(record: RunRecord) -> dict[str, Any]:
    """The configuration a run stands for; null where the run did not record it."""
    return {
        "run_id": record.id,
        "agent": record.agent,
        "model": _first(record.config, _MODEL_KEYS),
        "prompt_version": _first(record.config, _PROMPT_KEYS),
        "profile_hash": _first(record.config, _PROFILE_KEYS),
    }


def _first(config: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((config[k] for k in keys if config.get(k) is not None), None)


def scorecard(store: Store, run: RunData) -> dict[str, Any]:
    """CMP-1: composite mean with its t interval, verdicts, criteria, axes, probes."""
    composites = [j.composite for j in run.judgements if j.composite is not None]
    mean, interval = mean_interval(composites)
    verdicts = Counter(j.verdict for j in run.judgements)
    criteria: dict[str, list[float]] = {}
    for judgement in run.judgements:
        for name, result in judgement.criteria.items():
            if result.score is not None:
                criteria.setdefault(name, []).append(result.score)
    summary = RunSummary()
    for _, raw in store.iter_stage_results(run.record.id, "checks"):
        summary.add(CaseScore.model_validate(raw))
    answers = (a for _, a in stored_answers(store, run.record.id))
    return {
        "run_id": run.record.id,
        "rubric_version": run.rubric,
        "calls": len(run.judgements),
        "composite": {
            "mean": _round(mean),
            "ci_low": None if interval is None else round(interval[0], 2),
            "ci_high": None if interval is None else round(interval[1], 2),
            "n": len(composites),
            "interval": "student-t 95%",
        },
        "verdicts": {v: verdicts.get(v, 0) for v in ("pass", "warn", "fail", "unscored")},
        "criteria": {
            name: round(sum(scores) / len(scores), 3) for name, scores in sorted(criteria.items())
        },
        # Only suites with three-layer cases have axes; null rather than six zeros.
        "axes": summary.axes() if summary.total else None,
        "probes": report_rows(run_compliance(answers)),
    }


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def scenario_means(run: RunData) -> dict[str, float]:
    """Mean composite per scenario over its repeats; scenarios with none are left out."""
    return {s: sum(v) / len(v) for s, v in run.composites.items() if v}


def matrix(runs: list[RunData]) -> tuple[list[dict[str, Any]], list[str]]:
    """CMP-2 rows sorted by spread, largest first; and the incomparable scenarios (CMP-5)."""
    means = [scenario_means(r) for r in runs]
    scenarios = sorted(
        set().union(*(set(r.first_call) | set(m) for r, m in zip(runs, means, strict=True)))
    )
    rows: list[dict[str, Any]] = []
    incomparable: list[str] = []
    for scenario in scenarios:
        if any(scenario not in m for m in means):
            # Never a zero for a missing result: the scenario leaves the matrix (CMP-5).
            incomparable.append(scenario)
            continue
        values = {r.record.id: round(m[scenario], 2) for r, m in zip(runs, means, strict=True)}
        spread = round(max(values.values()) - min(values.values()), 2)
        rows.append({"scenario": scenario, "composites": values, "spread": spread})
    rows.sort(key=lambda row: (-row["spread"], row["scenario"]))
    return rows, incomparable


def turn_scenarios(runs: list[RunData], scored: list[str]) -> list[str]:
    """The scenarios whose turns are compared (CMP-3): every scenario with a call in every
    run, scored or not. The matrix's scenarios first, in its order, then the rest (calls
    without a score: an imported call without an expectation is unscored) by id."""
    in_all: set[str] = set(runs[0].first_call) if runs else set()
    for run in runs[1:]:
        in_all &= set(run.first_call)
    rest = sorted(in_all - set(scored))
    return [s for s in scored if s in in_all] + rest


def divergences(
    store: Store,
    runs: list[RunData],
    scenarios: list[str],
    steps: Steps | None = None,
    scored: set[str] | None = None,
) -> list[dict[str, Any]]:
    """CMP-3 for each scenario of `scenarios` with a call in every run, for every pair of
    runs, on each run's first call; `scored`: the matrix's scenarios (default: all), each
    row saying whether its scenario is one (`scored` false: compared by turns only)."""
    rows: list[dict[str, Any]] = []
    for scenario in scenarios:
        if steps is not None:
            steps.done(f"scenario {scenario}")
        if any(scenario not in r.first_call for r in runs):
            continue
        calls = {
            r.record.id: store.get_conversation(r.record.id, r.first_call[scenario]) for r in runs
        }
        for a, b in combinations(runs, 2):
            point = divergence(calls[a.record.id], calls[b.record.id])
            rows.append(
                {
                    "scenario": scenario,
                    "a": a.record.id,
                    "b": b.record.id,
                    "turn": point.turn,
                    "rule": point.rule,
                    "scored": scored is None or scenario in scored,
                }
            )
    return rows


def compare(
    store: Store, run_ids: list[str], judgement_set: str = "", steps: Steps | None = None
) -> dict[str, Any]:
    """compare.json for two or more runs; CompareError when they cannot be compared.

    `steps` is told of each run read, each scorecard and each scenario compared."""
    if len(run_ids) < 2:
        raise CompareError("compare needs at least two runs")
    told = steps or _Quiet()
    told.more(2 * len(run_ids))  # each run is read, then scored; the scenarios come later
    runs = []
    for run_id in run_ids:
        runs.append(load_run(store, run_id, judgement_set))
        told.done(f"read run {runs[-1].record.id}")
    ids = [r.record.id for r in runs]
    if len(set(ids)) != len(ids):
        raise CompareError(f"a run is named twice: {', '.join(ids)}")
    check_rubrics(runs)
    rows, incomparable = matrix(runs)
    scored = [row["scenario"] for row in rows]
    compared = turn_scenarios(runs, scored)
    told.more(len(compared))
    cards = []
    for r in runs:
        cards.append(scorecard(store, r))
        told.done(f"scorecard of run {r.record.id}")
    diverged = divergences(store, runs, compared, told, set(scored))
    told.more(len(runs) - 1)
    result: dict[str, Any] = {
        "configs": [config_row(r.record) for r in runs],
        "rubric_version": next((r.rubric for r in runs if r.rubric), None),
        "scorecards": cards,
        "matrix": rows,
        "divergence": diverged,
        "incomparable": incomparable,
        # Each later run against the first: improved, regressed or no detectable change.
        "changes": changes(store, ids, judgement_set, told),
    }
    result["analysis"] = analysis(result)
    return result


def changes(
    store: Store, run_ids: list[str], judgement_set: str = "", steps: Steps | None = None
) -> list[dict[str, Any]]:
    """Change detection (compare/change.py) of every run after the first against the first,
    paired by scenario and trial."""
    from polygon_voice.api.collect import read_run
    from polygon_voice.compare.change import detect_changes

    told = steps or _Quiet()
    baseline = read_run(store, run_ids[0], judgement_set).calls
    out: list[dict[str, Any]] = []
    for run_id in run_ids[1:]:
        calls = read_run(store, run_id, judgement_set).calls
        report = detect_changes(baseline, calls, before_id=run_ids[0], after_id=run_id)
        out.append(report.to_dict())
        told.done(f"changes of run {run_id}")
    return out
