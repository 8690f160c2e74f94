"""A prompt agent's turn limit follows its model role (`turn_timeout`, by default twice the
request timeout) unless the suite sets `agent_turn_timeout` itself."""

from __future__ import annotations

from pathlib import Path

from polygon_voice.agents.prompt_agent import PromptAgentFactory
from polygon_voice.api.setup import with_agent_turn_limit
from polygon_voice.model import Suite
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule
from tests.agents.test_prompt_agent import write_agent
from tests.cli.conftest import Polygon

SUITE = {"name": "limits", "scenarios": [{"id": "hello", "script": [{"say": "hi"}]}]}


def suite(**settings: float) -> Suite:
    return Suite.model_validate({**SUITE, "settings": settings} if settings else SUITE)


def test_a_local_server_gets_the_roles_turn_limit_not_ten_seconds(tmp_path: Path) -> None:
    factory = PromptAgentFactory(write_agent(tmp_path, "http://127.0.0.1:8080/v1"), env={})
    assert suite().settings.agent_turn_timeout == 10.0  # the suite's own default
    assert with_agent_turn_limit(suite(), factory).settings.agent_turn_timeout == 1200.0


def test_a_hosted_api_gets_twice_its_request_timeout(tmp_path: Path) -> None:
    factory = PromptAgentFactory(write_agent(tmp_path, "https://api.example.com/v1"), env={})
    assert with_agent_turn_limit(suite(), factory).settings.agent_turn_timeout == 120.0


def test_the_environment_sets_the_agents_turn_limit(tmp_path: Path) -> None:
    env = {"POLYGON_AGENT_TURN_TIMEOUT": "45", "POLYGON_AGENT_TIMEOUT": "7"}
    factory = PromptAgentFactory(write_agent(tmp_path, "http://127.0.0.1:8080/v1"), env=env)
    assert factory.role_config.request_timeout == 7.0
    assert with_agent_turn_limit(suite(), factory).settings.agent_turn_timeout == 45.0


def test_the_suites_explicit_limit_wins(tmp_path: Path) -> None:
    factory = PromptAgentFactory(write_agent(tmp_path, "http://127.0.0.1:8080/v1"), env={})
    explicit = suite(agent_turn_timeout=10.0, max_turns=6)  # even when it equals the default
    assert with_agent_turn_limit(explicit, factory) is explicit
    other = suite(max_turns=6)
    assert with_agent_turn_limit(other, factory).settings.max_turns == 6


def test_other_agents_keep_the_suites_limit() -> None:
    plain = suite()
    assert with_agent_turn_limit(plain, object()) is plain


def test_a_run_ends_the_turn_at_the_roles_limit(tmp_path: Path, polygon: Polygon) -> None:
    # The model takes 3 s; the agent role allows 0.4 s per turn; the suite sets no limit.
    (polygon.workdir / "suite.yaml").write_text(
        "name: slow\nscenarios:\n  - {id: hello, script: [{say: hi}]}\n"
    )
    with FakeLLMServer([Rule(role="agent", text="Hello.", latency=3)]) as server:
        agent = write_agent(tmp_path, server.base_url)
        agent.write_text(agent.read_text() + "llm_config: llm.yaml\n")
        (tmp_path / "llm.yaml").write_text("llm:\n  agent: {turn_timeout: 0.4, max_retries: 0}\n")
        code, _, err = polygon("run", "suite.yaml", "--agent", f"prompt:{agent}", "-q")
    assert code in (0, 1), err
    with Store(f"sqlite:///{polygon.db}") as store:
        (run,) = store.list_runs()
        (call,) = store.iter_conversations(run.id)
    assert call.end.reason == "error"
    assert call.end.message == "agent gave no answer to call_started within 0.4s"


def test_the_runs_llm_config_gives_a_prompt_agent_its_model(
    tmp_path: Path, polygon: Polygon
) -> None:
    # An agent file with only its prompt: the model comes from the run's --llm-config (its
    # agent role), as it does for the caller and the judge.
    (polygon.workdir / "suite.yaml").write_text(
        "name: from-config\nscenarios:\n  - {id: hello, script: [{say: hi}]}\n"
    )
    (tmp_path / "prompt.md").write_text("You answer the phone for an order line.\n")
    agent = tmp_path / "agent.yaml"
    agent.write_text("system_prompt: prompt.md\n")
    with FakeLLMServer([Rule(role="agent", text="Hello, order line.")]) as server:
        config = polygon.workdir / "polygon.yaml"
        config.write_text(f"llm:\n  agent: {{model: from-config, base_url: {server.base_url}}}\n")
        code, _, err = polygon(
            "run", "suite.yaml", "--agent", f"prompt:{agent}", "--llm-config", str(config), "-q"
        )
        models = {r.body["model"] for r in server.requests}
    assert code in (0, 1), err
    assert models == {"from-config"}


def test_without_a_model_anywhere_the_error_names_the_places(
    tmp_path: Path, polygon: Polygon
) -> None:
    (polygon.workdir / "suite.yaml").write_text(
        "name: nowhere\nscenarios:\n  - {id: hello, script: [{say: hi}]}\n"
    )
    (tmp_path / "prompt.md").write_text("You answer the phone.\n")
    agent = tmp_path / "agent.yaml"
    agent.write_text("system_prompt: prompt.md\n")
    code, _, err = polygon("run", "suite.yaml", "--agent", f"prompt:{agent}", "-q")
    assert code == 2
    assert "no model" in err
    assert "--llm-config" in err
