"""Hostile text at every boundary: stored (replaced and flagged), never fatal, never raw on
the terminal.

Strings carry lone surrogates (a JSON or YAML "\\ud800" escape gives one), NUL, ESC and
OSC sequences (clear screen, window title, OSC 52 clipboard write), C1 controls, bidi
overrides and astral characters; they come from an agent's speech, arguments, state and
hang-up reason, a suite's tool results and names, a model's answer and a prompt file.
"""

from __future__ import annotations

import http.server
import io
import itertools
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from rich.text import Text

from polygon_voice.agents import as_factory
from polygon_voice.cli import app
from polygon_voice.cli.console import SafeConsole, visible_text
from polygon_voice.llm import ResponseCache
from polygon_voice.llm.reply import parse_completion, storable_body
from polygon_voice.model import (
    Action,
    CallerSaid,
    CallStarted,
    EndCall,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    Suite,
    ToolResult,
    UpdateState,
)
from polygon_voice.probes.definition import load_probes
from polygon_voice.report.files import write_run_files
from polygon_voice.report.terminal import conversation_view
from polygon_voice.runner import SuiteRunner
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.textsafe import REPLACEMENT, storable, storable_text, visible
from tests.cli.conftest import Polygon
from tests.llm.conftest import USER_HELLO, client_for
from tests.store.store_factories import make_run

# The characters that did harm, mixed into any other text hypothesis draws.
HOSTILE = [
    "\ud800",
    "\udfff",
    "\udc80",
    "\x00",
    "\x1b[2J",
    "\x1b[?1049h",
    "\x1b]0;pwned\x07",
    "\x1b]52;c;aGk=\x07",
    "\x9b31m",
    "\x07",
    "\r",
    "\u202e",
    "\U0001f600",
    "\ufffd",
]
hostile_text = st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=8)), max_size=8).map(
    "".join
)
# JSON-like values with hostile strings as keys and leaves.
hostile_values = st.recursive(
    st.one_of(hostile_text, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(hostile_text, inner, max_size=4)
    ),
    max_leaves=12,
)

UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# Rich's own styling (SGR), the only escape sequence a view may emit on a terminal.
RICH_STYLE = re.compile("\x1b\\[[0-9;]*m")
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


def raw_controls(output: str) -> list[str]:
    """Every control character in the output apart from Rich's own styling."""
    return RAW_CONTROL.findall(RICH_STYLE.sub("", output))


def unstorable_count(value: Any) -> int:
    return len(UNSTORABLE.findall(json.dumps(value, ensure_ascii=False)))


# --- the helpers ----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(hostile_text)
def test_storable_text_always_encodes_and_counts_each_replacement(text: str) -> None:
    cleaned, count = storable_text(text)
    cleaned.encode("utf-8")  # never raises
    assert "\x00" not in cleaned
    assert count == len(UNSTORABLE.findall(text))
    assert cleaned.count(REPLACEMENT) == text.count(REPLACEMENT) + count
    assert storable_text(cleaned) == (cleaned, 0)
    if count == 0:
        assert cleaned is text  # the common case allocates nothing


@settings(max_examples=200, deadline=None)
@given(hostile_values)
def test_storable_walks_keys_and_values(value: Any) -> None:
    cleaned, count = storable({"payload": value, "items": [value, (value,)]})
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")  # never raises
    assert unstorable_count(cleaned) == 0
    if count == 0:
        assert unstorable_count(value) == 0


class _Nested(BaseModel):
    name: str
    data: dict[str, Any]


def test_storable_rebuilds_models_only_when_something_changed() -> None:
    clean = _Nested(name="fine", data={"a": ["b"]})
    assert storable(clean) == (clean, 0)
    assert storable(clean)[0] is clean
    dirty = _Nested(name="x\ud800", data={"k\udc00": ["v\x00"]})
    cleaned, count = storable(dirty)
    assert count == 3
    assert cleaned.model_dump() == {"name": "x\ufffd", "data": {"k\ufffd": ["v\ufffd"]}}
    assert dirty.name == "x\ud800"  # the original is not touched


