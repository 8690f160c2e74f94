"""Probe compliance over a run and across runs (PROBE-2, -4, -5), read from the store.

A series is one probe id at one wording hash: answers to a reworded question are never
pooled with the old wording's, so a trend cannot move because the question changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from polygon_voice.model.probes import ProbeAnswer, ProbeResults
from polygon_voice.probes.stats import Compliance
from polygon_voice.store import RunRecord, Store

STAGE = "probes"


def stored_answers(store: Store, run_id: str) -> Iterator[tuple[str, list[ProbeAnswer]]]:
    """(conversation id, its probe answers) for a run, in plan order."""
    for conversation_id, data in store.iter_stage_results(run_id, STAGE):
        yield conversation_id, ProbeResults.model_validate(data).answers


def run_compliance(
    answers: Iterable[list[ProbeAnswer]],
) -> dict[tuple[str, str, str], Compliance]:
    """(probe id, wording hash, polarity) -> its compliance over the given conversations.

    Counted as they stream by, so a run of any size is never held in memory.
    """
    counts: dict[tuple[str, str, str], list[int]] = {}
    for conversation in answers:
        for answer in conversation:
            yes, no, na, right = counts.setdefault(
                (answer.id, answer.hash, answer.polarity), [0] * 4
            )
            counts[(answer.id, answer.hash, answer.polarity)] = [
                yes + (answer.answer == "yes"),
                no + (answer.answer == "no"),
                na + (answer.answer == "not_applicable"),
                right + bool(answer.complied),
            ]
    return {key: Compliance(*c) for key, c in counts.items()}


def report_rows(compliance: dict[tuple[str, str, str], Compliance]) -> list[dict[str, Any]]:
    """report.json's `probes`: fractions 0-1, null when no conversation was applicable."""
    rows = []
    for (probe_id, digest, polarity), c in sorted(compliance.items()):
        interval = c.interval
        rows.append(
            {
                "id": probe_id,
                "hash": digest,
                "polarity": polarity,
                "yes": c.yes,
                "no": c.no,
                "na": c.na,
                "compliance": None if c.rate is None else round(c.rate, 4),
                "ci_low": None if interval is None else round(interval[0], 4),
                "ci_high": None if interval is None else round(interval[1], 4),
            }
        )
    return rows


@dataclass(frozen=True)
class TrendPoint:
    """One run's compliance for one probe wording."""

    run: RunRecord
    hash: str
    compliance: Compliance
    new_series: bool  # the wording differs from the previous point's: a new series starts


def trend(store: Store, probe_id: str, limit: int | None = None) -> list[TrendPoint]:
    """A probe's compliance per stored run, oldest first, split into series by wording."""
    points: list[TrendPoint] = []
    previous: str | None = None
    for run in reversed(store.list_runs(limit=limit)):
        found = run_compliance(answers for _, answers in stored_answers(store, run.id))
        for (pid, digest, _), c in sorted(found.items(), key=lambda item: item[0][1]):
            if pid != probe_id:
                continue
            points.append(TrendPoint(run, digest, c, previous is not None and digest != previous))
            previous = digest
    return points
