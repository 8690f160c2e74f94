"""Ablations: which factor a run's failures depend on.

The failing calls of a stored run are played again — same suite version, agent, judge,
seed and trials, so every call keeps its conversation id and its seed — once per factor,
with only that factor removed:

| factor | removed how |
|---|---|
| `noise` | recognition noise 0 for every call |
| `persona` | every caller's persona cooperative, difficulty 1 (its own cut-ins go with it) |
| `tool_faults` | every fault of every tool and scenario removed |
| `latency` | every tool answers at once (latency 0, fault latencies too) |
| `barge_ins` | the scripts' `barge_in` steps removed (with words or without) |

A call is *rescued* by a factor when, with that factor removed, it no longer fails (its
verdict is pass or warn). A failure rescued by one factor depends on it; one no factor
rescues fails for a reason the factors do not touch (the agent's own logic, the caller's
words). Each rerun is stored as a run whose config names the original (`ablation_of`) and
the factor (`ablation_factor`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.errors import InputError
from polygon_voice.experiments.profile import changed_suite

if TYPE_CHECKING:
    from polygon_voice.api.events import RunObserver
    from polygon_voice.model import Scenario, Suite, ToolSpec
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.store import RunRecord, Store

FACTORS: dict[str, str] = {
    "noise": "noise off",
    "persona": "persona cooperative, difficulty 1",
    "tool_faults": "tool faults off",
    "latency": "tool latency zero",
    "barge_ins": "barge-ins off",
}
ORIGIN_KEY = "ablation_of"
FACTOR_KEY = "ablation_factor"


@dataclass(frozen=True)
class FactorResult:
    """One factor's rerun: its run and the failing calls it rescued."""

    factor: str
    run_id: str | None
    rescued: tuple[str, ...]
    still_failing: tuple[str, ...]
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As `--json` prints it."""
        return {
            "factor": self.factor,
            "removed": FACTORS[self.factor],
            "run_id": self.run_id,
            "rescued": len(self.rescued),
            "rescued_calls": list(self.rescued),
            "still_failing": list(self.still_failing),
            "error": self.error,
        }


@dataclass
class Ablation:
    """The ablation of one run: its failing calls and what each factor did to them."""

    run_id: str
    failing: tuple[str, ...]
    factors: list[FactorResult] = field(default_factory=list)

    def depends_on(self) -> dict[str, list[str]]:
        """Failing call -> the factors whose removal rescues it (empty: none does)."""
        return {
            call: [f.factor for f in self.factors if call in f.rescued] for call in self.failing
        }

    def to_dict(self) -> dict[str, Any]:
        """As `polygon ablate --json` prints it."""
        return {
            "run_id": self.run_id,
            "failing_calls": list(self.failing),
            "factors": [f.to_dict() for f in self.factors],
            "depends_on": self.depends_on(),
        }


def ablate_run(
    store: Store,
    run_id: str,
    factors: Sequence[str] = tuple(FACTORS),
    *,
    observer: RunObserver | None = None,
    concurrency: int = 8,
    llm_config: Path | None = None,
) -> Ablation:
    """Rerun the failing calls of `run_id` once per factor; InputError for an unknown
    factor or run, or a run whose suite cannot be read again as it was."""
    from polygon_voice.api.collect import read_run
    from polygon_voice.store import StoreError

    unknown = [f for f in factors if f not in FACTORS]
    if unknown:
        raise InputError(f"unknown factor {unknown[0]!r}; the factors: {', '.join(FACTORS)}")
    try:
        record = store.get_run(run_id)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    failing = tuple(c.id for c in read_run(store, record.id).calls if c.fails("fail"))
    ablation = Ablation(record.id, failing)
    if not failing:
        return ablation
    loaded = _suite_of(record)
    scenarios = {c.split("#", 1)[0] for c in failing}
    for factor in dict.fromkeys(factors):
        ablation.factors.append(
            _rerun(
                store, record, loaded, factor, scenarios, failing, observer, concurrency, llm_config
            )
        )
    return ablation


def _rerun(
    store: Store,
    record: RunRecord,
    loaded: LoadedSuite,
    factor: str,
    scenarios: set[str],
    failing: tuple[str, ...],
    observer: RunObserver | None,
    concurrency: int,
    llm_config: Path | None,
) -> FactorResult:
    from polygon_voice.api import RunOptions, run_suite
    from polygon_voice.api.errors import PolygonError

    config = record.config
    noise = 0.0 if factor == "noise" else config.get("noise")
    options = RunOptions(
        agent=record.agent,
        seed=record.seed,
        trials=config.get("trials"),
        noise=None if noise is None else float(noise),
        judge=config.get("judge"),
        rubric=config.get("rubric"),
        judge_repeats=config.get("judge_repeats"),
        scenarios=tuple(sorted(scenarios)),
        concurrency=concurrency,
        llm_config=llm_config,
        write_files=False,
    )
    try:
        rerun = run_suite(ablated_suite(loaded, factor), options, store=store, observer=observer)
    except PolygonError as exc:
        return FactorResult(factor, None, (), failing, str(exc))
    store.update_run_config(rerun.run_id, {ORIGIN_KEY: record.id, FACTOR_KEY: factor})
    verdicts = {c.id: c for c in rerun.calls}
    rescued = tuple(c for c in failing if c in verdicts and not verdicts[c].fails("fail"))
    still = tuple(c for c in failing if c not in rescued)
    return FactorResult(factor, rerun.run_id, rescued, still)


def _suite_of(record: RunRecord) -> LoadedSuite:
    """The run's suite, read again; refused when the file is not the version it ran."""
    from polygon_voice.api.suites import IN_CODE, load_suite

    if record.suite_path == IN_CODE:
        raise InputError(f"run {record.id}'s suite was built in code: there is no file to rerun")
    loaded = load_suite(record.suite_path)
    if loaded.hash != record.suite_hash:
        raise InputError(
            f"run {record.id} was made from another version of {record.suite_path} (hash "
            f"{record.suite_hash}, now {loaded.hash}): its calls cannot be replayed as they were"
        )
    return loaded


