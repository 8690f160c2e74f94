"""Adversarial evaluation: do Polygon's verdicts hold on agents they were never tuned on?

    .venv/bin/python bench/adversarial_eval.py [--agents GLOB] [--suites S1,S2] [--json FILE]
                                               [--markdown] [--seed N] [--jobs N]

Every module in bench/adversarial/agents (files starting with `_` are helpers) is an agent
with module constants LABEL ("correct" or "flawed"), FLAW (the root cause its planted flaw
must produce, or a verdict-level flaw: agent_error, loop, do_nothing, phantom_write,
quit_early), MUST_FAIL, SPLIT ("tuning" or "held_out"), DESCRIPTION and SUITES, and a class
`Agent(context)`. Each agent runs on each suite of its SUITES through the public Python API
(the suite loaded as `polygon run` loads it, a SuiteRunner with the default judge, a Store
on a temporary SQLite file), and the script prints:

* the flaw x cause matrix: one row per agent, one column per root cause (and
  `not_exercised`), each cell the number of the agent's failed cases with that cause;
* for every flawed agent, whether its FLAW is its most frequent cause (a verdict-level
  flaw: whether it got `fail` where expected);
* verdict accuracy: correct agents, the share of calls judged `pass` and of cases
  end-to-end; MUST_FAIL agents, the share of suites with at least one `fail` and the share
  of calls `fail`; for every agent the false passes (a call judged `pass` although its
  expected outcome was not reached);
* every target, met or not, for the tuning split, the held-out split and all agents.

`--json FILE` writes the same figures. Progress goes to stderr; the exit code is 0 when
every target is met, 1 otherwise.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import importlib
import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make `bench.adversarial` importable
    sys.path.insert(0, str(ROOT))

from polygon_voice import __version__  # noqa: E402
from polygon_voice.agents import AgentFactory, as_factory  # noqa: E402
from polygon_voice.runner import SuiteRunner  # noqa: E402
from polygon_voice.scenario import LoadedSuite, load_suite  # noqa: E402
from polygon_voice.store import RunRecord, Store, new_run_id, resolve_db_url  # noqa: E402
from polygon_voice.suites import builtin_suite_path  # noqa: E402

AGENTS_PACKAGE = "bench.adversarial.agents"
AGENTS_DIR = ROOT / "bench" / "adversarial" / "agents"
DEFAULT_SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")
SPLITS = ("tuning", "held_out", "all")
VERDICT_FLAWS = ("agent_error", "loop", "do_nothing", "phantom_write", "quit_early")
# The end reason a verdict-level flaw must also show in at least one call of every suite.
FLAW_END_REASON = {"agent_error": "error", "loop": "loop_detected"}
NOT_EXERCISED = "not_exercised"
# Matrix columns in the order of the published fix list, then the newer causes.
KNOWN_CAUSES = (
    "stale_tool_args",
    "unchecked_tool_result",
    "inflight_call_not_cancelled",
    "noise_taken_as_interruption",
    "unsafe_retry_after_backend_error",
    "confirmed_before_result",
    "missing_idempotency_key",
    "wrong_field_or_record",
    "success_claimed_without_write",
    "request_dropped",
    "unclassified",
)


# --- the agents ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentModule:
    """One agent of the set: its module's constants."""

    name: str
    label: str
    flaw: str | None
    must_fail: bool
    split: str
    description: str
    suites: tuple[str, ...]

    @property
    def module(self) -> str:
        return f"{AGENTS_PACKAGE}.{self.name}"


def discover(pattern: str = "*", errors: list[str] | None = None) -> list[AgentModule]:
    """Every agent module whose name matches the glob, sorted by name.

    A module that does not import is reported in `errors` (and left out) when a list is
    given; without one its exception propagates."""
    found = []
    for path in sorted(AGENTS_DIR.glob("*.py")):
        if path.name.startswith("_") or not fnmatch.fnmatch(path.stem, pattern):
            continue
        try:
            module = importlib.import_module(f"{AGENTS_PACKAGE}.{path.stem}")
        except Exception as exc:
            if errors is None:
                raise
            errors.append(f"{path.name}: {type(exc).__name__}: {exc}")
            continue
        if not hasattr(module, "LABEL") or not hasattr(module, "Agent"):
            continue
        found.append(
            AgentModule(
                name=path.stem,
                label=str(module.LABEL),
                flaw=getattr(module, "FLAW", None),
                must_fail=bool(getattr(module, "MUST_FAIL", False)),
                split=str(getattr(module, "SPLIT", "tuning")),
                description=str(getattr(module, "DESCRIPTION", "")),
                suites=tuple(getattr(module, "SUITES", DEFAULT_SUITES)),
            )
        )
    return found


