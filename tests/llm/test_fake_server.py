"""The fake OpenAI-compatible server: matching, answers, errors, its log, and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from polygon_voice.testing import FakeLLMServer, Rule, load_script

Serve = Callable[..., FakeLLMServer]


def post(server: FakeLLMServer, body: dict[str, Any], role: str | None = None) -> tuple[int, Any]:
    """A plain urllib request, so the server is checked without the client under test."""
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-do-not-log"}
    if role:
        headers["X-Polygon-Role"] = role
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", json.dumps(body).encode(), headers
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def ask(text: str, system: str | None = None) -> dict[str, Any]:
    messages = [{"role": "system", "content": system}] if system else []
    return {"model": "fake-model", "messages": [*messages, {"role": "user", "content": text}]}


def test_rules_match_in_order_by_role_call_text_and_turn(serve: Serve) -> None:
    server = serve(
        [
            Rule(role="judge", text="judge says"),
            Rule(role="caller", call=2, text="second caller call"),
            Rule(contains="refund", text="refund rule"),
            Rule(regex=r"order \d+", text="regex rule"),
            Rule(turn=2, text="second turn"),
            Rule(text="catch-all"),
        ]
    )
    answers = [
        post(server, ask("anything"), role="judge"),
        post(server, ask("anything"), role="caller"),
        post(server, ask("anything"), role="caller"),
        post(server, ask("I want a refund")),
        post(server, ask("about order 17")),
        post(server, {"model": "m", "messages": [{"role": "user", "content": "a"}] * 2}),
        post(server, ask("hello", system="You are the caller. polygon-role: judge")),
    ]
    texts = [body["choices"][0]["message"]["content"] for _, body in answers]
    assert texts == [
        "judge says",
        "catch-all",
        "second caller call",
        "refund rule",
        "regex rule",
        "second turn",
        "judge says",
    ]
    assert [r.role for r in server.requests][-2:] == ["unknown", "judge"]
    assert [r.rule for r in server.requests] == [0, 5, 1, 2, 3, 4, 0]


def test_the_answer_is_an_exact_chat_completion(serve: Serve) -> None:
    server = serve([Rule(text="hi", tool_calls=[{"name": "f", "arguments": {"x": 1}, "id": "c1"}])])
    status, body = post(server, ask("two words"))
    assert status == 200
    assert set(body) == {"id", "object", "created", "model", "choices", "usage"}
    assert body["object"] == "chat.completion"
    assert body["model"] == "fake-model"
    [choice] = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["tool_calls"] == [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    ]
    assert body["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}


def test_times_limits_a_rule_and_errors_carry_retry_after(serve: Serve) -> None:
    server = serve([Rule(error=429, retry_after=1.5, times=1), Rule(text="ok")])
    status, body = post(server, ask("x"))
    assert status == 429
    assert body["error"]["type"] == "rate_limit_exceeded"
    assert post(server, ask("x"))[0] == 200


def test_no_matching_rule_is_a_clear_400(serve: Serve) -> None:
    server = serve([Rule(role="judge", text="only for the judge")])
    status, body = post(server, ask("hello there"), role="caller")
    assert status == 400
    assert "no rule matches request 1 (role caller, call 1" in body["error"]["message"]


def test_streaming_requests_get_the_same_answer_as_server_sent_events(serve: Serve) -> None:
    call = {"name": "lookup", "arguments": {"id": "7"}, "id": "c1"}
    server = serve([Rule(text="one moment", tool_calls=[call], times=1), Rule(error=503)])
    body = {**ask("x"), "stream": True, "stream_options": {"include_usage": True}}
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions", json.dumps(body).encode(), {}
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.headers["Content-Type"] == "text/event-stream"
        events = response.read().decode().split("\n\n")
    assert events[-2:] == ["data: [DONE]", ""]
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "one moment"
    (sent,) = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert (sent["id"], sent["function"]) == ("c1", {"name": "lookup", "arguments": '{"id": "7"}'})
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert chunks[-1]["usage"]["total_tokens"] > 0
    # An error is an error, streamed or not: JSON, as real servers answer it.
    status, error = post(server, {**ask("x"), "stream": True})
    assert status == 503
    assert "scripted error 503" in error["error"]["message"]


def test_the_log_redacts_authorization_and_stats_count(serve: Serve) -> None:
    server = serve([Rule(text="ok")])
    post(server, ask("x"))
    [logged] = server.requests
    assert logged.headers["authorization"] == "[redacted]"
    assert "sk-do-not-log" not in repr(server.requests)
    with urllib.request.urlopen(server.base_url.replace("/v1", "/_polygon/stats")) as response:
        assert json.loads(response.read()) == {"requests": 1, "in_flight": 0, "max_in_flight": 1}


def test_rules_need_exactly_one_answer() -> None:
    with pytest.raises(ValidationError, match="a rule needs an answer"):
        Rule(role="judge")
    with pytest.raises(ValidationError, match="got text and error"):
        Rule(text="a", error=500)
    with pytest.raises(ValidationError, match="retry_after goes with error"):
        Rule(text="a", retry_after=1)


def test_scripts_load_from_yaml_with_located_errors(tmp_path: Path) -> None:
    good = tmp_path / "rules.yaml"
    good.write_text("latency: 0.1\nrules:\n  - role: judge\n    json: {score: 5}\n")
    script = load_script(good)
    assert script.latency == 0.1
    assert script.rules[0].json_ == {"score": 5}
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - text: a\n  - error: 200\n")
    with pytest.raises(ValueError, match=r"bad.yaml: rules.1.error: Input should be greater"):
        load_script(bad)


def test_runs_as_its_own_process(tmp_path: Path) -> None:
    script = tmp_path / "rules.yaml"
    script.write_text("rules:\n  - contains: ping\n    text: pong\n")
    log = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "polygon_voice.testing.fake_llm", "--script", str(script)]
    process = subprocess.Popen([*command, "--log", str(log)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("fake LLM server listening on http://127.0.0.1:")
        base_url = line.split()[-1]
        status, body = _post_url(base_url, ask("ping"))
        assert (status, body["choices"][0]["message"]["content"]) == (200, "pong")
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    [entry] = [json.loads(line) for line in log.read_text().splitlines()]
    assert entry["body"]["messages"][0]["content"] == "ping"
    assert entry["headers"]["authorization"] == "[redacted]"


def _post_url(base_url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Authorization": "Bearer x"},
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.status, json.loads(response.read())


def test_a_bad_script_stops_the_process_with_its_error(tmp_path: Path) -> None:
    script = tmp_path / "rules.yaml"
    script.write_text("rules:\n  - role: judge\n")
    result = subprocess.run(
        [sys.executable, "-m", "polygon_voice.testing.fake_llm", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "rules.yaml: rules.0: a rule needs an answer" in result.stderr


def test_importing_polygon_opens_nothing_and_loads_no_sdk() -> None:
    code = (
        "import sys, polygon_voice, polygon_voice.llm, polygon_voice.testing\n"
        "print(sorted(m for m in ('openai', 'aiohttp', 'httpx2') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
