"""docs/pytest.md: its examples run as written (against the reference agent in place of the
user's, through --polygon-agent), and every name, fixture and option of the plugin is in it."""

from __future__ import annotations

import re

import pytest

import polygon_voice.pytest_plugin as plugin
from tests.cli.conftest import ROOT
from tests.pytest_plugin.test_plugin import PLUGIN

DOC = ROOT / "docs" / "pytest.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_first_example_is_short_and_runs_as_written(pytester: pytest.Pytester) -> None:
    first = python_blocks()[0]
    assert len(first.strip().splitlines()) < 20
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_calls=first)
    result = pytester.runpytest(
        *PLUGIN, "-p", "no:cacheprovider", "--polygon-agent", "reference:robust"
    )
    # As the page says: 31 tests, 30 scenarios and one suite.
    result.assert_outcomes(passed=31)


def test_the_written_scenario_example_runs(pytester: pytest.Pytester) -> None:
    written = next(b for b in python_blocks() if "run_scenario(" in b)
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(test_written=f'AGENT = "reference:robust"\n\n{written}')
    pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_every_name_fixture_and_option_is_documented() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = list(plugin.__all__)
    fixtures = ["polygon", "polygon_result", "polygon_scenario"]
    options = ["--polygon-db", "--polygon-agent", "--polygon-seed"]
    missing = [n for n in [*names, *fixtures, *options] if f"`{n}" not in text]
    assert missing == []
