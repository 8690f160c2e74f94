"""The prompt agent against the real fake LLM server: text, tool calls, hashes, loading."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from polygon_voice.agents import AgentContext, AgentLoadError, describe_agent, resolve_agent
from polygon_voice.agents.prompt_agent import PromptAgent, PromptAgentFactory, tool_schemas
from polygon_voice.model import (
    Action,
    CallerSaid,
    CallStarted,
    EndCall,
    Event,
    FixedStub,
    PrepareToolCall,
    Say,
    SendToolCall,
    ToolResult,
    ToolSpec,
)
from polygon_voice.seeding import content_hash
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule, ToolCallSpec
from tests.cli.conftest import Polygon

UPDATE_ORDER = ToolSpec(
    description="Change an order",
    parameters={
        "type": "object",
        "properties": {"order_id": {"type": "string"}, "size": {"type": "string"}},
        "required": ["order_id"],
    },
    stub=FixedStub(kind="fixed", returns={"ok": True}),
)
CONTEXT = AgentContext(
    conversation_id="c1",
    scenario_id="s1",
    language="en",
    seed=7,
    tools={"update_order": UPDATE_ORDER},
)


def write_agent(tmp_path: Path, base_url: str, params: str = "temperature: 0.2") -> Path:
    (tmp_path / "prompt.md").write_text("You are a pizza shop agent.\n", encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        f"model: fake-model\nbase_url: {base_url}\nsystem_prompt: prompt.md\n"
        f"params:\n  {params}\n  top_p: 0.9\n",
        encoding="utf-8",
    )
    return config


async def collect(agent: PromptAgent, event: Event) -> list[Action]:
    return [action async for action in agent.respond(event)]


def test_text_tool_call_result_and_end_call(tmp_path: Path) -> None:
    rules = [
        Rule(text="Hello, pizza shop.", times=1),
        Rule(
            tool_calls=[ToolCallSpec(name="update_order", arguments={"order_id": "A1"}, id="t1")],
            times=1,
        ),
        Rule(text="Done", times=1),
        Rule(tool_calls=[ToolCallSpec(name="end_call", arguments={"reason": "bye"})], times=1),
    ]
    with FakeLLMServer(rules) as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        agent = factory(CONTEXT)

        async def conversation() -> list[list[Action]]:
            try:
                return [
                    await collect(agent, CallStarted()),
                    await collect(agent, CallerSaid(text="Make order A1 large")),
                    await collect(agent, ToolResult(call_id="t1", result={"ok": True})),
                    await collect(agent, CallerSaid(text="Thanks, bye")),
                ]
            finally:
                await factory.client().aclose()

        turns = asyncio.run(conversation())
        requests = server.requests
    assert turns[0] == [Say(text="Hello, pizza shop.")]
    assert turns[1] == [
        PrepareToolCall(call_id="t1", tool="update_order", args={"order_id": "A1"}),
        SendToolCall(call_id="t1"),
    ]
    assert turns[2] == [Say(text="Done")]
    assert turns[3] == [EndCall(reason="bye")]
    first = requests[0].body
    assert first["model"] == "fake-model"
    assert (first["temperature"], first["top_p"], first["seed"]) == (0.2, 0.9, 7)
    names = [tool["function"]["name"] for tool in first["tools"]]
    assert names == ["end_call", "transfer_call", "update_order"]
    assert first["messages"][0] == {"role": "system", "content": "You are a pizza shop agent.\n"}
    # The tool's answer went back as a tool message right after the assistant's call.
    third = requests[2].body["messages"]
    assert third[-2]["tool_calls"][0]["id"] == "t1"
    assert third[-1] == {
        "role": "tool",
        "tool_call_id": "t1",
        "content": '{"result": {"ok": true}}',
    }


def test_pending_call_gets_placeholder_before_a_user_message(tmp_path: Path) -> None:
    rules = [
        Rule(
            tool_calls=[ToolCallSpec(name="update_order", arguments={"order_id": "A"}, id="t9")],
            times=1,
        ),
        Rule(text="One moment."),
    ]
    with FakeLLMServer(rules) as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        agent = factory(CONTEXT)

        async def run() -> None:
            await collect(agent, CallerSaid(text="change it"))
            await collect(agent, CallerSaid(text="hello?"))
            await factory.client().aclose()

        asyncio.run(run())
        messages = server.requests[1].body["messages"]
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert messages[3]["tool_call_id"] == "t9"


def test_unknown_tool_is_told_to_the_model(tmp_path: Path) -> None:
    rules = [
        Rule(tool_calls=[ToolCallSpec(name="cancel_everything", id="x")], times=1),
        Rule(text="Sorry, I cannot do that."),
    ]
    with FakeLLMServer(rules) as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        agent = factory(CONTEXT)

        async def run() -> list[Action]:
            try:
                return await collect(agent, CallerSaid(text="cancel"))
            finally:
                await factory.client().aclose()

        assert asyncio.run(run()) == [Say(text="Sorry, I cannot do that.")]


def test_hashes_follow_prompt_and_profile(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"
    a = PromptAgentFactory(write_agent(tmp_path, url), env={})
    same = PromptAgentFactory(write_agent(tmp_path, url), env={})
    assert a.describe() == same.describe()
    described = a.describe()
    assert described["agent_model"] == "fake-model"
    assert described["agent_kind"] == "prompt"
    hotter = PromptAgentFactory(write_agent(tmp_path, url, "temperature: 0.9"), env={})
    assert hotter.profile_hash != a.profile_hash
    assert hotter.prompt_version == a.prompt_version
    assert hotter.config_hash != a.config_hash
    (tmp_path / "prompt.md").write_text("Another prompt\n", encoding="utf-8")
    reworded = PromptAgentFactory(tmp_path / "agent.yaml", env={})
    assert reworded.prompt_version != a.prompt_version
    assert reworded.profile_hash == hotter.profile_hash


def test_resolve_prompt_prefix(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "http://127.0.0.1:9/v1")
    factory = resolve_agent("prompt:agent.yaml", base_dir=tmp_path)
    assert isinstance(factory, PromptAgentFactory)
    assert describe_agent(f"prompt:{path}")["agent_prompt_version"] == factory.prompt_version
    assert describe_agent("reference:robust") == {}
    with pytest.raises(AgentLoadError, match=r"missing\.yaml: file not found"):
        resolve_agent("prompt:missing.yaml", base_dir=tmp_path)


def test_config_errors(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("x", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("system_prompt: p.md\nmodel: m\nunknown: 1\n", encoding="utf-8")
    with pytest.raises(AgentLoadError, match="unknown"):
        resolve_agent(f"prompt:{bad}")
    no_model = tmp_path / "no_model.yaml"
    no_model.write_text("system_prompt: p.md\n", encoding="utf-8")
    with pytest.raises(Exception, match="no model"):
        PromptAgentFactory(no_model, env={})


def test_tool_schemas_do_not_shadow_suite_tools() -> None:
    tools = {"end_call": UPDATE_ORDER}
    schemas = tool_schemas(tools, control=True)
    by_name = {s["function"]["name"]: s["function"] for s in schemas}
    assert by_name["end_call"]["description"] == "Change an order"
    assert set(by_name) == {"end_call", "transfer_call"}
    assert tool_schemas({}, control=False) == []


def test_a_whole_run_with_the_prompt_agent(tmp_path: Path, polygon: Polygon) -> None:
    suite = Path(__file__).resolve().parents[2] / "examples" / "order_line" / "suite.yaml"
    rules = [
        Rule(
            role="agent",
            text="Goodbye.",
            tool_calls=[ToolCallSpec(name="end_call", arguments={"reason": "done"})],
        )
    ]
    with FakeLLMServer(rules) as server:
        config = write_agent(tmp_path, server.base_url)
        code, _, err = polygon("run", str(suite), "--agent", f"prompt:{config}", "--out", "rep")
    assert code == 0, err
    with Store(f"sqlite:///{polygon.db}") as store:
        (record,) = store.list_runs()
    assert record.config["agent_model"] == "fake-model"
    assert record.config["agent_prompt_version"] == content_hash("You are a pizza shop agent.\n")
    assert "agent_profile_hash" in record.config
    report = json.loads((polygon.workdir / "rep" / "report.json").read_text())
    assert "agent_hangup" in {c["end_reason"] for c in report["conversations"]}