def ablated_suite(loaded: LoadedSuite, factor: str) -> LoadedSuite:
    """The suite with one factor removed (noise is removed through the run's option)."""
    suite = loaded.suite
    if factor == "noise":
        settings = suite.settings.model_copy(update={"noise": 0.0})
        scenarios = [s.model_copy(update={"noise": None}) for s in suite.scenarios]
        return changed_suite(
            loaded, suite.model_copy(update={"settings": settings, "scenarios": scenarios})
        )
    if factor == "persona":
        return _each_scenario(loaded, suite, _cooperative)
    if factor == "tool_faults":
        tools = {n: t.model_copy(update={"faults": []}) for n, t in suite.tools.items()}
        scenarios = [s.model_copy(update={"faults": {}}) for s in suite.scenarios]
        return changed_suite(
            loaded, suite.model_copy(update={"tools": tools, "scenarios": scenarios})
        )
    if factor == "latency":
        tools = {n: _instant(t) for n, t in suite.tools.items()}
        scenarios = [
            s.model_copy(
                update={
                    "faults": {
                        n: [f.model_copy(update={"latency": None}) for f in fs]
                        for n, fs in s.faults.items()
                    }
                }
            )
            for s in suite.scenarios
        ]
        return changed_suite(
            loaded, suite.model_copy(update={"tools": tools, "scenarios": scenarios})
        )
    return _each_scenario(loaded, suite, _without_barge_ins)


def _each_scenario(loaded: LoadedSuite, suite: Suite, change: Any) -> LoadedSuite:
    scenarios = [change(s) for s in suite.scenarios]
    return changed_suite(loaded, suite.model_copy(update={"scenarios": scenarios}))


def _cooperative(scenario: Scenario) -> Scenario:
    from polygon_voice.model.persona import PersonaType

    persona = scenario.persona.model_copy(update={"type": PersonaType.COOPERATIVE, "difficulty": 1})
    return scenario.model_copy(update={"persona": persona})


def _without_barge_ins(scenario: Scenario) -> Scenario:
    return scenario.model_copy(
        update={"script": [step for step in scenario.script if step.barge_in is None]}
    )


def _instant(tool: ToolSpec) -> ToolSpec:
    faults = [f.model_copy(update={"latency": None}) for f in tool.faults]
    return tool.model_copy(update={"latency": 0.0, "faults": faults})
