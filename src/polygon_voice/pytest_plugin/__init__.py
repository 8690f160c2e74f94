"""Polygon in pytest (docs/pytest.md): run suites and scenarios against your agent from tests.

Registered through the `pytest11` entry point, and inert unless a test uses it: loading it
imports nothing heavy and opens no database; it adds a `polygon` marker, the fixtures
`polygon`, `polygon_scenario` and `polygon_result`, and the `--polygon-*` options. Runs are
stored like those of `polygon run`, so `polygon runs`, `polygon show` and the web app read them.
Built on the public API only (`polygon_voice.api`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from polygon_voice.pytest_plugin.asserts import assert_axis, assert_no_root_cause, assert_passed
from polygon_voice.pytest_plugin.outcome import Gate, GateCheck, PolygonResult
from polygon_voice.pytest_plugin.runs import (
    BrokenCase,
    PolygonSession,
    PolygonUsageError,
    ScenarioCase,
    polygon_scenarios,
)

if TYPE_CHECKING:
    from polygon_voice import Scenario, Suite
    from polygon_voice.api import FailOn

__all__ = [
    "Gate",
    "GateCheck",
    "Polygon",
    "PolygonResult",
    "ScenarioCase",
    "assert_axis",
    "assert_no_root_cause",
    "assert_passed",
    "polygon_scenarios",
]

MARKER = "polygon"
CASE_FIXTURE = "polygon_scenario"
RUN_PROPERTY = "polygon_run"  # a test's user property (and JUnit property): the run it read
DB_ENV = "POLYGON_DB"

_SESSION = pytest.StashKey[PolygonSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("polygon", "Polygon voice-agent tests (docs/pytest.md)")
    group.addoption(
        "--polygon-db",
        default=None,
        metavar="URL",
        help=f"results database of the runs (a SQLite file or a database URL); default: "
        f"${DB_ENV} or .polygon/polygon.db, as for `polygon run`",
    )
    group.addoption(
        "--polygon-agent",
        default=None,
        metavar="SPEC",
        help="the agent under test for every polygon test, in place of the one each names "
        "(an --agent spec of `polygon run`)",
    )
    group.addoption(
        "--polygon-seed",
        default=None,
        type=int,
        metavar="N",
        help="the run seed of every polygon run (default: each test's own, else 0)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(suite=None, agent=None, scenarios=(), fail_on='warn', **options): run "
        "Polygon scenarios against an agent; with the polygon_result fixture, one test per "
        "scenario (docs/pytest.md)",
    )
    config.stash[_SESSION] = PolygonSession(
        db=config.getoption("polygon_db"),
        agent_override=config.getoption("polygon_agent"),
        seed=config.getoption("polygon_seed"),
        # A pytest-xdist worker is sent its tests one batch at a time: it cannot know them all.
        batch=not hasattr(config, "workerinput"),
    )
    config.pluginmanager.register(_StoredRuns(), "polygon-stored-runs")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `polygon` that reads `polygon_result`: one test per scenario."""
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or CASE_FIXTURE not in metafunc.fixturenames:
        return
    for given in metafunc.definition.iter_markers("parametrize"):
        names = given.args[0] if given.args else given.kwargs.get("argnames", "")
        if CASE_FIXTURE in (names.split(",") if isinstance(names, str) else names):
            return  # parametrised by the test itself
    try:
        params = polygon_scenarios(*marker.args, **marker.kwargs)
    except TypeError as exc:
        params = [pytest.param(BrokenCase(f"@pytest.mark.polygon: {exc}"), id="polygon-error")]
    metafunc.parametrize(CASE_FIXTURE, params)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The scenarios this process will run, so each group plays as one run."""
    cases = []
    for item in session.items:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get(CASE_FIXTURE) if callspec is not None else None
        if isinstance(case, ScenarioCase):
            cases.append(case)
    if cases:
        session.config.stash[_SESSION].plan(cases)


class _StoredRuns:
    """Counts the runs the tests read (pytest-xdist workers' reports arrive here too, with
    their user properties) and names them at the end; silent when no test used Polygon."""

    def __init__(self) -> None:
        self.tests_per_run: dict[str, int] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for name, value in report.user_properties:
            if name == RUN_PROPERTY:
                run = str(value)
                self.tests_per_run[run] = self.tests_per_run.get(run, 0) + 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.tests_per_run:
            return
        shown = ", ".join(
            f"{run} ({n} test{'s' if n != 1 else ''})" for run, n in self.tests_per_run.items()
        )
        terminalreporter.write_sep("-", "polygon")
        terminalreporter.write_line(f"stored runs: {shown}")
        terminalreporter.write_line("read them with: polygon runs; polygon show RUN_ID")


class Polygon:
    """The `polygon` fixture: run suites and scenarios from a test; a test marked
    `@pytest.mark.polygon(...)` gives its defaults."""

    def __init__(
        self, session: PolygonSession, node: pytest.Item, defaults: Mapping[str, Any]
    ) -> None:
        self._session = session
        self._node = node
        self._defaults = dict(defaults)

    def run(
        self,
        suite: str | Path | Suite | None = None,
        *,
        agent: str | Callable[..., Any] | None = None,
        scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str | None = None,
        fail_on: FailOn | None = None,
        **options: Any,
    ) -> PolygonResult:
        """Play `suite` against `agent` as one stored run and return its result. `scenarios`
        selects (glob patterns on scenario ids) or adds (scenarios built in the test, as
        mappings or `Scenario` objects, played with the suite's tools and backend);
        `options` are `RunOptions` fields (`seed`, `judge`, `noise`, ...)."""
        __tracebackhide__ = True
        chosen = self._chosen(suite, agent, scenarios, fail_on, options)
        return self._stored(lambda: self._session.run(**chosen))

    async def run_async(
        self,
        suite: str | Path | Suite | None = None,
        *,
        agent: str | Callable[..., Any] | None = None,
        scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str | None = None,
        fail_on: FailOn | None = None,
        **options: Any,
    ) -> PolygonResult:
        """`run` for an async test (on its running event loop)."""
        __tracebackhide__ = True
        from polygon_voice.api import PolygonError

        chosen = self._chosen(suite, agent, scenarios, fail_on, options)
        try:
            result = await self._session.run_async(**chosen)
        except (PolygonError, PolygonUsageError) as exc:
            message = _message(exc)
        else:
            self._node.user_properties.append((RUN_PROPERTY, result.run_id))
            return result
        # Outside the except block: the message alone, not the exception it came from.
        pytest.fail(message, pytrace=False)

    def run_scenario(
        self,
        scenario: str | Mapping[str, Any] | Scenario,
        *,
        suite: str | Path | Suite | None = None,
        agent: str | Callable[..., Any] | None = None,
        fail_on: FailOn | None = None,
        **options: Any,
    ) -> PolygonResult:
        """Play one scenario — an id of `suite`'s, or one built in the test — and return its
        result."""
        __tracebackhide__ = True
        import glob

        chosen_suite = suite if suite is not None else self._defaults.get("suite")
        pattern = glob.escape(scenario) if isinstance(scenario, str) else scenario
        result = self.run(
            chosen_suite, agent=agent, scenarios=[pattern], fail_on=fail_on, **options
        )
        ident = scenario if isinstance(scenario, str) else _scenario_id(scenario)
        return result.scenario(ident) if ident else result

    def _chosen(
        self,
        suite: str | Path | Suite | None,
        agent: str | Callable[..., Any] | None,
        scenarios: Iterable[str | Mapping[str, Any] | Scenario] | str | None,
        fail_on: FailOn | None,
        options: Mapping[str, Any],
    ) -> dict[str, Any]:
        given = {"suite": suite, "agent": agent, "scenarios": scenarios, "fail_on": fail_on}
        chosen = {**self._defaults, **{k: v for k, v in given.items() if v is not None}}
        chosen.update(options)
        chosen.setdefault("suite", None)
        return chosen

    def _stored(self, play: Callable[[], PolygonResult]) -> PolygonResult:
        __tracebackhide__ = True
        from polygon_voice.api import PolygonError

        try:
            result = play()
        except (PolygonError, PolygonUsageError) as exc:
            message = _message(exc)
        else:
            self._node.user_properties.append((RUN_PROPERTY, result.run_id))
            return result
        pytest.fail(message, pytrace=False)


def _message(exc: Exception) -> str:
    """What a test that could not run says; Ctrl-C during a run stops the whole session, as it
    would without Polygon (the run is stored as interrupted and can be resumed)."""
    from polygon_voice.api import RunInterrupted

    if isinstance(exc, RunInterrupted):
        raise KeyboardInterrupt(str(exc)) from None
    return str(exc)


def _scenario_id(scenario: Mapping[str, Any] | Scenario) -> str | None:
    ident = scenario.get("id") if isinstance(scenario, Mapping) else getattr(scenario, "id", None)
    return ident if isinstance(ident, str) else None


@pytest.fixture
def polygon(request: pytest.FixtureRequest) -> Polygon:
    """Run Polygon suites and scenarios from a test (docs/pytest.md)."""
    marker = request.node.get_closest_marker(MARKER)
    defaults: dict[str, Any] = {}
    if marker is not None:
        defaults = dict(marker.kwargs)
        if marker.args:
            defaults["suite"] = marker.args[0]
    return Polygon(request.config.stash[_SESSION], request.node, defaults)


@pytest.fixture
def polygon_scenario() -> ScenarioCase:
    """The scenario of this test: given by `@pytest.mark.polygon(...)` or by
    `@pytest.mark.parametrize("polygon_scenario", polygon_scenarios(...))`."""
    pytest.fail(
        "polygon_result needs a scenario: mark the test @pytest.mark.polygon(suite=..., "
        "agent=...) or parametrize polygon_scenario with polygon_scenarios(...)",
        pytrace=False,
    )


@pytest.fixture
def polygon_result(polygon_scenario: object, request: pytest.FixtureRequest) -> PolygonResult:
    """The result of this test's scenario, played against its agent (docs/pytest.md)."""
    from polygon_voice.api import PolygonError

    if isinstance(polygon_scenario, BrokenCase):
        pytest.fail(polygon_scenario.message, pytrace=False)
    if not isinstance(polygon_scenario, ScenarioCase):
        pytest.fail(
            f"polygon_scenario is {polygon_scenario!r}: parametrize it with polygon_scenarios(...)",
            pytrace=False,
        )
    try:
        result = request.config.stash[_SESSION].case_result(polygon_scenario)
    except (PolygonError, PolygonUsageError) as exc:
        message = _message(exc)
    else:
        request.node.user_properties.append((RUN_PROPERTY, result.run_id))
        return result
    pytest.fail(message, pytrace=False)
