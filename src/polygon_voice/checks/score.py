"""Scoring one three-layer case, and summing a run up (axes never averaged, AX-7)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from polygon_voice.checks import axes
from polygon_voice.checks.causes import LAYERS, root_cause
from polygon_voice.checks.evidence import CaseView, Records
from polygon_voice.checks.exercised import (
    agent_at_fault,
    not_played,
    unplayed_events,
    unwinnable,
)
from polygon_voice.checks.gate import gate_breaks, run_gate
from polygon_voice.model import (
    AXES,
    CaseScore,
    ConversationResult,
    PrepareToolCall,
    Scenario,
    StatefulStub,
    ToolSpec,
)
from polygon_voice.tools import Backend, ToolSet


def is_case(scenario: Scenario) -> bool:
    """Whether a scenario is a three-layer case (it has a category and expectations)."""
    return scenario.category is not None and scenario.expected is not None


def score_case(
    result: ConversationResult,
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    initial: Records,
) -> CaseScore:
    """The six axes, end-to-end integrity, the root cause and gate breaks of one case."""
    view = CaseView(result, scenario, tools, initial)
    verdicts = {
        "captured": axes.captured(view),
        "active_state_correct": axes.active_state_correct(view),
        "tool_args_correct": axes.tool_args_correct(view),
        "stale_write_prevented": axes.stale_write_prevented(view),
        "backend_correct": axes.backend_correct(view, gold_replay(view)),
        "confirmation_matches_backend": axes.confirmation_matches_backend(view),
    }
    failed = [name for name in AXES if not verdicts[name].passed]
    category = scenario.category.value if scenario.category else ""
    skipped = not_exercised(view, failed)
    if skipped is not None:
        # The suite's problem, not the agent's: the axes stay for reading, counted nowhere.
        return CaseScore(
            case_id=scenario.id, category=category, axes=verdicts, e2e=False,
            not_exercised=skipped,
        )  # fmt: skip
    score = CaseScore(
        case_id=scenario.id,
        category=category,
        axes=verdicts,
        e2e=not failed,
        root_cause=root_cause(view, failed) if failed else None,
    )
    score.gate_breaks = gate_breaks(view, score)
    return score


def not_exercised(view: CaseView, failed: list[str]) -> str | None:
    """Why the case did not play as written, or (when it failed) could not be won; None
    when it played and could be won."""
    failure = not_played(view.result)
    if failure is not None:  # the caller vanished or never spoke: the case never played
        return failure
    reasons = unplayed_events(view.scenario, view.result)
    if reasons and not (failed and agent_at_fault(view.result, view.tools)):
        return "; ".join(reasons)
    return unwinnable(view) if failed else None


def gold_replay(view: CaseView) -> dict[str, dict[str, Any]]:
    """The action's collection after the wanted call alone, on a fresh backend, no faults."""
    stub = view.stub(view.action_tool)
    if stub is None:
        return {}
    backend = Backend(view.initial)
    if view.should_execute:
        clean = {name: spec.model_copy(update={"faults": []}) for name, spec in view.tools.items()}
        runtime = ToolSet(clean).open(backend, seed_parts=("gold", view.scenario.id))
        call = PrepareToolCall(call_id="gold", tool=view.action_tool, args=view.wanted)
        runtime.prepare(call, 0.0)
        runtime.send("gold", 0.0)
        runtime.advance(float("inf"))
    return _collection(backend, stub)


def _collection(backend: Backend, stub: StatefulStub) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    for key in backend.keys(stub.collection):
        record = backend.get(stub.collection, key)
        if record is not None:
            records[key] = record
    return records


class RunSummary:
    """Totals over a run's cases, built one case at a time (small, whatever the run's size)."""

    def __init__(self) -> None:
        self.total = 0
        self.skipped: list[dict[str, str]] = []
        self.passed: Counter[str] = Counter()
        self.e2e = 0
        self.causes: dict[str, list[str]] = {}
        self.breaks: dict[str, list[str]] = {}

    def add(self, score: CaseScore) -> None:
        """Count one case (a case not exercised is listed apart, with its reason)."""
        if score.not_exercised is not None:
            self.skipped.append({"case": score.case_id, "reason": score.not_exercised})
            return
        self.total += 1
        self.passed.update(name for name in AXES if score.passed(name))
        self.e2e += score.e2e
        if score.root_cause is not None:
            self.causes.setdefault(score.root_cause.cause, []).append(score.case_id)
        self.breaks[score.case_id] = list(score.gate_breaks)

    @property
    def seen(self) -> int:
        """Every case added, exercised or not (`total` counts the exercised ones)."""
        return self.total + len(self.skipped)

    def axes(self) -> dict[str, dict[str, int]]:
        """Per axis: passed and total."""
        return {name: {"passed": self.passed[name], "total": self.total} for name in AXES}

    def fix_list(self) -> list[dict[str, Any]]:
        """Failed cases grouped by root cause, the largest group first."""
        order = list(LAYERS)
        rows = [
            {"cause": cause, "count": len(cases), "layer": _layer(cause), "cases": cases}
            for cause, cases in self.causes.items()
        ]
        return sorted(rows, key=lambda r: (-r["count"], order.index(r["cause"])))

    def gate(self) -> dict[str, Any]:
        """The release gate over every case."""
        return run_gate(self.breaks, exercised=self.total)

    def as_report(self) -> dict[str, Any]:
        """The keys report.json gets for a three-layer run."""
        return {
            "axes": self.axes(),
            "e2e_integrity": {"passed": self.e2e, "total": self.total},
            "root_causes": self.fix_list(),
            "release_gate": self.gate(),
            "not_exercised": list(self.skipped),
        }


def _layer(cause: str) -> str | None:
    layer = LAYERS.get(cause)
    return layer.value if layer is not None else None


def summarise(scores: Iterable[CaseScore]) -> RunSummary:
    """A summary of the given case scores."""
    summary = RunSummary()
    for score in scores:
        summary.add(score)
    return summary
