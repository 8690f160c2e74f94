"""The pytest plugin, run inside pytest: one test per scenario, failure messages with the
reasons, -k, pytest-xdist, --junitxml, runs stored where `polygon runs` reads them, and a plugin
that does nothing for a test that does not use it.

The suites are the built-in three-layer one and scenarios built in the tests, played by the
scripted caller against the reference agents and judged by the deterministic judge: no model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from xml.etree import ElementTree

import pytest

from polygon_voice import open_store

# Installed with its `pytest11` entry point, the plugin loads itself; before that, by name.
INSTALLED = any(ep.name == "polygon" for ep in entry_points(group="pytest11"))
PLUGIN = () if INSTALLED else ("-p", "polygon_voice.pytest_plugin")


@pytest.fixture(autouse=True)
def _own_folder(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each test's runs go to .polygon/polygon.db in its own pytester folder.
    monkeypatch.delenv("POLYGON_DB", raising=False)
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider", *args)


def stored_runs(folder: Path) -> list[tuple[str, list[str]]]:
    """(agent, scenario ids of its calls) of every run stored in the folder's database."""
    with open_store(str(folder / ".polygon" / "polygon.db")) as store:
        return [
            (run.agent, sorted(s.scenario_id for s in store.iter_summaries(run.id)))
            for run in store.list_runs()
        ]


PER_SCENARIO = """
import pytest
from polygon_voice.pytest_plugin import assert_passed

@pytest.mark.polygon(suite="three-layer", agent="{agent}", scenarios=["corr-0[4-6]", "int-03"])
def test_three_layer(polygon_result):
    assert_passed(polygon_result)
"""


def test_a_passing_suite_gives_one_passing_test_per_scenario(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:robust"))
    result = run(pytester, "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*test_three_layer?corr-04? PASSED*",
            "*test_three_layer?corr-05? PASSED*",
            "*test_three_layer?corr-06? PASSED*",
            "*test_three_layer?int-03? PASSED*",
            "*stored runs: * (4 tests)*",
        ]
    )
    # Without pytest-xdist the group plays as one run, stored like `polygon run`'s.
    assert stored_runs(pytester.path) == [
        ("reference:robust", ["corr-04", "corr-05", "corr-06", "int-03"])
    ]


def test_a_flawed_agent_fails_with_the_reasons_the_axes_and_the_transcript(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:flawed"))
    result = run(pytester)
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    # The verdict's reasons, each failing axis with its evidence, the root cause with its
    # evidence, the command that shows the call, and the last turns of its transcript.
    assert "call corr-04: verdict fail" in out
    assert "reason: gate expected_outcome: update_order-2 sent {'order_id': '5590'" in out
    assert "axis tool_args_correct failed: update_order-2 sent {'order_id': '5590'" in out
    assert "root cause stale_tool_args (repair the execution layer)" in out
    assert '"call_id": "update_order-2"' in out
    assert "root cause inflight_call_not_cancelled" in out
    assert "--conversation corr-04]" in out
    assert "transcript (last 8 turns):" in out
    assert "caller: Sorry, I meant order 5599." in out


def test_no_root_cause_and_the_gate_read_naturally(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from polygon_voice.pytest_plugin import assert_no_root_cause, assert_passed

        def test_robust(polygon):
            result = polygon.run("three-layer", agent="reference:robust", scenarios=["int-*"])
            assert result.passed and result.verdict == "pass"
            assert result.axes["backend_correct"]
            assert result.gate.passed
            assert result.root_cause is None
            assert_passed(result, gate=True)
            assert_no_root_cause(result, "inflight_call_not_cancelled")

        def test_flawed(polygon):
            result = polygon.run("three-layer", agent="reference:flawed", scenarios=["int-*"])
            assert not result.axes["backend_correct"]
            assert not result.gate.passed
            assert result.root_causes["inflight_call_not_cancelled"] == 3
            assert_no_root_cause(result, "inflight_call_not_cancelled")

        def test_unknown_cause(polygon):
            result = polygon.run("three-layer", agent="reference:robust", scenarios=["te-01"])
            assert_no_root_cause(result, "inflight_call_not_canceled")
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*polygon three-layer: 3 of 10 calls failed with root cause "
            "inflight_call_not_cancelled: int-03, int-04, int-05*",
            # A misspelt cause is an error, never a pass.
            "*ValueError: no root cause is called 'inflight_call_not_canceled'*",
        ]
    )