def agent_factory(agent: AgentModule) -> AgentFactory:
    module = importlib.import_module(agent.module)
    return as_factory(module.Agent, agent.name)


# --- one agent on one suite ---------------------------------------------------------------


@dataclass
class CallOutcome:
    """What the run made of one call."""

    conversation_id: str
    scenario_id: str
    end_reason: str
    verdict: str | None
    composite: float | None = None
    gates_failed: list[str] = field(default_factory=list)
    case: bool = False
    e2e: bool | None = None
    cause: str | None = None  # a failed case's root cause, or "not_exercised"
    not_exercised: str | None = None
    expect_met: bool | None = None
    expect_not_exercised: str | None = None

    @property
    def false_pass(self) -> bool:
        """Judged pass although the expected outcome was not reached (and the scenario did
        play, so the agent had its chance)."""
        unplayed = self.not_exercised or self.expect_not_exercised
        return self.verdict == "pass" and self.expect_met is False and not unplayed

    @property
    def unmet_pass(self) -> bool:
        """Judged pass although the expected outcome was not reached, played or not."""
        return self.verdict == "pass" and self.expect_met is False


@dataclass
class SuiteOutcome:
    """One agent's run of one suite."""

    agent: str
    suite: str
    calls: list[CallOutcome]
    seconds: float

    @property
    def verdicts(self) -> Counter[str]:
        return Counter(c.verdict or "none" for c in self.calls)


@functools.cache
def load_named_suite(name: str) -> LoadedSuite:
    """A built-in suite by name, else a file relative to the project root.

    Kept per process: loading and validating a suite costs more than running its calls, and
    every agent runs the same few suites; a run never changes the loaded suite."""
    path = builtin_suite_path(name) or ROOT / name
    return load_suite(path)


def run_suite(agent: AgentModule, suite_name: str, seed: int = 0) -> SuiteOutcome:
    """Run every call of the suite against the agent; read back what each stage stored."""
    loaded = load_named_suite(suite_name)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="polygon-adversarial-") as tmp:
        store = Store(resolve_db_url(str(Path(tmp) / "polygon.db")))
        try:
            run_id = new_run_id()
            store.create_run(_run_record(run_id, loaded, agent, seed))
            SuiteRunner(
                suite=loaded.suite,
                agent_factory=agent_factory(agent),
                store=store,
                run_id=run_id,
                seed=seed,
                concurrency=8,
            ).run()
            store.finish_run(run_id, "finished", datetime.now(UTC))
            calls = _read_outcomes(store, run_id)
        finally:
            store.close()
    return SuiteOutcome(agent.name, suite_name, calls, time.perf_counter() - start)


def _run_record(run_id: str, loaded: LoadedSuite, agent: AgentModule, seed: int) -> RunRecord:
    return RunRecord(
        id=run_id,
        suite=loaded.suite.name,
        suite_path=str(loaded.path),
        suite_hash=loaded.hash,
        agent=agent.module,
        seed=seed,
        status="running",
        started_at=datetime.now(UTC),
        config={"agent_spec": agent.module, "adversarial": True},
        polygon_version=__version__,
    )


