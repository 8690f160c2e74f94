"""`polygon run`'s exit codes as a user meets them (docs/cli.md, "Exit codes"): 0 ok,
1 verdicts or gate failed, 2 bad input or a setup that cannot work (checked before any call),
3 a model or endpoint failed during the run. Each case runs the real command in a subprocess,
with a real fake model server on loopback or a closed port."""

from __future__ import annotations

import socket
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice.api import ExitCode
from polygon_voice.store import Store, resolve_db_url
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.cli.test_failures import write_suite

KEY_VAR = "POLYGON_TEST_EXIT_KEY"
# Every model variable a developer's shell might carry, blanked so the tests see only theirs.
CLEAN_ENV = {
    name: ""
    for role in ("", "JUDGE_", "CALLER_", "AGENT_")
    for name in (f"POLYGON_{role}BASE_URL", f"POLYGON_{role}API_KEY", f"POLYGON_{role}MODEL")
    if name != "POLYGON_MODEL"
} | {"OPENAI_API_KEY": "", KEY_VAR: "sk-test-exit-codes", "POLYGON_PREFLIGHT": "1"}


@pytest.fixture
def server() -> Iterator[list[FakeLLMServer]]:
    started: list[FakeLLMServer] = []
    yield started
    for one in started:
        one.stop()


def serve(started: list[FakeLLMServer], *rules: Rule) -> FakeLLMServer:
    one = FakeLLMServer(list(rules)).start()
    started.append(one)
    return one


def closed_port_url() -> str:
    """The URL of a loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def llm_config(folder: Path, base_url: str, *roles: str) -> Path:
    """An --llm-config file pointing `roles` at `base_url`, without retries or cache."""
    sections = "".join(
        f"  {role}:\n    model: fake-{role}\n    base_url: {base_url}\n"
        f"    api_key_env: {KEY_VAR}\n    max_retries: 0\n    cache: false\n"
        for role in roles
    )
    path = folder / "llm.yaml"
    path.write_text(f"llm:\n{sections}")
    return path


def prompt_agent(folder: Path, base_url: str | None = None) -> str:
    (folder / "prompt.md").write_text("You take changes to orders. Be brief.")
    lines = ["system_prompt: prompt.md", "model: fake-agent"]
    if base_url is not None:
        lines += [f"base_url: {base_url}", f"api_key_env: {KEY_VAR}", "llm_config: llm.yaml"]
    (folder / "agent.yaml").write_text("\n".join(lines) + "\n")
    return "prompt:agent.yaml"


def stored_runs(polygon: Polygon) -> list[str]:
    """The ids of the runs in the test's database (none when it was never created)."""
    if not Path(polygon.db).exists():
        return []
    store = Store(resolve_db_url(str(polygon.db)))
    try:
        return [run.id for run in store.list_runs()]
    finally:
        store.close()


def test_an_unreachable_judge_stops_before_any_call(polygon: Polygon) -> None:
    config = llm_config(polygon.workdir, closed_port_url(), "judge")
    result = polygon.subprocess(
        "run", str(EXAMPLE_SUITE), "--judge", "llm", "--llm-config", str(config), env=CLEAN_ENV
    )
    assert result.returncode == ExitCode.BAD_INPUT == 2
    assert "connection refused" in result.stderr
    assert "judge" in result.stderr
    assert "Traceback" not in result.stderr
    assert "unscored" not in result.stdout  # nothing was run, so nothing was judged
    assert stored_runs(polygon) == []


def test_a_prompt_agent_without_its_key_stops_before_any_call(polygon: Polygon) -> None:
    agent = prompt_agent(polygon.workdir)  # the hosted default endpoint, no key anywhere
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--agent", agent, env=CLEAN_ENV)
    assert result.returncode == 2
    assert "API key" in result.stderr
    assert "agent" in result.stderr
    assert "warn" not in result.stdout
    assert stored_runs(polygon) == []


