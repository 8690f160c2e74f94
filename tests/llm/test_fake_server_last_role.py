"""The fake LLM server's `last_role` condition: a rule for the request right after the caller
spoke, and another for the one after a tool answered (frameworks send the same last user line
in both)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from polygon_voice.testing import FakeLLMServer, Rule, ToolCallSpec

RULES = [
    Rule(regex="change", last_role="user", tool_calls=[ToolCallSpec(name="update_order")]),
    Rule(regex="change", last_role="tool", text="Done."),
    Rule(regex="change", last_role="developer", text="Done, it came back later."),
    Rule(text="Sorry?"),
]


def answer(server: FakeLLMServer, messages: list[dict[str, Any]]) -> dict[str, Any]:
    body = json.dumps({"model": "m", "messages": messages}).encode()
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        message: dict[str, Any] = json.load(response)["choices"][0]["message"]
        return message


def test_last_role_tells_the_caller_s_line_from_a_tool_s_answer() -> None:
    caller = {"role": "user", "content": "Please change order 5590."}
    called = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "update_order", "arguments": "{}"}}
    ]}  # fmt: skip
    with FakeLLMServer(RULES) as server:
        first = answer(server, [caller])
        assert first["tool_calls"][0]["function"]["name"] == "update_order"
        tool = {"role": "tool", "tool_call_id": "c1", "content": "{}"}
        assert answer(server, [caller, called, tool])["content"] == "Done."
        note = {"role": "developer", "content": '{"status": "finished"}'}
        assert answer(server, [caller, called, tool, note])["content"] == (
            "Done, it came back later."
        )
        assert answer(server, [])["content"] == "Sorry?"  # no message: no role to match