def _read_outcomes(store: Store, run_id: str) -> list[CallOutcome]:
    judged = dict(store.iter_stage_results(run_id, "judge"))
    checked = dict(store.iter_stage_results(run_id, "checks"))
    expected = dict(store.iter_stage_results(run_id, "expect"))
    outcomes = []
    for summary in store.iter_summaries(run_id):
        judgement = judged.get(summary.id)
        outcome = CallOutcome(
            conversation_id=summary.id,
            scenario_id=summary.scenario_id,
            end_reason=summary.end_reason,
            verdict=None if judgement is None else str(judgement.get("verdict")),
            composite=None if judgement is None else judgement.get("composite"),
            gates_failed=[] if judgement is None else list(judgement.get("gates_failed", [])),
        )
        if summary.id in expected:
            outcome.expect_met = bool(expected[summary.id].get("met"))
            outcome.expect_not_exercised = expected[summary.id].get("not_exercised")
        case = checked.get(summary.id)
        if case is not None:
            _add_case(outcome, case)
        outcomes.append(outcome)
    return outcomes


def _add_case(outcome: CallOutcome, case: dict[str, Any]) -> None:
    outcome.case = True
    outcome.not_exercised = case.get("not_exercised")
    if outcome.not_exercised:
        outcome.e2e = False
        outcome.cause = NOT_EXERCISED
        return
    outcome.e2e = bool(case.get("e2e"))
    if not outcome.e2e:
        root = case.get("root_cause") or {}
        outcome.cause = str(root.get("cause") or "unclassified")


# --- the figures --------------------------------------------------------------------------


@dataclass
class AgentFigures:
    """One agent's figures over all its suites."""

    agent: str
    label: str
    flaw: str | None
    must_fail: bool
    split: str
    description: str
    suites: list[str]
    calls: int
    verdicts: dict[str, int]
    end_reasons: dict[str, int]
    cases: int
    cases_e2e: int
    expectations: int  # calls whose scenario states an expected outcome (or is a case)
    expectations_met: int
    false_passes: int  # judged pass, expected outcome not reached, the scenario played
    unmet_passes: int  # judged pass, expected outcome not reached (played or not)
    causes: dict[str, int]  # failed cases by root cause (and not_exercised)
    suites_with_fail: list[str]
    failures: list[str]  # "suite/scenario: verdict, cause" of what went wrong, for reading
    calls_by_suite: dict[str, list[dict[str, Any]]]  # every call's outcome, for the JSON
    targets: dict[str, bool]

    @property
    def mean_composite(self) -> float | None:
        scored = [
            c["composite"]
            for calls in self.calls_by_suite.values()
            for c in calls
            if c["composite"] is not None
        ]
        return sum(scored) / len(scored) if scored else None

    @property
    def pass_share(self) -> float:
        return self.verdicts.get("pass", 0) / self.calls if self.calls else 0.0

    @property
    def fail_share(self) -> float:
        return self.verdicts.get("fail", 0) / self.calls if self.calls else 0.0

    @property
    def e2e_share(self) -> float:
        return self.cases_e2e / self.cases if self.cases else 1.0

    @property
    def top_causes(self) -> list[str]:
        """The most frequent real causes (not_exercised is not a cause)."""
        counted = {c: n for c, n in self.causes.items() if c != NOT_EXERCISED and n}
        if not counted:
            return []
        most = max(counted.values())
        return sorted(c for c, n in counted.items() if n == most)


def figures_for(agent: AgentModule, outcomes: Sequence[SuiteOutcome]) -> AgentFigures:
    """Count one agent's outcomes and decide its targets."""
    calls = [c for o in outcomes for c in o.calls]
    causes = Counter(c.cause for c in calls if c.cause is not None)
    figures = AgentFigures(
        agent=agent.name,
        label=agent.label,
        flaw=agent.flaw,
        must_fail=agent.must_fail,
        split=agent.split,
        description=agent.description,
        suites=[o.suite for o in outcomes],
        calls=len(calls),
        verdicts=dict(Counter(c.verdict or "none" for c in calls)),
        end_reasons=dict(Counter(c.end_reason for c in calls)),
        cases=sum(c.case for c in calls),
        cases_e2e=sum(bool(c.e2e) for c in calls),
        expectations=sum(c.expect_met is not None for c in calls),
        expectations_met=sum(bool(c.expect_met) for c in calls),
        false_passes=sum(c.false_pass for c in calls),
        unmet_passes=sum(c.unmet_pass for c in calls),
        causes=dict(causes),
        suites_with_fail=[o.suite for o in outcomes if any(c.verdict == "fail" for c in o.calls)],
        failures=[_failure_line(o.suite, c) for o in outcomes for c in o.calls if _went_wrong(c)],
        calls_by_suite={o.suite: [asdict(c) for c in o.calls] for o in outcomes},
        targets={},
    )
    figures.targets = targets_for(agent, figures, outcomes)
    return figures


