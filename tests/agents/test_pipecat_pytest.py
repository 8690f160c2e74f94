"""The Pipecat example bots in a user's own pytest run, through Polygon's pytest plugin: one
test per scenario, the robust bot's pass and the flawed bot's fail with its root cause."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

pytest.importorskip(
    "pipecat", reason="the pipecat extra is not installed: pip install 'polygon-voice[pipecat]'"
)

from tests.agents.test_pipecat import FLAWED, ROBUST, SCRIPT

pytest_plugins = ["pytester"]
# Installed with its `pytest11` entry point, the plugin loads itself; before that, by name.
INSTALLED = any(ep.name == "polygon" for ep in entry_points(group="pytest11"))
PLUGIN = () if INSTALLED else ("-p", "polygon_voice.pytest_plugin")

USER_TESTS = """
import pytest
from polygon_voice.pytest_plugin import assert_no_root_cause
from polygon_voice.testing import FakeLLMServer, load_script

@pytest.fixture(autouse=True)
def scripted_model(monkeypatch):
    with FakeLLMServer(load_script({script!r})) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield

@pytest.mark.polygon(suite="three-layer", agent={robust!r}, scenarios=["int-03", "int-04"])
def test_robust(polygon_result):
    assert_no_root_cause(polygon_result, "inflight_call_not_cancelled")

@pytest.mark.polygon(suite="three-layer", agent={flawed!r}, scenarios=["int-03", "int-04"])
def test_flawed(polygon_result):
    assert_no_root_cause(polygon_result, "inflight_call_not_cancelled")
"""


def test_the_bots_in_pytest(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(USER_TESTS.format(script=str(SCRIPT), robust=ROBUST, flawed=FLAWED))
    # In its own process, as a user runs it: an in-process run forgets the modules it
    # imported when it ends, and Pipecat's would then be loaded twice.
    result = pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_robust?int-03? PASSED*",
            "*test_robust?int-04? PASSED*",
            "*test_flawed?int-03? FAILED*",
            "*test_flawed?int-04? FAILED*",
        ],
        consecutive=False,
    )
    result.stdout.fnmatch_lines(["*root cause inflight_call_not_cancelled*"])
