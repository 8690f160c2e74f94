"""Running suites for tests: one scenario per test, played in as few stored runs as can be.

A test per scenario (`polygon_scenarios`, or the `polygon` marker) names a `ScenarioCase`.
Cases of the same suite, agent and options form a group. Without pytest-xdist the process
knows, once collection is done, every case it will run, so the first test of a group plays the
group's selected scenarios as one run and the others read their part of it. A pytest-xdist
worker does not know which tests it will be sent, so there each test plays its own scenario
as a run of its own. Runs are written through the API's store: leases keep two processes off
one run, and each process writes only its own runs.
"""

from __future__ import annotations

import glob
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.pytest_plugin.outcome import PolygonResult

if TYPE_CHECKING:
    from polygon_voice import Scenario, Suite
    from polygon_voice.api import FailOn, RunResult

# Options a test may give that are not RunOptions fields.
PLUGIN_OPTIONS = ("fail_on",)


class PolygonUsageError(Exception):
    """A suite, scenario or option a test gave that cannot run; shown without a traceback."""


@dataclass(frozen=True)
class ScenarioCase:
    """One scenario of a suite to run against an agent: the value of one parametrised test."""

    suite: str | Path | Suite
    scenario: str  # its id
    agent: str | Callable[..., Any] | None = None
    options: tuple[tuple[str, Any], ...] = ()
    fail_on: FailOn = "warn"
    suite_key: str = ""  # what tells suites apart (a path, a name, a content hash)

    @property
    def group(self) -> tuple[object, ...]:
        """Cases played together in one run: the same suite, agent and options."""
        return (self.suite_key, _agent_key(self.agent), self.options)

    def __str__(self) -> str:
        return self.scenario


@dataclass(frozen=True)
class BrokenCase:
    """A suite a parametrisation could not load: its test fails with this message."""

    message: str

    def __str__(self) -> str:
        return "polygon-suite-error"


def prepared_suite(
    suite: str | Path | Suite | None,
    scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str = (),
) -> tuple[str | Path | Suite, tuple[str, ...]]:
    """The suite to run and the glob patterns that select from it.

    `scenarios` holds glob patterns on the suite's scenario ids, scenarios built in the test
    (mappings as in a suite file, or `Scenario` objects), or both: built ones are played with
    the suite's tools and backend, together with the ids the patterns select."""
    from polygon_voice.api import build_suite, load_suite, select_scenarios

    items = [scenarios] if isinstance(scenarios, str) else list(scenarios)
    patterns = tuple(s for s in items if isinstance(s, str))
    built = [s for s in items if not isinstance(s, str)]
    if not built:
        if suite is None:
            raise PolygonUsageError("name a suite, or give scenarios built in the test")
        return suite, patterns
    kept = []
    if suite is not None and patterns:
        kept = list(select_scenarios(load_suite(suite), patterns).suite.scenarios)
    return build_suite([*kept, *built], suite), ()


def polygon_scenarios(
    suite: str | Path | Suite | None = None,
    *,
    agent: str | Callable[..., Any] | None = None,
    scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str = (),
    fail_on: FailOn = "warn",
    **options: Any,
) -> list[Any]:
    """One `pytest.param` per scenario of `suite` (ids: the scenario ids), for
    `@pytest.mark.parametrize("polygon_scenario", polygon_scenarios(...))`; the test's
    `polygon_result` fixture is then that scenario's result. `scenarios` selects (globs) or
    adds (scenarios built in the test); `options` are `RunOptions` fields. A suite that cannot
    be loaded gives one test that fails with the reason."""
    import pytest

    from polygon_voice.api import PolygonError, load_suite, select_scenarios

    try:
        _check_options(options, fail_on)
        source, patterns = prepared_suite(suite, scenarios)
        loaded = select_scenarios(load_suite(source), patterns)
    except (PolygonError, PolygonUsageError) as exc:
        return [pytest.param(BrokenCase(str(exc)), id="polygon-suite-error")]
    key = _suite_key(source, loaded.hash)
    frozen = tuple(sorted((name, _frozen(value)) for name, value in options.items()))
    return [
        pytest.param(
            ScenarioCase(source, s.id, agent, frozen, fail_on, key),
            id=s.id,
        )
        for s in loaded.suite.scenarios
    ]