def _went_wrong(call: CallOutcome) -> bool:
    return call.verdict != "pass" or call.cause is not None or call.expect_met is False


def _failure_line(suite: str, call: CallOutcome) -> str:
    parts = [f"verdict {call.verdict}", f"end {call.end_reason}"]
    if call.cause is not None:
        parts.append(f"cause {call.cause}")
    if call.not_exercised:
        parts.append(f"not exercised: {call.not_exercised}")
    if call.gates_failed:
        parts.append("gates " + ",".join(call.gates_failed))
    if call.expect_met is False:
        parts.append("expect not met")
    return f"{suite} / {call.scenario_id}: " + "; ".join(parts)


def targets_for(
    agent: AgentModule, figures: AgentFigures, outcomes: Sequence[SuiteOutcome]
) -> dict[str, bool]:
    """The targets that apply to this agent, each met or not."""
    targets: dict[str, bool] = {}
    if agent.label == "correct":
        targets["every call pass"] = figures.verdicts.get("pass", 0) == figures.calls
        targets["every case end-to-end"] = figures.cases_e2e == figures.cases
    elif agent.flaw in VERDICT_FLAWS:
        targets[f"{agent.flaw}: fail on every suite"] = _fails_everywhere(agent.flaw, outcomes)
    elif agent.flaw is not None:
        top = figures.top_causes
        targets[f"{agent.flaw} is the most frequent cause"] = top == [agent.flaw]
    if agent.must_fail:
        targets["must fail: fail on every suite"] = len(figures.suites_with_fail) == len(outcomes)
        # An agent that does nothing useful must not pass a call it did not do, even where
        # its inaction kept the script from playing (a barge-in waiting for its call).
        targets["must fail: no pass without the expected outcome"] = figures.unmet_passes == 0
    targets["no false pass"] = figures.false_passes == 0
    return targets


def _fails_everywhere(flaw: str, outcomes: Sequence[SuiteOutcome]) -> bool:
    end = FLAW_END_REASON.get(flaw)
    for outcome in outcomes:
        failed = [c for c in outcome.calls if c.verdict == "fail"]
        if not failed or (end is not None and not any(c.end_reason == end for c in failed)):
            return False
    return bool(outcomes)


@dataclass
class SplitSummary:
    """Targets and accuracy of one split."""

    split: str
    agents: int
    targets_met: int
    targets_total: int
    correct_pass_share: float | None
    correct_e2e_share: float | None
    must_fail_suite_share: float | None
    must_fail_call_share: float | None
    flaws_top_cause: str  # "met/total" over flawed agents
    unmet: list[str]


def summarise(split: str, figures: Sequence[AgentFigures]) -> SplitSummary:
    chosen = [f for f in figures if split == "all" or f.split == split]
    correct = [f for f in chosen if f.label == "correct"]
    must_fail = [f for f in chosen if f.must_fail]
    flawed = [f for f in chosen if f.label == "flawed"]
    flawed_met = sum(all(f.targets.values()) for f in flawed)
    unmet = [f"{f.agent}: {name}" for f in chosen for name, ok in f.targets.items() if not ok]
    return SplitSummary(
        split=split,
        agents=len(chosen),
        targets_met=sum(ok for f in chosen for ok in f.targets.values()),
        targets_total=sum(len(f.targets) for f in chosen),
        correct_pass_share=_share(sum(f.verdicts.get("pass", 0) for f in correct), correct),
        correct_e2e_share=_ratio(sum(f.cases_e2e for f in correct), sum(f.cases for f in correct)),
        must_fail_suite_share=_ratio(
            sum(len(f.suites_with_fail) for f in must_fail), sum(len(f.suites) for f in must_fail)
        ),
        must_fail_call_share=_share(sum(f.verdicts.get("fail", 0) for f in must_fail), must_fail),
        flaws_top_cause=f"{flawed_met}/{len(flawed)}",
        unmet=unmet,
    )