def test_the_llm_extra_missing_is_named_before_any_call(polygon: Polygon) -> None:
    # A meta-path hook in the subprocess refuses `aiohttp`, as if the extra were not installed.
    hook = polygon.workdir / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import sys

            class _NoClient:
                def find_spec(self, name, path=None, target=None):
                    if name == "aiohttp" or name.startswith("aiohttp."):
                        raise ImportError("No module named 'aiohttp'")
                    return None

            sys.meta_path.insert(0, _NoClient())
            """
        )
    )
    config = llm_config(polygon.workdir, closed_port_url(), "judge")
    result = polygon.subprocess(
        "run",
        str(EXAMPLE_SUITE),
        "--judge",
        "llm",
        "--llm-config",
        str(config),
        env={**CLEAN_ENV, "PYTHONPATH": str(hook)},
    )
    assert result.returncode == 2
    assert "pip install 'polygon-voice[llm]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_judge_model_failing_during_the_run_exits_3_and_names_the_cause_once(
    polygon: Polygon, server: list[FakeLLMServer]
) -> None:
    # The endpoint answers the check before the run (GET /models) but fails every completion.
    fake = serve(server, Rule(role="judge", error=500, message="judge backend on fire"))
    config = llm_config(polygon.workdir, fake.base_url, "judge")
    result = polygon.subprocess(
        "run",
        str(EXAMPLE_SUITE),
        "--judge",
        "llm",
        "--llm-config",
        str(config),
        "--fail-on",
        "warn",
        env=CLEAN_ENV,
    )
    assert result.returncode == ExitCode.INFRASTRUCTURE == 3  # 3 wins over --fail-on's 1
    assert "judge backend on fire" in result.stderr
    assert result.stderr.count("(further failures are counted, not printed)") == 1
    assert "the judge model failed for 9 call(s)" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_prompt_agent_whose_model_fails_during_the_run_exits_3(
    polygon: Polygon, server: list[FakeLLMServer]
) -> None:
    fake = serve(server, Rule(error=503, message="agent model overloaded"))
    llm_config(polygon.workdir, fake.base_url, "agent")
    agent = prompt_agent(polygon.workdir, fake.base_url)
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--agent", agent, env=CLEAN_ENV)
    assert result.returncode == 3
    assert "the agent's model or service could not be reached for 9 call(s)" in result.stderr
    assert "agent model overloaded" in result.stderr


def test_an_http_agent_nobody_listens_for_exits_3(polygon: Polygon) -> None:
    agent = closed_port_url().removesuffix("/v1") + "/agent"
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--agent", agent, env=CLEAN_ENV)
    assert result.returncode == 3
    assert "could not be reached" in result.stderr


def test_an_agent_that_raises_is_a_verdict_not_infrastructure(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir)
    plain = polygon.subprocess("run", str(suite), "--concurrency", "2", env=CLEAN_ENV)
    assert plain.returncode == 0  # the agent's own bug: its calls fail, the run does not
    assert "could not be reached" not in plain.stderr
    strict = polygon.subprocess(
        "run", str(suite), "--fail-on", "fail", "--concurrency", "2", env=CLEAN_ENV
    )
    assert strict.returncode == ExitCode.VERDICTS_FAILED == 1
    breakers = [line.split() for line in strict.stderr.splitlines() if "scenario" in line]
    assert sorted(words[0] for words in breakers) == ["crash", "hang"]
    assert all("fail" in words for words in breakers)


def test_fail_on_and_min_composite_read_the_verdicts(polygon: Polygon) -> None:
    base = ("run", "three-layer", "--agent", "reference:robust", "--quiet")
    assert polygon.subprocess(*base, "--fail-on", "fail", env=CLEAN_ENV).returncode == 0
    assert polygon.subprocess(*base, "--min-composite", "50", env=CLEAN_ENV).returncode == 0
    flawed = ("run", "three-layer", "--agent", "reference:flawed", "--quiet")
    below = polygon.subprocess(*flawed, "--min-composite", "90", env=CLEAN_ENV)
    assert below.returncode == 1
    assert "below --min-composite 90" in below.stderr
    gate = polygon.subprocess(*flawed, "--gate", "--fail-on", "fail", env=CLEAN_ENV)
    assert gate.returncode == 1
    assert "release gate: FAIL" in gate.stderr
    assert "corr-04  scenario corr-04  verdict fail" in gate.stderr


def test_a_scenario_filter_matching_nothing_names_the_scenarios(polygon: Polygon) -> None:
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--scenario", "nope-*", env=CLEAN_ENV)
    assert result.returncode == 2
    assert "nope-*" in result.stderr
    assert "change-quantity" in result.stderr
    assert stored_runs(polygon) == []


def test_a_judge_whose_every_answer_is_unusable_exits_3_and_is_not_offered_a_resume(
    polygon: Polygon, server: list[FakeLLMServer]
) -> None:
    # The judge answers every call, but never in the judgement's shape: all calls unscored.
    fake = serve(server, Rule(role="judge", json={"scores": {}, "evidence": "x"}))
    config = llm_config(polygon.workdir, fake.base_url, "judge")
    result = polygon.subprocess(
        "run", str(EXAMPLE_SUITE), "--judge", "llm", "--llm-config", str(config), env=CLEAN_ENV
    )
    assert result.returncode == ExitCode.INFRASTRUCTURE
    assert "the judge model failed for 9 call(s): its answers could not be used" in result.stderr
    assert "'criteria' is a required property" in result.stderr
    assert "judges them again" not in result.stderr  # a resume would replay the same answers
    assert "Traceback" not in result.stderr
