"""The HTTP agent adapter against a real loopback service started in the test."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.agents import AgentContext, resolve_agent
from polygon_voice.agents.http_agent import HttpAgent, HttpAgentError, HttpAgentFactory
from polygon_voice.model import (
    Action,
    CallerSaid,
    CallStarted,
    EndCall,
    Event,
    FixedStub,
    Say,
    ToolSpec,
)
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

CONTEXT = AgentContext(
    conversation_id="conv-1",
    scenario_id="s",
    language="en",
    seed=3,
    tools={"lookup": ToolSpec(stub=FixedStub(kind="fixed"), description="Find an order")},
)


class _Handler(BaseHTTPRequestHandler):
    received: list[dict[str, Any]]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.received.append(body)  # type: ignore[attr-defined]
        event = body["event"]
        text = event.get("text", "")
        if text == "slow":
            time.sleep(1.0)
        if text == "crash":
            self.send_response(500)
            self.end_headers()
            return
        if text == "bad":
            actions: list[dict[str, Any]] = [{"kind": "dance"}]
        elif text == "bye":
            actions = [{"kind": "say", "text": "Bye"}, {"kind": "end_call", "reason": "done"}]
        else:
            actions = [{"kind": "say", "text": f"got {event['kind']}"}]
        data = json.dumps({"actions": actions}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def service() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.received = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/agent", server.received  # type: ignore[attr-defined]
    finally:
        server.shutdown()
        server.server_close()


def answer(agent: HttpAgent, event: Event) -> list[Action]:
    async def run() -> list[Action]:
        return [action async for action in agent.respond(event)]

    return asyncio.run(run())


def test_events_go_out_and_actions_come_back(
    service: tuple[str, list[dict[str, Any]]],
) -> None:
    url, received = service
    factory = resolve_agent(url)
    assert isinstance(factory, HttpAgentFactory)
    assert factory.describe() == {"agent_kind": "http", "agent_url": url}
    agent = factory(CONTEXT)
    assert isinstance(agent, HttpAgent)
    assert answer(agent, CallStarted()) == [Say(text="got call_started")]
    assert answer(agent, CallerSaid(text="bye")) == [Say(text="Bye"), EndCall(reason="done")]
    first, second = received
    assert first["conversation_id"] == "conv-1"
    assert first["event"] == {"kind": "call_started"}
    assert first["context"]["tools"]["lookup"]["description"] == "Find an order"
    assert second["event"] == {"kind": "caller_said", "text": "bye"}
    assert "context" not in second


def test_timeout_error_and_bad_answers_raise(
    service: tuple[str, list[dict[str, Any]]],
) -> None:
    url, _ = service
    agent = HttpAgentFactory(url, timeout=0.2)(CONTEXT)
    with pytest.raises(HttpAgentError, match="no answer within"):
        answer(agent, CallerSaid(text="slow"))
    with pytest.raises(HttpAgentError, match="HTTP 500"):
        answer(agent, CallerSaid(text="crash"))
    with pytest.raises(HttpAgentError, match="invalid action"):
        answer(agent, CallerSaid(text="bad"))


def test_unreachable_endpoint() -> None:
    agent = HttpAgentFactory("http://127.0.0.1:9/agent", timeout=0.5)(CONTEXT)
    with pytest.raises(HttpAgentError, match="unreachable"):
        answer(agent, CallStarted())


def test_a_whole_run_against_the_example_server(polygon: Polygon) -> None:
    path = Path(__file__).resolve().parents[2] / "examples" / "http_agent" / "server.py"
    spec = importlib.util.spec_from_file_location("example_http_agent", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = ThreadingHTTPServer(("127.0.0.1", 0), module.Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/agent"
        code, _, err = polygon("run", str(EXAMPLE_SUITE), "--agent", url, "--out", "rep")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 0, err
    report = json.loads((polygon.workdir / "rep" / "report.json").read_text())
    assert report["agent"] == url
    assert "transferred" in {c["end_reason"] for c in report["conversations"]}
    # The example agent calls update_order itself, through Polygon's tool server.
    by_id = {c["id"]: c for c in report["conversations"]}
    assert by_id["change-quantity"]["tool_calls"] == 1
    assert by_id["change-quantity"]["end_reason"] == "agent_hangup"
    lines = (polygon.workdir / "rep" / "transcripts.jsonl").read_text().splitlines()
    transcripts = {t["id"]: t for t in map(json.loads, lines)}
    change = transcripts["change-quantity"]
    (call,) = change["tool_calls"]
    assert (call["tool"], call["status"], call["args"]) == (
        "update_order",
        "completed",
        {"order_id": "5590", "quantity": 3},
    )
    (write,) = change["backend_writes"]
    assert (write["record"], write["field"], write["new"], write["call_id"]) == (
        "5590",
        "quantity",
        3,
        call["call_id"],
    )
    kinds = [e["kind"] for e in change["trace"]]
    assert kinds.index("send_tool_call") < kinds.index("tool_result") < kinds.index("end_call")
    # "Done" right after the write completed is backed by it (instants compare to the µs).
    answers = {a["id"]: a["answer"] for a in by_id["change-quantity"]["probes"]}
    assert answers["promise_without_tool_call"] == "no"


def test_the_tool_server_url_goes_in_the_context(
    service: tuple[str, list[dict[str, Any]]],
) -> None:
    url, received = service
    factory = HttpAgentFactory(url)
    factory.tool_server = "http://127.0.0.1:1"
    agent = factory(dataclasses.replace(CONTEXT, conversation_id="a#1"))
    answer(agent, CallStarted())
    assert received[0]["context"]["tool_server"] == "http://127.0.0.1:1/conversations/a%231"