@dataclass
class CauseAccuracy:
    """How well one root cause names its planted flaw, over the agents that plant a cause."""

    cause: str
    planted: int  # agents whose FLAW is this cause
    labelled: int  # failed cases given this cause, by any agent
    true_positives: int  # ... by an agent that planted it
    missed: int  # failed cases of those agents given another cause

    @property
    def precision(self) -> float | None:
        return _ratio(self.true_positives, self.labelled)

    @property
    def recall(self) -> float | None:
        return _ratio(self.true_positives, self.true_positives + self.missed)


def cause_accuracy(figures: Sequence[AgentFigures]) -> list[CauseAccuracy]:
    """Precision and recall of each cause: a case counts for the cause its agent planted.

    Only agents that plant a cause (and correct agents, whose every failed case is a false
    label) take part; a flawed agent's other failures may be real side effects of its
    flaw, so the figures are lower bounds."""
    judged = [f for f in figures if f.label == "correct" or f.flaw in KNOWN_CAUSES]
    rows = []
    for cause in KNOWN_CAUSES:
        planting = [f for f in judged if f.flaw == cause]
        if not planting and not any(f.causes.get(cause) for f in judged):
            continue
        hits = sum(f.causes.get(cause, 0) for f in planting)
        others = sum(
            n for f in planting for c, n in f.causes.items() if c not in (cause, NOT_EXERCISED)
        )
        rows.append(
            CauseAccuracy(
                cause=cause,
                planted=len(planting),
                labelled=sum(f.causes.get(cause, 0) for f in judged),
                true_positives=hits,
                missed=others,
            )
        )
    return rows


def render_accuracy(rows: Sequence[CauseAccuracy]) -> str:
    header = ["cause", "agents", "labelled", "right", "missed", "precision", "recall"]
    return _table(
        header,
        [
            [
                r.cause,
                str(r.planted),
                str(r.labelled),
                str(r.true_positives),
                str(r.missed),
                _pct(r.precision),
                _pct(r.recall),
            ]
            for r in rows
        ],
    )


def _share(count: int, figures: Sequence[AgentFigures]) -> float | None:
    return _ratio(count, sum(f.calls for f in figures))


def _ratio(count: int, total: int) -> float | None:
    return count / total if total else None


# --- running everything -------------------------------------------------------------------


def _run_pair(pair: tuple[AgentModule, str, int]) -> SuiteOutcome:
    agent, suite, seed = pair
    return run_suite(agent, suite, seed)


def evaluate(
    agents: Sequence[AgentModule],
    suites: Sequence[str] | None = None,
    *,
    seed: int = 0,
    jobs: int = 1,
    progress: Callable[[SuiteOutcome], None] | None = None,
) -> list[AgentFigures]:
    """Run every agent on its suites (only `suites`, when given) and count the figures."""
    pairs = [(a, s, seed) for a in agents for s in a.suites if suites is None or s in suites]
    outcomes: dict[str, list[SuiteOutcome]] = {a.name: [] for a in agents}
    for outcome in _outcomes(pairs, jobs):
        outcomes[outcome.agent].append(outcome)
        if progress is not None:
            progress(outcome)
    return [figures_for(a, outcomes[a.name]) for a in agents if outcomes[a.name]]


def _outcomes(pairs: list[tuple[AgentModule, str, int]], jobs: int) -> Iterable[SuiteOutcome]:
    if jobs <= 1 or len(pairs) <= 1:
        yield from map(_run_pair, pairs)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_run_pair, pairs)


# --- printing -----------------------------------------------------------------------------


def matrix_columns(figures: Sequence[AgentFigures]) -> list[str]:
    """The known causes, any others the rules produced, then not_exercised."""
    seen = {c for f in figures for c in f.causes}
    extra = sorted(seen - set(KNOWN_CAUSES) - {NOT_EXERCISED})
    return [*KNOWN_CAUSES, *extra, NOT_EXERCISED]


