"""Repeated trials and detected changes as every surface shows them: the terminal tables,
the HTML report and the web app's run and comparison pages read the same formatted rows
(docs/experiments.md, docs/compare.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from polygon_voice.compare.trials import (
    DEFAULT_KS,
    JUDGE_SPREAD_NOTE,
    RunTrials,
    ScenarioTrials,
    TrialOutcome,
    has_repeated_trials,
    outcome_of,
    stats_of_outcomes,
    summary_of_outcomes,
)

if TYPE_CHECKING:
    from polygon_voice.api.results import CallResult
    from polygon_voice.report.layout import FitTable

COLUMNS = (
    "scenario", "trials", "pass rate (95 % CI)", *(f"pass^{k}" for k in DEFAULT_KS),
    "every trial", "composite (95 % CI)", "trial spread", "judge spread", "not counted",
)  # fmt: skip
PASS_NOTE = (
    "A trial passes when its verdict is pass and its expected outcome, if any, was met; "
    "pass^k: the chance that k trials all pass, C(passes, k) / C(trials, k)."
)


def trials_view(calls: Sequence[CallResult]) -> dict[str, Any] | None:
    """The trials table's rows (strings) and its notes; None when no scenario has more than
    one trial (a table of ones would say nothing a run summary does not)."""
    return trials_view_of([outcome_of(c) for c in calls])


def trials_view_of(outcomes: Sequence[TrialOutcome]) -> dict[str, Any] | None:
    """`trials_view` of calls already read as outcomes."""
    rows = stats_of_outcomes(outcomes)
    if not has_repeated_trials(rows):
        return None
    summary = summary_of_outcomes(outcomes)
    return {
        "columns": list(COLUMNS),
        "rows": [_cells(row) for row in rows],
        "total": _total_cells(summary),
        "notes": [PASS_NOTE, JUDGE_SPREAD_NOTE.capitalize() + "."],
    }


def trials_table(view: dict[str, Any]) -> FitTable:
    """The terminal table of a `trials_view`."""
    from polygon_voice.report.layout import Column, FitTable

    columns = [Column(COLUMNS[0], whole=True), *(Column(c, right=True) for c in COLUMNS[1:])]
    table = FitTable("Trials per scenario", columns)
    for cells in [*view["rows"], view["total"]]:
        table.add_row(*cells)
    return table


def _cells(row: ScenarioTrials) -> list[str]:
    return [
        row.scenario,
        str(row.trials),
        _rate(row.passes, row.trials, row.pass_rate, row.pass_rate_interval),
        *(_share(row.pass_hat_k.get(k)) for k in DEFAULT_KS),
        "yes" if row.passed_every_trial else "no",
        _composite(row.mean_composite, row.composite_interval),
        _number(row.trial_spread),
        _number(row.judge_spread),
        _not_counted(row.infra_failures, row.not_exercised),
    ]


def _total_cells(summary: RunTrials) -> list[str]:
    every = f"{summary.passed_every_trial} of {summary.scenarios}"
    return [
        "all scenarios",
        str(summary.trials),
        _rate(summary.passes, summary.trials, summary.pass_rate, summary.pass_rate_interval),
        *(_share(summary.pass_hat_k.get(k)) for k in DEFAULT_KS),
        every,
        _composite(summary.mean_composite, summary.composite_interval),
        _number(summary.trial_spread),
        _number(summary.judge_spread),
        _not_counted(summary.infra_failures, summary.not_exercised),
    ]


def _rate(passes: int, n: int, rate: float | None, interval: tuple[float, float] | None) -> str:
    if rate is None or interval is None:
        return "-"
    low, high = interval
    return f"{passes}/{n} {rate * 100:.0f} % ({low * 100:.0f}-{high * 100:.0f} %)"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _composite(mean: float | None, interval: tuple[float, float] | None) -> str:
    if mean is None:
        return "-"
    if interval is None:
        return f"{mean:.1f}"
    return f"{mean:.1f} ({interval[0]:.1f}-{interval[1]:.1f})"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _not_counted(infra: int, unexercised: int) -> str:
    parts = []
    if infra:
        parts.append(f"{infra} infrastructure")
    if unexercised:
        parts.append(f"{unexercised} not exercised")
    return ", ".join(parts) or "0"


CHANGE_COLUMNS = (
    "what", "mark", "difference", "interval", "p", "pairs", "pass flips (better/worse, p)",
    "why",
)  # fmt: skip
CHANGE_NOTE = (
    "Marked changed only when the difference is larger than its noise: calls paired by "
    "scenario and trial, a bootstrap interval and a sign-flip test, Bonferroni over the "
    "comparison's marks; 'no detectable change' gives the smallest change the data could "
    "have shown."
)


def change_rows(change: dict[str, Any]) -> list[dict[str, Any]]:
    """The marks of one compare.json `changes` entry, overall first: each with its mark and
    its cells (strings) in CHANGE_COLUMNS order."""
    rows = []
    for mark in (change["overall"], *change["criteria"], *change["scenarios"]):
        rows.append({"scope": mark["scope"], "name": mark["name"], "mark": mark["mark"],
                     "cells": change_cells(mark)})  # fmt: skip
    return rows


def change_cells(mark: dict[str, Any]) -> list[str]:
    """One mark's cells in CHANGE_COLUMNS order."""
    what = "overall" if mark["scope"] == "overall" else f"{mark['scope']} {mark['name']}"
    difference = "-" if mark["difference"] is None else f"{mark['difference']:+.2f}"
    interval = mark["interval"]
    shown = "-" if interval is None else f"{interval[0]:+.2f} to {interval[1]:+.2f}"
    p = "-" if mark["p_value"] is None else f"{mark['p_value']:.2g}"
    flips = mark["flips"]
    # Flips are of the pairs' verdicts: a criterion's row would only repeat the overall's.
    flipped = (
        "-"
        if mark["scope"] == "criterion"
        else f"{flips['better']}/{flips['worse']}, p={mark['flips_p']:.2g}"
    )
    return [what, mark["mark"], difference, shown, p, str(mark["pairs"]), flipped, mark["why"]]