@settings(max_examples=300, deadline=None)
@given(hostile_text)
def test_visible_leaves_no_control_and_keeps_lines(text: str) -> None:
    shown = visible(text + "\n\tnext")
    assert RAW_CONTROL.findall(shown) == []
    assert shown.endswith("\n\tnext")
    assert visible(shown) == shown
    shown.encode("utf-8")  # a lone surrogate is shown, not written


def test_visible_names_each_control() -> None:
    assert visible("a\x1b]0;t\x07b") == "a\\x1b]0;t\\x07b"
    assert visible("\x9b\u202e\ud800\x00") == "\\x9b\\u202e\\ud800\\x00"
    assert visible("plain Ünïcode 😀") == "plain Ünïcode 😀"


def test_a_styled_text_keeps_its_styles_around_the_escapes() -> None:
    text = Text("red")
    text.append("\x1b[2J", style="bold")
    text.append(" tail", style="green")
    shown = visible_text(text)
    assert shown.plain == "red\\x1b[2J tail"

    def styled(style: str) -> str:
        return "".join(shown.plain[s.start : s.end] for s in shown.spans if str(s.style) == style)

    assert styled("bold") == "\\x1b[2J"
    assert styled("green") == " tail"


# --- a run with a hostile agent and suite ----------------------------------------------------


class HostileAgent:
    """Sends `BAD` everywhere it can: speech, state, tool arguments (keys too), hang-up."""

    bad = ""

    def __init__(self, context: object) -> None:
        self.context = context

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        bad = self.bad
        if isinstance(event, CallStarted):
            yield Say(text=f"Hello {bad}")
        elif isinstance(event, CallerSaid):
            yield UpdateState(field=f"f{bad}", value={f"k{bad}": [bad]}, version=1)
            yield PrepareToolCall(call_id="c1", tool="lookup", args={"q": bad, f"k{bad}": 1})
            yield SendToolCall(call_id="c1")
        elif isinstance(event, ToolResult):
            yield Say(text=f"Found {event.result}")
            yield EndCall(reason=f"bye {bad}")


def hostile_suite(bad: str) -> Suite:
    # Built in code, so nothing was cleaned at load: the engine and the store must do it.
    return Suite.model_validate(
        {
            "name": "hostile",
            "tools": {
                "lookup": {
                    "description": "look up",
                    "parameters": {"type": "object"},
                    "stub": {"kind": "fixed", "returns": {"answer": bad, bad: 1}},
                    "latency": 0.1,
                }
            },
            "scenarios": [
                {"id": "first", "script": [{"say": f"I need {bad} help"}]},
                {"id": "second", "script": [{"say": "hi"}]},
            ],
        }
    )


RUN_NUMBERS = itertools.count()


def run_hostile(tmp_path: Path, bad: str, run_id: str, url: str | None = None) -> Store:
    store = Store(url or f"sqlite:///{tmp_path / 'p.db'}")
    store.create_run(make_run(run_id))
    agent = type("Agent", (HostileAgent,), {"bad": bad})
    tally = SuiteRunner(hostile_suite(bad), as_factory(agent, "hostile"), store, run_id).run()
    assert tally.conversations == 2
    return store


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bad=hostile_text)
def test_every_call_of_a_hostile_run_is_stored_readable_and_flagged(
    tmp_path: Path, bad: str
) -> None:
    started = time.monotonic()
    run_id = f"r{next(RUN_NUMBERS)}"
    store = run_hostile(tmp_path, bad, run_id)
    stored = list(store.iter_conversations(run_id))
    assert [c.id for c in stored] == ["first", "second"]
    for result in stored:
        assert unstorable_count(result.model_dump(mode="json")) == 0
        assert result.end.reason.value == "agent_hangup"
        flagged = sum(e.data["replaced"] for e in result.trace if e.kind == "text_sanitised")
        assert (flagged > 0) == bool(UNSTORABLE.search(bad))
        speech = result.turns[0].text
        assert speech == "Hello " + storable_text(bad)[0]
    report, transcripts = write_run_files(store, store.get_run(run_id), tmp_path / run_id)
    assert json.loads(report.read_text())["summary"]["conversations"] == 2
    # One line per call, as a file is read line by line (U+2028 and U+0085 stay inside).
    with transcripts.open(encoding="utf-8") as lines:
        assert [json.loads(line)["id"] for line in lines] == ["first", "second"]
    assert time.monotonic() - started < 10


