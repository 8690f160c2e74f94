"""The prompt agent against servers that are not OpenAI: the fake server's llama.cpp and vLLM
dialects refuse `content: null`, ignore tools without `tool_choice` and refuse seeds past
int64, as the real servers do. Also the caps on tool rounds and the agent role's usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.agents import AgentContext
from polygon_voice.agents.prompt_agent import SEED_RANGE, PromptAgentFactory
from polygon_voice.cli.run_view import SCREEN_ERROR_CHARS, on_screen
from polygon_voice.llm.errors import ModelUnavailable
from polygon_voice.model import (
    CallerSaid,
    EndCall,
    PrepareToolCall,
    Say,
    SendToolCall,
    ToolError,
    ToolErrorKind,
    ToolResult,
)
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule, ToolCallSpec
from tests.agents.test_prompt_agent import CONTEXT, collect, write_agent
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

UPDATE = ToolCallSpec(name="update_order", arguments={"order_id": "5590"}, id="t1")


def capped_agent(tmp_path: Path, base_url: str, per_turn: int, per_call: int) -> Path:
    path = write_agent(tmp_path, base_url)
    caps = f"max_tool_rounds_per_turn: {per_turn}\nmax_tool_rounds_per_call: {per_call}\n"
    path.write_text(path.read_text() + caps)
    return path


async def test_tools_work_against_llamacpp(tmp_path: Path) -> None:
    rules = [Rule(tool_calls=[UPDATE], times=1), Rule(text="Changed.")]
    with FakeLLMServer(rules, dialect="llamacpp") as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        agent = factory(CONTEXT)
        first = await collect(agent, CallerSaid(text="Change order 5590"))
        second = await collect(agent, ToolResult(call_id="t1", result={"ok": True}))
        await factory.aclose()
        requests = server.requests
    # Without tool_choice the server answers in text; with content null it answers 500.
    assert first == [
        PrepareToolCall(call_id="t1", tool="update_order", args={"order_id": "5590"}),
        SendToolCall(call_id="t1"),
    ]
    assert second == [Say(text="Changed.")]
    assert [r.rule for r in requests] == [0, 1]  # neither was refused
    assert all(r.body["tool_choice"] == "auto" for r in requests)
    sent_back = requests[1].body["messages"][-2]
    assert sent_back["role"] == "assistant"
    assert sent_back["content"] == ""
    assert factory.usage.roles["agent"].calls == 2


async def test_the_profile_chooses_its_own_tool_choice(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(text="Hi.")]) as server:
        config = write_agent(tmp_path, server.base_url, params="tool_choice: required")
        factory = PromptAgentFactory(config, env={})
        await collect(factory(CONTEXT), CallerSaid(text="Hello"))
        await factory.aclose()
        assert server.requests[0].body["tool_choice"] == "required"


async def test_no_tool_choice_without_tools(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(text="Hi.")]) as server:
        path = write_agent(tmp_path, server.base_url)
        path.write_text(path.read_text() + "control_tools: false\n")
        factory = PromptAgentFactory(path, env={})
        context = AgentContext(conversation_id="c", scenario_id="s", language="en", seed=1)
        await collect(factory(context), CallerSaid(text="Hello"))
        await factory.aclose()
        body = server.requests[0].body
    assert "tools" not in body
    assert "tool_choice" not in body


async def test_a_repeated_failing_call_ends_the_turn_then_the_call(tmp_path: Path) -> None:
    failed = ToolError(call_id="t1", error=ToolErrorKind.HTTP_500, message="down")
    with FakeLLMServer([Rule(tool_calls=[UPDATE])], dialect="llamacpp") as server:
        factory = PromptAgentFactory(capped_agent(tmp_path, server.base_url, 2, 3), env={})
        agent = factory(CONTEXT)
        turn = [await collect(agent, CallerSaid(text="Change order 5590"))]
        for _ in range(2):
            turn.append(await collect(agent, failed))
        asked_in_turn = server.request_count
        turn.append(await collect(agent, CallerSaid(text="Please try again")))
        turn.append(await collect(agent, failed))
        await factory.aclose()
        last = server.requests[-1].body["messages"]
    sent = [PrepareToolCall(call_id="t1", tool="update_order", args=UPDATE.arguments),
            SendToolCall(call_id="t1")]  # fmt: skip
    # Two rounds are sent; the third model answer of the turn is not carried out.
    assert turn[:3] == [sent, sent, []]
    assert asked_in_turn == 3
    # The caller speaks: a new turn, but the call has one round left.
    assert turn[3] == sent
    (end,) = turn[4]
    assert isinstance(end, EndCall)
    assert "3 tool rounds in this call" in end.reason
    assert server.request_count == 5
    # The calls not carried out were answered, so the history the server saw stays valid.
    refused = [m for m in last if m["role"] == "tool" and "not run" in m["content"]]
    assert len(refused) == 1
    assert "max_tool_rounds_per_turn" in json.loads(refused[0]["content"])["error"]


async def test_seeds_are_reduced_into_every_servers_range(tmp_path: Path) -> None:
    big = 2**64 - 5  # a derived seed past int64, which vLLM refuses with 400
    with FakeLLMServer([Rule(text="Hi.")], dialect="vllm") as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        for seed in (big, big, 3):
            context = AgentContext(conversation_id="c", scenario_id="s", language="en", seed=seed)
            assert await collect(factory(context), CallerSaid(text="Hello")) == [Say(text="Hi.")]
        await factory.aclose()
        seeds = [r.body["seed"] for r in server.requests]
    assert seeds[0] == seeds[1] == big % SEED_RANGE  # the same call seed, the same sent seed
    assert all(0 <= seed < SEED_RANGE for seed in seeds)
    assert seeds[2] == 3


def test_a_whole_run_against_llamacpp_records_the_agents_usage(
    tmp_path: Path, polygon: Polygon
) -> None:
    bye = ToolCallSpec(name="end_call", arguments={"reason": "done"})
    rules = [
        Rule(role="agent", tool_calls=[UPDATE], times=1),
        Rule(role="agent", text="Goodbye.", tool_calls=[bye]),
    ]
    with FakeLLMServer(rules, dialect="llamacpp") as server:
        config = write_agent(tmp_path, server.base_url)
        code, _, err = polygon("run", str(EXAMPLE_SUITE), "--agent", f"prompt:{config}")
        agent_requests = [r for r in server.requests if r.role == "agent"]
    assert code == 0, err
    assert agent_requests
    assert all(r.rule is not None for r in agent_requests)
    # The tool's answer went back, in a request the llama.cpp dialect took.
    assert any(m["role"] == "tool" for r in agent_requests for m in r.body["messages"])
    with Store(f"sqlite:///{polygon.db}") as store:
        (record,) = store.list_runs()
    usage = record.config["llm_usage"]["agent"]
    assert usage["calls"] == len(agent_requests)
    assert usage["failed_calls"] == 0
    assert usage["tokens_in"] > 0


async def test_a_long_error_is_kept_in_full_and_shortened_on_screen(tmp_path: Path) -> None:
    cause = "grammar: " + "rule " * 150 + "THE-CAUSE-AT-THE-END"
    with FakeLLMServer([Rule(error=400, message=cause)]) as server:
        path = write_agent(tmp_path, server.base_url)
        path.write_text(path.read_text() + "llm_config: llm.yaml\n")
        (tmp_path / "llm.yaml").write_text("llm:\n  agent: {max_retries: 0}\n")
        factory = PromptAgentFactory(path, env={})
        with pytest.raises(ModelUnavailable) as failed:
            await collect(factory(CONTEXT), CallerSaid(text="Hello"))
        await factory.aclose()
    assert cause in str(failed.value)
    shown = on_screen(str(failed.value))
    assert len(shown) < len(str(failed.value))
    assert shown.startswith(str(failed.value)[:SCREEN_ERROR_CHARS])
    assert "more characters in the stored call" in shown
    assert on_screen("short") == "short"


async def test_a_call_without_an_id_is_answered_under_the_id_it_was_given(
    tmp_path: Path,
) -> None:
    call = {"type": "function", "function": {"name": "update_order", "arguments": "{}"}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    completion = {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    rules = [Rule(raw=json.dumps(completion), times=1), Rule(text="Done.")]
    with FakeLLMServer(rules, dialect="llamacpp") as server:
        factory = PromptAgentFactory(write_agent(tmp_path, server.base_url), env={})
        agent = factory(CONTEXT)
        prepare, _ = await collect(agent, CallerSaid(text="Change it"))
        assert isinstance(prepare, PrepareToolCall)
        answer = await collect(agent, ToolResult(call_id=prepare.call_id, result={"ok": 1}))
        await factory.aclose()
        sent = server.requests[1].body["messages"]
    assert answer == [Say(text="Done.")]
    assert prepare.call_id
    assert sent[-2]["tool_calls"][0]["id"] == prepare.call_id
    assert sent[-1]["tool_call_id"] == prepare.call_id
