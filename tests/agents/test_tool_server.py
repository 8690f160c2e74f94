"""The tool server: agents that call their stub tools themselves over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

from polygon_voice.caller import ScriptedCaller
from polygon_voice.conversation import CallSetup, ConversationEngine
from polygon_voice.model import (
    Action,
    ConversationResult,
    EndCall,
    EngineSettings,
    Event,
    Persona,
    Say,
    ToolSpec,
)
from polygon_voice.tools import Backend, ToolSet
from polygon_voice.tools.http_server import ToolServer

Answer = tuple[int, dict[str, Any]]


def post(url: str, body: bytes) -> Answer:
    request = urllib.request.Request(url, data=body, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


class CallsItsTools:
    """On call_started POSTs each (path, body) to the tool server, then says ok and ends."""

    def __init__(self, requests: list[tuple[str, bytes]]) -> None:
        self.requests = requests
        self.base = ""
        self.answers: list[Answer] = []
        self.events: list[str] = []

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        self.events.append(event.kind)
        if event.kind == "call_started":
            for path, body in self.requests:
                self.answers.append(await asyncio.to_thread(post, self.base + path, body))
            yield Say(text="ok")
            yield EndCall(reason="done")


def run_with_server(
    agent: CallsItsTools,
    tools: dict[str, dict[str, Any]],
    records: dict[str, dict[str, dict[str, Any]]] | None = None,
) -> ConversationResult:
    specs = {name: ToolSpec.model_validate(spec) for name, spec in tools.items()}
    runtime = ToolSet(specs).open(Backend(records or {}), seed_parts=(7, "call#1"))
    setup = CallSetup(
        conversation_id="call#1",
        scenario_id="s",
        run_seed=7,
        language="en",
        persona=Persona(),
        settings=EngineSettings(),
        max_turns=20,
    )
    engine = ConversationEngine(setup, agent, ScriptedCaller([]), runtime)

    async def run() -> ConversationResult:
        server = ToolServer.start()
        agent.base = server.url_for("call#1")
        server.register("call#1", engine)
        try:
            return await engine.run()
        finally:
            server.unregister("call#1")
            server.close()

    return asyncio.run(run())


def test_a_direct_call_runs_at_virtual_time_and_moves_the_clock() -> None:
    agent = CallsItsTools([("/tools/lookup", b'{"id": 1}')])
    tools = {"lookup": {"stub": {"kind": "fixed", "returns": {"found": True}}, "latency": 2.0}}
    result = run_with_server(agent, tools)
    assert agent.answers == [(200, {"result": {"found": True}})]
    (call,) = result.tool_calls
    assert call.tool == "lookup"
    assert call.args == {"id": 1}
    assert [(h.status.value, h.time) for h in call.history] == [
        ("prepared", 0.0),
        ("sent", 0.0),
        ("completed", 2.0),
    ]
    kinds = [(e.time, e.source, e.kind) for e in result.trace]
    assert (0.0, "agent", "send_tool_call") in kinds
    assert (2.0, "tools", "tool_result") in kinds
    assert result.turns[0].start == 2.0  # the agent speaks once the answer came
    assert agent.events == ["call_started"]  # the answer is no event as well


def test_faults_apply_and_come_back_as_error_answers() -> None:
    agent = CallsItsTools([("/tools/lookup", b"{}"), ("/tools/lookup", b"{}")])
    tools = {
        "lookup": {
            "stub": {"kind": "fixed", "returns": 1},
            "latency": 0.5,
            "faults": [{"kind": "http_500", "on_call": 1}],
        }
    }
    result = run_with_server(agent, tools)
    (status, body), second = agent.answers
    assert status == 200
    assert body["error"] == "http_500"
    assert "HTTP 500" in body["message"]
    assert second == (200, {"result": 1})
    assert [c.status.value for c in result.tool_calls] == ["failed", "completed"]
    assert result.tool_calls[1].history[0].time == 0.5  # the second starts after the first


def test_unknown_tool_or_conversation_and_bad_json() -> None:
    agent = CallsItsTools(
        [
            ("/tools/nope", b"{}"),
            ("/tools/lookup", b"{not json"),
            ("/tools/lookup", b"[1]"),
        ]
    )
    result = run_with_server(agent, {"lookup": {"stub": {"kind": "fixed"}}})
    (s1, b1), (s2, _), (s3, _) = agent.answers
    assert (s1, s2, s3) == (404, 400, 400)
    assert "unknown tool 'nope'" in b1["message"]
    assert result.tool_calls == []
    assert result.end.reason.value == "agent_hangup"

    other = CallsItsTools([])

    async def unknown() -> Answer:
        server = ToolServer.start()
        try:
            url = server.url_for("missing") + "/tools/lookup"
            return await asyncio.to_thread(post, url, b"{}")
        finally:
            server.close()

    status, body = asyncio.run(unknown())
    assert status == 404
    assert "missing" in body["message"]
    assert other.answers == []


def test_a_write_lands_and_is_recorded() -> None:
    agent = CallsItsTools([("/tools/update_order", b'{"order_id": "5590", "quantity": 3}')])
    tools = {
        "update_order": {
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "quantity": {"type": "integer"}},
                "required": ["order_id"],
            },
            "stub": {"kind": "stateful", "collection": "orders", "op": "update", "key": "order_id"},
            "latency": 0.6,
        }
    }
    records = {"orders": {"5590": {"quantity": 2}}}
    result = run_with_server(agent, tools, records)
    (write,) = result.backend_writes
    assert (write.record, write.field, write.old, write.new) == ("5590", "quantity", 2, 3)
    assert write.call_id == result.tool_calls[0].call_id
    assert write.time == 0.6
    assert agent.answers[0][0] == 200
    assert "result" in agent.answers[0][1]