def test_postgres_keeps_every_call_of_a_hostile_run(tmp_path: Path, postgres_url: str) -> None:
    # PostgreSQL refuses NUL in text as well as lone surrogates.
    bad = "nul\x00 lone\ud800 \x1b]0;t\x07"
    store = run_hostile(tmp_path, bad, "pg", postgres_url)
    stored = list(store.iter_conversations("pg"))
    assert [c.id for c in stored] == ["first", "second"]
    assert stored[0].turns[0].text == "Hello nul\ufffd lone\ufffd \x1b]0;t\x07"
    assert stored[0].end.message == "bye nul\ufffd lone\ufffd \x1b]0;t\x07"


def test_the_conversation_view_shows_controls_as_escapes(tmp_path: Path) -> None:
    bad = "\x1b[2J\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x9b31m\ud800\r"
    store = run_hostile(tmp_path, bad, "view")
    result = store.get_conversation("view", "first")
    out = io.StringIO()
    SafeConsole(file=out, force_terminal=True, width=100).print(conversation_view(result))
    shown = out.getvalue()
    assert raw_controls(shown) == []
    assert "\\x1b]0;pwned\\x07" in shown  # BEL shown, not dropped
    assert "invalid character(s) from the agent" in shown  # the trace note


# --- the model's answers ---------------------------------------------------------------------


@pytest.fixture
def fake_llm() -> Iterator[list[FakeLLMServer]]:
    """Fake model servers on loopback, stopped after the test."""
    servers: list[FakeLLMServer] = []
    yield servers
    for server in servers:
        server.stop()


def start(servers: list[FakeLLMServer], rule: Rule) -> FakeLLMServer:
    server = FakeLLMServer([rule]).start()
    servers.append(server)
    return server


def test_a_model_answer_with_bad_code_points_is_read_and_counted() -> None:
    body = (
        b'{"choices": [{"message": {"content": "hi \\ud800 \xff there", "tool_calls": [{"id": '
        b'"t", "function": {"name": "f", "arguments": "{\\"k\\\\udc00\\": \\"v\\"}"}}]}}]}'
    )
    reply = parse_completion(body)
    assert reply.text == "hi \ufffd \ufffd there"
    assert reply.tool_calls[0].arguments == {"k\ufffd": "v"}
    assert reply.sanitised == 3  # the surrogate, the bad byte, the surrogate in the arguments
    replay = parse_completion(storable_body(body))
    assert (replay.text, replay.tool_calls[0].arguments) == (reply.text, {"k\ufffd": "v"})
    assert storable_body(b'{"choices": []}') == b'{"choices": []}'  # a clean body as is