def test_k_selects_scenarios_and_only_those_are_played(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:robust"))
    result = run(pytester, "-k", "corr-05 or int-03")
    result.assert_outcomes(passed=2, deselected=2)
    assert stored_runs(pytester.path) == [("reference:robust", ["corr-05", "int-03"])]


def test_junit_has_one_testcase_per_scenario_with_the_reasons(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:flawed"))
    run(pytester, "--junitxml=junit.xml", "-k", "corr-04 or corr-05")
    cases = ElementTree.parse(pytester.path / "junit.xml").getroot().iter("testcase")
    by_name = {case.get("name"): case for case in cases}
    assert sorted(by_name) == ["test_three_layer[corr-04]", "test_three_layer[corr-05]"]
    failure = by_name["test_three_layer[corr-04]"].find("failure")
    assert failure is not None
    # The message (the first line) names the verdict, the root cause and the failed axes;
    # the text holds the whole explanation.
    message = failure.get("message") or ""
    assert (
        "corr-04 (verdict fail, root cause stale_tool_args, axes failed: tool_args_correct"
        in message
    )
    assert "reason: gate expected_outcome: update_order-2 sent" in (failure.text or "")
    assert "transcript (last 8 turns):" in (failure.text or "")
    props = by_name["test_three_layer[corr-05]"].find("properties")
    assert props is not None
    run_ids = [p.get("value") for p in props.iter("property") if p.get("name") == "polygon_run"]
    assert len(run_ids) == 1
    assert len(run_ids[0] or "") >= 8


def test_the_runs_are_listed_by_polygon_runs(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:robust"))
    run(pytester, "-k", "int-03").assert_outcomes(passed=1, deselected=3)
    listed = subprocess.run(
        [sys.executable, "-m", "polygon_voice", "runs", "--json"],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    runs = json.loads(listed.stdout)
    rows = runs if isinstance(runs, list) else runs["runs"]
    assert [(r["suite"], r["agent"]) for r in rows] == [("three-layer", "reference:robust")]


def test_pytest_xdist_runs_every_scenario_once_into_one_database(
    pytester: pytest.Pytester,
) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:robust"))
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=4)
    # Two workers opened the new database at once; every scenario is stored exactly once.
    runs = stored_runs(pytester.path)
    assert sorted(s for _, ids in runs for s in ids) == ["corr-04", "corr-05", "corr-06", "int-03"]
    assert {agent for agent, _ in runs} == {"reference:robust"}
    result.stdout.fnmatch_lines(["*stored runs: *"])


def test_scenarios_built_in_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest
        from polygon_voice import Scenario
        from polygon_voice.pytest_plugin import assert_passed, polygon_scenarios

        WHERE = {
            "id": "three-items",
            "script": [{"say": "Please change order 5590 to 3 items."}, {"say": "Thanks, bye."}],
            "expect": {"backend": {"orders": {"5590": {"quantity": 3}}}},
        }
        REFUND = Scenario.model_validate(
            {"id": "no-refund", "script": [{"say": "Bye."}], "expect": {"no_write": True}}
        )

        def test_one_dict(polygon):
            result = polygon.run_scenario(WHERE, suite="three-layer", agent="reference:robust")
            assert result.label == "three-items"
            assert_passed(result)

        @pytest.mark.parametrize(
            "polygon_scenario",
            polygon_scenarios("three-layer", agent="reference:robust", scenarios=[REFUND, "te-01"]),
        )
        def test_each(polygon_result):
            assert_passed(polygon_result)

        def test_a_bad_scenario(polygon):
            polygon.run_scenario({"id": "x", "script": [{"sey": "hi"}]}, suite="three-layer")
        """
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_each?te-01? PASSED*",
            "*test_each?no-refund? PASSED*",
            "*scenarios.0 (x).script.0.sey: Extra inputs are not permitted*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_an_async_test_runs_on_its_own_loop(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        async def test_it(polygon):
            result = await polygon.run_async(
                "three-layer", agent="reference:robust", scenarios=["te-0[12]"]
            )
            assert result.passed
            assert [call.id for call in result.calls] == ["te-01", "te-02"]
        """
    )
    run(pytester).assert_outcomes(passed=1)
    assert stored_runs(pytester.path) == [("reference:robust", ["te-01", "te-02"])]


def test_a_suite_that_cannot_load_fails_its_test_with_the_reason(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.polygon(suite="no-such-suite.yaml", agent="reference:robust")
        def test_suite(polygon_result):
            pass

        @pytest.mark.polygon(suite="three-layer", agent="reference:robust", sed=3)
        def test_option(polygon_result):
            pass
        """
    )
    result = run(pytester)
    # The test cannot be set up: an error, with the reason alone (no traceback).
    result.assert_outcomes(errors=2)
    assert "Traceback" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*no-such-suite.yaml: file not found*",
            "*unknown polygon option 'sed'*",
        ]
    )
    assert not (pytester.path / ".polygon").exists()


def test_the_agent_option_replaces_the_tests_agent(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(PER_SCENARIO.format(agent="reference:robust"))
    result = run(pytester, "--polygon-agent", "reference:flawed", "-k", "corr-04")
    result.assert_outcomes(failed=1, deselected=3)
    assert stored_runs(pytester.path) == [("reference:flawed", ["corr-04"])]


def test_an_agents_words_are_escaped_in_the_message(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        from polygon_voice.model import CallStarted, EndCall, Say
        from polygon_voice.pytest_plugin import assert_passed

        class Shouting:
            def __init__(self, context):
                pass

            async def respond(self, event):
                if isinstance(event, CallStarted):
                    yield Say(text="\\x1b[2J\\x1b[31mwiped\\x07")
                    yield EndCall()

        def test_it(polygon):
            scenario = {"id": "hi", "script": [{"say": "Hello"}], "expect": {"says": ["5590"]}}
            assert_passed(polygon.run_scenario(scenario, agent=Shouting))
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "agent: \\x1b[2J\\x1b[31mwiped\\x07" in out
    assert "\x1b[2J" not in out


def test_the_plugin_is_inert_when_unused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = run(pytester, "-v")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    # The header may name the installed plugin; nothing else of Polygon's is printed.
    assert "stored runs" not in out
    assert " polygon " not in out
    assert not (pytester.path / ".polygon").exists()


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, polygon_voice.pytest_plugin\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'pydantic', 'rich', 'typer', 'openai', 'alembic', 'yaml')]\n"
        "mine = [m for m in sys.modules if m.startswith('polygon_voice.') and "
        "not m.startswith(('polygon_voice.pytest_plugin', 'polygon_voice.api', "
        "'polygon_voice._lazy'))]\n"
        "print(','.join(heavy + mine))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=env,
    )
    assert result.stdout.strip() == ""