def render_matrix(figures: Sequence[AgentFigures]) -> str:
    columns = matrix_columns(figures)
    header = ["agent", "flaw", *[_short(c) for c in columns]]
    rows = [
        [f.agent, f.flaw or "-", *[str(f.causes.get(c, 0) or ".") for c in columns]]
        for f in figures
    ]
    legend = ", ".join(f"{_short(c)}={c}" for c in columns)
    return _table(header, rows) + f"\ncolumns: {legend}"


def _short(cause: str) -> str:
    return "".join(word[0] for word in cause.split("_")).upper()


def render_agents(figures: Sequence[AgentFigures]) -> str:
    header = [
        "agent",
        "label",
        "split",
        "calls",
        "pass",
        "warn",
        "fail",
        "mean composite",
        "cases e2e",
        "expect met",
        "false pass",
        "targets",
    ]
    rows = []
    for f in figures:
        met = sum(f.targets.values())
        rows.append(
            [
                f.agent,
                f.label + (" (must fail)" if f.must_fail else ""),
                f.split,
                str(f.calls),
                str(f.verdicts.get("pass", 0)),
                str(f.verdicts.get("warn", 0)),
                str(f.verdicts.get("fail", 0)),
                "-" if f.mean_composite is None else f"{f.mean_composite:.1f}",
                f"{f.cases_e2e}/{f.cases}",
                f"{f.expectations_met}/{f.expectations}",
                f"{f.false_passes}"
                + (
                    f" (+{f.unmet_passes - f.false_passes} unplayed)"
                    if f.unmet_passes > f.false_passes
                    else ""
                ),
                f"{met}/{len(f.targets)}",
            ]
        )
    return _table(header, rows)


def render_targets(figures: Sequence[AgentFigures]) -> str:
    lines = []
    for f in figures:
        for name, ok in f.targets.items():
            extra = ""
            if f.flaw and "most frequent" in name:
                extra = f" (top: {', '.join(f.top_causes) or 'none'})"
            lines.append(f"  [{'met' if ok else 'NOT MET'}] {f.agent}: {name}{extra}")
    return "\n".join(lines)


def render_summary(summaries: Sequence[SplitSummary]) -> str:
    header = [
        "split",
        "agents",
        "targets met",
        "correct: calls pass",
        "correct: cases e2e",
        "must fail: suites with a fail",
        "must fail: calls fail",
        "flawed: targets met",
    ]
    rows = [_split_row(s) for s in summaries]
    return _table(header, rows)


def _split_row(s: SplitSummary) -> list[str]:
    """One split's figures, as both the text and the markdown tables show them."""
    return [
        s.split,
        str(s.agents),
        f"{s.targets_met}/{s.targets_total}",
        _pct(s.correct_pass_share),
        _pct(s.correct_e2e_share),
        _pct(s.must_fail_suite_share),
        _pct(s.must_fail_call_share),
        s.flaws_top_cause,
    ]


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f} %"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    rule = "  ".join("-" * w for w in widths)
    head = "  ".join(cell.ljust(w) for cell, w in zip(header, widths, strict=True))
    return "\n".join([head, rule, *lines])


def report(figures: Sequence[AgentFigures]) -> tuple[str, list[SplitSummary]]:
    summaries = [summarise(split, figures) for split in SPLITS]
    parts = [
        "Flaw x cause matrix (failed cases by root cause):",
        render_matrix(figures),
        "",
        "Verdicts per agent:",
        render_agents(figures),
        "",
        "Targets:",
        render_targets(figures),
        "",
        "Per split:",
        render_summary(summaries),
        "",
        "Root causes against the planted flaws (all agents; held-out only in --json):",
        render_accuracy(cause_accuracy(figures)),
    ]
    wrong = [f"{f.agent}: {line}" for f in figures if f.label == "correct" for line in f.failures]
    if wrong:
        title = "Correct agents: calls not judged pass, or cases not end-to-end:"
        parts += ["", title, *[f"  {w}" for w in wrong]]
    return "\n".join(parts), summaries