async def test_the_cache_never_keeps_an_unstorable_answer(
    fake_llm: list[FakeLLMServer], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    raw = '{"choices": [{"message": {"content": "bad \\ud800 answer"}}]}'
    server = start(fake_llm, Rule(raw=raw))
    cache = ResponseCache(tmp_path)
    async with client_for(server, cache=cache) as client:
        first = await client.chat(USER_HELLO, seed=1)
        second = await client.chat(USER_HELLO, seed=1)
    assert first.text == second.text == "bad \ufffd answer"
    assert second.cached
    assert len(server.requests) == 1
    [(_, stored)] = list(cache.items())
    assert b"\\ud800" not in stored
    assert "replaced with U+FFFD" in caplog.text


async def test_a_request_carrying_a_lone_surrogate_is_sent(
    fake_llm: list[FakeLLMServer],
) -> None:
    server = start(fake_llm, Rule(text="fine"))
    async with client_for(server) as client:
        reply = await client.chat([{"role": "user", "content": "said \ud800 this"}])
    assert reply.text == "fine"


# --- every terminal view, end to end ---------------------------------------------------------

AGENT_FILE = """
from polygon_voice.model import CallStarted, CallerSaid, EndCall, Say

BAD = "\\x1b[2J\\x1b[?1049h\\x1b]0;pwned\\x07\\x1b]52;c;aGk=\\x07\\x9b31m\\ud800\\u202e"


class Hostile:
    def __init__(self, context):
        self.context = context

    async def respond(self, event):
        if isinstance(event, CallStarted):
            yield Say(text="Hello " + BAD)
        elif isinstance(event, CallerSaid):
            yield Say(text="Bye " + BAD)
            yield EndCall(reason="done " + BAD)
"""

SUITE_FILE = r"""
name: "hostile \e]0;title\a \ud800"
description: "\e[2J"
agent: agent.py:Hostile
scenarios:
  - id: one
    description: "\e]52;c;aGk=\a"
    script:
      - say: "I need \ud800 help \e]52;c;aGk=\a \x9b31m"
  - id: two
    script:
      - say: hi
"""

PROMPT_FILE = (
    "You are a support agent \x1b[2J for orders.\x1b]0;pwned\x07\n"
    "Always confirm the order number. Never promise a refund \x9b31m.\n"
)


def test_no_view_lets_a_control_sequence_through(
    polygon: Polygon, caplog: pytest.LogCaptureFixture
) -> None:
    (polygon.workdir / "agent.py").write_text(AGENT_FILE)
    suite = polygon.workdir / "suite.yaml"
    suite.write_text(SUITE_FILE)
    outputs: dict[str, tuple[int, str, str]] = {}
    outputs["run"] = polygon("run", str(suite), "--out", "first")
    outputs["run again"] = polygon("run", str(suite), "--out", "second")
    runs = [
        json.loads((polygon.workdir / d / "report.json").read_text()) for d in ("first", "second")
    ]
    first, second = (r["run_id"] for r in runs)
    outputs["runs"] = polygon("runs")
    outputs["show"] = polygon("show", first)
    outputs["show -c"] = polygon("show", first, "--conversation", "one")
    outputs["compare"] = polygon("compare", first, second)
    prompt = polygon.workdir / "prompt.md"
    prompt.write_text(PROMPT_FILE)
    lint = polygon.runner.invoke(
        app, ["lint", str(prompt), "--max-tier", "1"]
    )  # lint opens no database
    outputs["lint"] = (lint.exit_code, lint.stdout, lint.stderr)
    outputs["personas generate"] = polygon("personas", "generate", "--prompt", str(prompt))
    outputs["personas list"] = polygon("personas", "list")
    for name, (code, out, err) in outputs.items():
        assert code in (0, 1), f"{name}: {err}"
        assert raw_controls(out + err) == [], name
    assert all(r["summary"]["conversations"] == 2 for r in runs)
    assert "\\x1b]0;pwned\\x07" in outputs["show -c"][1]
    assert "\\x1b[2J" in outputs["lint"][1]
    assert "invalid code point(s)" in caplog.text  # the suite's surrogate, said at load


def test_a_probe_file_escaping_a_lone_surrogate_loads_with_it_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    probes = tmp_path / "probes.yaml"
    probes.write_text(
        'probes:\n  - id: explains\n    question: "Did the agent \\ud800 explain?"\n'
        "    polarity: desired\n"
    )
    [probe] = load_probes(probes)
    assert probe.question == "Did the agent \ufffd explain?"
    assert f"{probes}: 1 invalid code point(s)" in caplog.text


class _HostileHttpAgent(http.server.BaseHTTPRequestHandler):
    """An agent service whose every answer escapes a lone surrogate and an OSC sequence."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        text = "Hello \\ud800 \\u001b]0;pwned\\u0007"
        body = f'{{"actions": [{{"kind": "say", "text": "{text}"}}, {{"kind": "end_call"}}]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: object) -> None:
        pass


def test_an_http_agent_sending_a_lone_surrogate_is_stored(polygon: Polygon) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HostileHttpAgent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        suite = polygon.workdir / "suite.yaml"
        suite.write_text("name: http\nscenarios:\n  - id: one\n    script: [{say: hi}]\n")
        url = f"http://127.0.0.1:{server.server_address[1]}/agent"
        code, out, err = polygon("run", str(suite), "--agent", url, "--out", "out")
    finally:
        server.shutdown()
        server.server_close()
    assert code in (0, 1), err
    [call] = [json.loads(line) for line in (polygon.workdir / "out" / "transcripts.jsonl").open()]
    assert call["turns"][0]["text"] == "Hello \ufffd \x1b]0;pwned\x07"
    assert [e["data"]["where"] for e in call["trace"] if e["kind"] == "text_sanitised"] == ["say"]
    assert raw_controls(out + err) == []