@dataclass
class PolygonSession:
    """The runs of one pytest process: where they are stored and the groups played so far."""

    db: str | None = None
    agent_override: str | None = None
    seed: int | None = None
    batch: bool = True  # False in a pytest-xdist worker
    planned: dict[tuple[object, ...], list[str]] = field(default_factory=dict)
    played: dict[tuple[object, ...], list[RunResult]] = field(default_factory=dict)
    run_ids: list[str] = field(default_factory=list)

    def plan(self, cases: Iterable[ScenarioCase]) -> None:
        """The cases this process will run, known once collection is done."""
        if not self.batch:
            return
        for case in cases:
            ids = self.planned.setdefault(case.group, [])
            if case.scenario not in ids:
                ids.append(case.scenario)

    def run(
        self,
        suite: str | Path | Suite | None,
        *,
        agent: str | Callable[..., Any] | None = None,
        scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str = (),
        fail_on: FailOn = "warn",
        **options: Any,
    ) -> PolygonResult:
        """Play `suite` (its scenarios selected or added by `scenarios`) as one stored run."""
        _check_options(options, fail_on)
        source, patterns = prepared_suite(suite, scenarios)
        result = self._play(source, agent, patterns, options)
        return PolygonResult(result, result.suite, fail_on, self.db)

    async def run_async(
        self,
        suite: str | Path | Suite | None,
        *,
        agent: str | Callable[..., Any] | None = None,
        scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str = (),
        fail_on: FailOn = "warn",
        **options: Any,
    ) -> PolygonResult:
        """`run` on the running event loop (for async tests)."""
        from polygon_voice.api import run_suite_async

        _check_options(options, fail_on)
        source, patterns = prepared_suite(suite, scenarios)
        chosen = self._options(agent, patterns, options)
        result = await run_suite_async(source, db=self.db, **chosen)
        self.run_ids.append(result.run_id)
        return PolygonResult(result, result.suite, fail_on, self.db)

    def case_result(self, case: ScenarioCase) -> PolygonResult:
        """The result of one case: its part of its group's run, played on first need."""
        runs = self.played.setdefault(case.group, [])
        played = next((r for r in runs if any(c.scenario == case.scenario for c in r.calls)), None)
        if played is None:
            # The group's planned scenarios at once, unless this one was not planned (a
            # pytest-xdist worker, or a group whose run already went by).
            ids = self.planned.pop(case.group, None) or [case.scenario]
            if case.scenario not in ids:
                ids = [case.scenario]
            patterns = tuple(glob.escape(i) for i in ids)
            played = self._play(case.suite, case.agent, patterns, dict(case.options))
            runs.append(played)
        part = played.only([case.scenario])
        return PolygonResult(part, case.scenario, case.fail_on, self.db)

    def _play(
        self,
        source: str | Path | Suite,
        agent: str | Callable[..., Any] | None,
        patterns: tuple[str, ...],
        options: Mapping[str, Any],
    ) -> RunResult:
        from polygon_voice.api import run_suite

        result = run_suite(source, db=self.db, **self._options(agent, patterns, options))
        self.run_ids.append(result.run_id)
        return result

    def _options(
        self,
        agent: str | Callable[..., Any] | None,
        patterns: Sequence[str],
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        chosen: dict[str, Any] = {"write_files": False, **options}
        if self.seed is not None:
            chosen["seed"] = self.seed
        chosen["agent"] = self.agent_override or agent
        if patterns:
            chosen["scenarios"] = tuple(patterns)
        return chosen


def _check_options(options: Mapping[str, Any], fail_on: str) -> None:
    from polygon_voice.api import RunOptions

    known = set(RunOptions.__dataclass_fields__) - {"agent", "scenarios"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise PolygonUsageError(
            f"unknown polygon option {unknown[0]!r}; known: "
            f"{', '.join(sorted([*known, 'agent', 'scenarios', *PLUGIN_OPTIONS]))}"
        )
    if fail_on not in ("warn", "fail"):
        raise PolygonUsageError(f"fail_on is 'warn' or 'fail', not {fail_on!r}")


def _suite_key(source: str | Path | Suite, digest: str) -> str:
    # A file or built-in name is its own key; a suite built in code is known by its content.
    return digest if not isinstance(source, str | Path) else f"{source}|{digest}"


def _agent_key(agent: object) -> object:
    try:
        hash(agent)
    except TypeError:
        return id(agent)
    return agent


def _frozen(value: Any) -> Any:
    """A hashable form of an option's value (a list of patterns becomes a tuple)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value
