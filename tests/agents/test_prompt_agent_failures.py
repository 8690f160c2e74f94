"""A prompt agent whose model fails ends its call as the model's failure, told apart from the
agent's own errors, and does not ask a refusing endpoint again for every call."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice.agents.prompt_agent import PromptAgentFactory
from polygon_voice.llm.errors import (
    MODEL_UNAVAILABLE_PREFIX,
    ModelUnavailable,
    is_model_unavailable,
)
from polygon_voice.model import CallStarted
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule
from tests.agents.test_prompt_agent import CONTEXT, collect, write_agent
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

KEY = "sk-agent-canary-51c0ffee"


def keyed_agent(tmp_path: Path, base_url: str, variable: str = "AGENT_TEST_KEY") -> Path:
    path = write_agent(tmp_path, base_url)
    path.write_text(path.read_text() + f"api_key_env: {variable}\n" + "llm_config: llm.yaml\n")
    (tmp_path / "llm.yaml").write_text("llm:\n  agent: {max_retries: 0}\n")
    return path


async def test_a_refused_key_ends_the_call_and_is_not_asked_again(tmp_path: Path) -> None:
    refusal = Rule(error=401, message=f"Incorrect API key provided: {KEY}")
    with FakeLLMServer([refusal]) as server:
        factory = PromptAgentFactory(
            keyed_agent(tmp_path, server.base_url), env={"AGENT_TEST_KEY": KEY}
        )
        with pytest.raises(ModelUnavailable, match="HTTP 401") as first:
            await collect(factory(CONTEXT), CallStarted())
        asked = server.request_count
        with pytest.raises(ModelUnavailable) as second:
            await collect(factory(CONTEXT), CallStarted())
        await factory.aclose()
    assert asked == 1
    assert server.request_count == 1  # the second call did not ask a refusing endpoint again
    assert str(second.value) == str(first.value)
    assert KEY not in str(first.value)


async def test_a_failing_endpoint_is_asked_again_by_the_next_call(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(call=1, error=500, message="boom"), Rule(text="Hello.")]) as server:
        factory = PromptAgentFactory(
            keyed_agent(tmp_path, server.base_url), env={"AGENT_TEST_KEY": KEY}
        )
        with pytest.raises(ModelUnavailable, match="HTTP 500: boom"):
            await collect(factory(CONTEXT), CallStarted())
        actions = await collect(factory(CONTEXT), CallStarted())
        await factory.aclose()
    assert [getattr(a, "text", None) for a in actions] == ["Hello."]
    assert server.request_count == 2
    # The factory's live counters, for a run's progress bar.
    assert (factory.activity.requests, factory.activity.failures) == (2, 1)


async def test_a_missing_key_is_the_models_failure(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(text="never")]) as server:
        factory = PromptAgentFactory(
            keyed_agent(tmp_path, server.base_url, "UNSET_AGENT_KEY"), env={}
        )
        with pytest.raises(ModelUnavailable, match="UNSET_AGENT_KEY is not set"):
            await collect(factory(CONTEXT), CallStarted())
    assert server.request_count == 0


def test_the_marker_tells_the_models_failure_from_an_agent_bug() -> None:
    assert is_model_unavailable(f"{MODEL_UNAVAILABLE_PREFIX}agent call to http://x failed")
    assert not is_model_unavailable("agent raised KeyError: 'order_id'")
    assert not is_model_unavailable("")
    assert not is_model_unavailable(None)


def test_a_run_records_each_call_as_ended_by_the_models_failure(
    tmp_path: Path, polygon: Polygon
) -> None:
    with FakeLLMServer([Rule(role="agent", error=503, message="overloaded")]) as server:
        agent = write_agent(tmp_path, server.base_url)
        agent.write_text(agent.read_text() + "llm_config: llm.yaml\n")
        (tmp_path / "llm.yaml").write_text("llm:\n  agent: {max_retries: 0}\n")
        polygon("run", str(EXAMPLE_SUITE), "--agent", f"prompt:{agent}", "--out", "rep")
    with Store(f"sqlite:///{polygon.db}") as store:
        (run,) = store.list_runs()
        calls = list(store.iter_conversations(run.id))
    assert calls
    for call in calls:
        assert call.end.reason == "error"
        assert is_model_unavailable(call.end.message), call.end.message
        assert call.end.message.endswith("HTTP 503: overloaded")