def render_markdown(figures: Sequence[AgentFigures], summaries: Sequence[SplitSummary]) -> str:
    """The agent list, the matrix and the split summary as Markdown tables (for the docs)."""
    agents = _md(
        ["agent", "split", "flaw (expected cause)", "must fail", "what it does"],
        [
            [
                f"`{f.agent}`",
                f.split,
                f"`{f.flaw}`" if f.flaw else "-",
                "yes" if f.must_fail else "",
                f.description,
            ]
            for f in figures
        ],
    )
    columns = [c for c in matrix_columns(figures) if any(f.causes.get(c) for f in figures)]
    matrix = _md(
        ["agent", "flaw", *[_short(c) for c in columns], "calls pass/warn/fail", "targets"],
        [
            [
                f.agent,
                f.flaw or "-",
                *[str(f.causes.get(c, 0) or "") for c in columns],
                "/".join(str(f.verdicts.get(v, 0)) for v in ("pass", "warn", "fail")),
                f"{sum(f.targets.values())}/{len(f.targets)}",
            ]
            for f in figures
        ],
    )
    splits = _md(
        [
            "split",
            "agents",
            "targets met",
            "correct: calls pass",
            "correct: cases e2e",
            "must fail: suites with a fail",
            "must fail: calls fail",
            "flawed: all targets met",
        ],
        [_split_row(s) for s in summaries],
    )
    legend = "Columns: " + ", ".join(f"{_short(c)} `{c}`" for c in columns) + "."
    accuracy = _md(
        ["cause", "agents planting it", "cases labelled", "right", "missed", "precision", "recall"],
        [
            [
                f"`{r.cause}`",
                str(r.planted),
                str(r.labelled),
                str(r.true_positives),
                str(r.missed),
                _pct(r.precision),
                _pct(r.recall),
            ]
            for r in cause_accuracy(figures)
        ],
    )
    return "\n\n".join([agents, matrix, legend, splits, accuracy])


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def to_json(figures: Sequence[AgentFigures], summaries: Sequence[SplitSummary]) -> dict[str, Any]:
    return {
        "polygon_version": __version__,
        "columns": matrix_columns(figures),
        "agents": [
            {
                **asdict(f),
                "pass_share": f.pass_share,
                "mean_composite": f.mean_composite,
                "fail_share": f.fail_share,
                "top_causes": f.top_causes,
            }
            for f in figures
        ],
        "splits": [asdict(s) for s in summaries],
        "cause_accuracy": {
            split: [
                {**asdict(r), "precision": r.precision, "recall": r.recall}
                for r in cause_accuracy([f for f in figures if split == "all" or f.split == split])
            ]
            for split in SPLITS
        },
        "all_targets_met": all(ok for f in figures for ok in f.targets.values()),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="*", help="glob over agent module names")
    parser.add_argument(
        "--suites", default=None, help="comma-separated suites (default: each agent's SUITES)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the figures to FILE")
    parser.add_argument("--markdown", action="store_true", help="print Markdown tables instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    args = parser.parse_args(argv)
    broken: list[str] = []
    agents = discover(args.agents, broken)
    for line in broken:
        print(f"cannot import agent {line}", file=sys.stderr)
    if not agents:
        print(f"no agent matches {args.agents!r}", file=sys.stderr)
        return 2
    suites = (
        None if args.suites is None else [s.strip() for s in args.suites.split(",") if s.strip()]
    )
    start = time.perf_counter()

    def progress(outcome: SuiteOutcome) -> None:
        counts = ", ".join(f"{v} {n}" for v, n in sorted(outcome.verdicts.items()))
        print(
            f"{outcome.agent} on {outcome.suite}: {counts} ({outcome.seconds:.1f} s)",
            file=sys.stderr,
        )

    figures = evaluate(agents, suites, seed=args.seed, jobs=args.jobs, progress=progress)
    text, summaries = report(figures)
    print(render_markdown(figures, summaries) if args.markdown else text)
    print(f"\n{len(figures)} agents in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    data = to_json(figures, summaries)
    if args.json is not None:
        args.json.write_text(
            json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0 if data["all_targets_met"] and not broken else 1


if __name__ == "__main__":
    raise SystemExit(main())
