"""The LiveKit Agents adapter against the real framework and the fake LLM server.

The example agents in examples/livekit_agent/ are driven unchanged: the same scripted model
answers both, and only the agent's tool settings differ, so the verdicts below are the
adapter's and the framework's doing, not the script's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "livekit.agents", reason="needs the livekit extra: pip install -e '.[test,livekit]'"
)

from polygon_voice import InputError, Suite, load_suite, open_store, run_suite
from polygon_voice.agents import AgentLoadError, resolve_agent
from polygon_voice.model import Scenario
from polygon_voice.testing import FakeLLMServer, Rule, load_script
from polygon_voice.testing.script import ScriptedRequest
from tests.cli.conftest import Polygon

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "livekit_agent"
# The interruption and correction cases of the three-layer suite that script a change while
# an update is being built or already runs: where a stale call must be stopped.
CASES = ("corr-04", "int-03", "int-04", "int-06")


class Step(Rule):
    """A rule that also looks at the last message: the caller's line, or a tool's answer."""

    # "user", "tool" (any tool's answer), or the name of the tool whose answer is the last
    # message (known when the request still holds the call that it answers)
    after: str = "user"
    result_has: str | None = None  # a substring of that answer

    def matches(self, request: ScriptedRequest) -> bool:
        messages = request.body.get("messages") or []
        last = messages[-1] if messages else {}
        if self.after == "user":
            return last.get("role") == "user" and super().matches(request)
        if last.get("role") != "tool":
            return False
        if self.after != "tool" and _called(messages, last) != self.after:
            return False
        has = self.result_has
        return (has is None or has in str(last.get("content"))) and super().matches(request)


def _called(messages: list[dict[str, Any]], answer: dict[str, Any]) -> str | None:
    for message in messages:
        for call in message.get("tool_calls") or ():
            if call.get("id") == answer.get("tool_call_id"):
                return str(call["function"]["name"])
    return None


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "arguments": args}


def order_line_model() -> list[Rule]:
    """What a sensible model answers in the scripted cases: each request as the caller
    words it, the corrected one when they correct it, then a read-back and a confirmation."""
    update = "update_order"
    rules: list[Rule] = [
        # Corrections first: their lines are the most specific.
        Step(contains="I meant order 5599", tool_calls=[call(update, order_id="5599", quantity=2)]),
        Step(contains="make it 5 items", tool_calls=[call(update, order_id="5590", quantity=5)]),
        Step(
            contains="2026-12-11",
            tool_calls=[call(update, order_id="4281", delivery_date="2026-12-11")],
        ),
        Step(contains="Hold on, 6 items", tool_calls=[call(update, order_id="7130", quantity=6)]),
        Step(contains="5590 to 2 items", tool_calls=[call(update, order_id="5590", quantity=2)]),
        Step(contains="5590 to 3 items", tool_calls=[call(update, order_id="5590", quantity=3)]),
        Step(
            contains="4281 should come",
            tool_calls=[call(update, order_id="4281", delivery_date="2026-12-09")],
        ),
        Step(contains="7130 to 5 items", tool_calls=[call(update, order_id="7130", quantity=5)]),
        Step(contains="bye", text="You're welcome. Goodbye!"),
    ]
    confirmations = {
        "5599": "Done: order 5599 now has 2 items.",
        "5590": "Done: order 5590 now has 5 items.",
        "4281": "Done: order 4281 now arrives on 2026-12-11.",
        "7130": "Done: order 7130 now has 6 items.",
    }
    for order, confirmation in confirmations.items():
        has = f'"order_id": "{order}"'
        rules.append(
            Step(after=update, result_has=has, tool_calls=[call("lookup_order", order_id=order)])
        )
        rules.append(Step(after="lookup_order", result_has=has, text=confirmation))
    return rules


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The fake server as the agents' OpenAI endpoint (the plugin reads the variables)."""
    with FakeLLMServer(order_line_model()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the examples folder as the current folder, as a user runs them."""
    folder = tmp_path / "livekit_agent"
    shutil.copytree(EXAMPLES, folder)
    monkeypatch.chdir(folder)
    return folder


def test_a_stale_call_the_framework_keeps_running_is_found_and_the_robust_agent_passes(
    model: FakeLLMServer, examples: Path
) -> None:
    robust = run_suite("three-layer", agent="livekit:robust.py:Assistant", scenarios=CASES,
                       db=str(examples / "r.db"), write_files=False)  # fmt: skip
    flawed = run_suite("three-layer", agent="livekit:flawed.py:Assistant", scenarios=CASES,
                       db=str(examples / "r.db"), write_files=False)  # fmt: skip

    assert [(c.id, c.verdict, c.root_cause) for c in robust.calls] == [
        (case, "pass", None) for case in CASES
    ]
    assert robust.gate_passed
    causes = {c.id: c.root_cause for c in flawed.calls}
    # A change after the update was sent: LiveKit runs both calls, the stale one writes.
    assert causes["int-03"] == causes["int-04"] == "inflight_call_not_cancelled"
    # A change while it was being built: the framework still runs the old call, so it goes
    # out after the correction was heard.
    assert causes["corr-04"] in ("stale_tool_args", "inflight_call_not_cancelled")
    assert causes["int-06"] in ("stale_tool_args", "inflight_call_not_cancelled")
    assert all(not c.axes["stale_write_prevented"] for c in flawed.calls)
    assert not flawed.gate_passed


def test_the_record_holds_the_calls_the_cancellation_and_the_confirmation(
    model: FakeLLMServer, examples: Path
) -> None:
    result = run_suite("three-layer", agent="livekit:robust.py:Assistant", scenarios=("int-03",),
                       db=str(examples / "r.db"), write_files=False)  # fmt: skip
    store = open_store(str(examples / "r.db"))
    try:
        conversation = store.get_conversation(result.run_id, "int-03")
        config = store.get_run(result.run_id).config
    finally:
        store.close()
    assert config["agent_kind"] == "livekit"
    assert config["livekit_agents_version"].startswith("1.8.")
    calls = {c.call_id: (c.tool, c.args, c.status) for c in conversation.tool_calls}
    assert calls["lk-1"] == ("update_order", {"order_id": "5590", "quantity": 3}, "cancelled")
    assert calls["lk-2"][:2] == ("update_order", {"order_id": "5590", "quantity": 5})
    assert calls["lk-3"][0] == "lookup_order"
    kinds = [(e.source, e.kind) for e in conversation.trace]
    assert ("agent", "cancel_tool_call") in kinds
    # The call's arguments are reported as the working state, versioned, before each call.
    updates = [(u.field, u.value, u.version) for u in conversation.state_updates]
    assert updates == [("order_id", "5590", 1), ("quantity", 3, 1), ("quantity", 5, 2)]
    agent_turns = [t.text for t in conversation.turns if t.speaker == "agent"]
    assert agent_turns[-2:] == ["Done: order 5590 now has 5 items.", "You're welcome. Goodbye!"]
    # The model saw the stub's answer as JSON text, as a tool message.
    tool_messages = [m for r in model.requests for m in r.body["messages"] if m["role"] == "tool"]
    assert json.loads(tool_messages[-1]["content"])["quantity"] == 5


def test_the_command_runs_it_and_fails_the_flawed_agent(
    model: FakeLLMServer, examples: Path, polygon: Polygon
) -> None:
    polygon.workdir = examples
    code, out, err = polygon(
        "run", "three-layer", "--agent", "livekit:flawed.py:Assistant",
        "--scenario", "int-03", "--json", "--fail-on", "fail",
    )  # fmt: skip
    assert code == 1, err
    (case,) = json.loads(out)["calls"]
    assert (case["id"], case["verdict"], case["root_cause"]) == (
        "int-03",
        "fail",
        "inflight_call_not_cancelled",
    )


GREETER = """
from livekit.agents import Agent
from livekit.plugins import openai


class Greeter(Agent):
    def __init__(self):
        super().__init__(instructions="Greet. polygon-role: agent", llm=openai.LLM(model="m"))

    async def on_enter(self):
        self.session.generate_reply(instructions="Greet the caller.")
"""


def write(folder: Path, name: str, source: str) -> None:
    (folder / name).write_text(textwrap.dedent(source), encoding="utf-8")


def echo_suite(**settings: Any) -> Suite:
    script = [{"say": "Where is my order?"}]
    return Suite.model_validate(
        {"name": "lk", "settings": settings, "scenarios": [{"id": "one", "script": script}]}
    )


def test_what_the_agent_says_on_entering_is_its_first_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [Rule(contains="order", text="It ships tomorrow."), Rule(text="Hello, order line!")]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.chdir(tmp_path)
        write(tmp_path, "greeter.py", GREETER)
        result = run_suite(echo_suite(), agent="livekit:greeter.py:Greeter",
                           db=str(tmp_path / "r.db"), write_files=False)  # fmt: skip
        store = open_store(str(tmp_path / "r.db"))
        conversation = store.get_conversation(result.run_id, "one")
        store.close()
    assert conversation is not None
    spoken = [(t.speaker, t.text) for t in conversation.turns]
    assert spoken == [
        ("agent", "Hello, order line!"),
        ("caller", "Where is my order?"),
        ("agent", "It ships tomorrow."),
    ]
    assert result.calls[0].end_reason == "caller_hangup"


def test_a_model_that_keeps_failing_is_the_agents_infrastructure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer([Rule(contains="order", error=503), Rule(text="Hello!")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.chdir(tmp_path)
        write(tmp_path, "greeter.py", GREETER)
        suite = echo_suite(agent_turn_timeout=60)  # LiveKit's own retries take a few seconds
        result = run_suite(suite, agent="livekit:greeter.py:Greeter",
                           db=str(tmp_path / "r.db"), write_files=False)  # fmt: skip
    (only,) = result.calls
    assert only.end_reason == "error"
    assert only.end_message.startswith("agent raised InfrastructureError: LiveKitModelError")
    assert result.infrastructure_failed


def test_load_errors_name_the_agent_and_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("POLYGON_AGENT_MODEL", raising=False)
    write(tmp_path, "bots.py", """
        from livekit.agents import Agent

        class NoModel(Agent):
            def __init__(self):
                super().__init__(instructions="hi")

        class NotAnAgent:
            pass
    """)  # fmt: skip

    def error(spec: str) -> str:
        with pytest.raises(AgentLoadError) as caught:
            resolve_agent(spec, cwd=tmp_path)
        return str(caught.value)

    assert "has no llm of its own" in error("livekit:bots.py:NoModel")
    assert "POLYGON_AGENT_MODEL" in error("livekit:bots.py:NoModel")
    assert "not a livekit.agents.Agent" in error("livekit:bots.py:NotAnAgent")
    assert "did you mean 'NoModel'" in error("livekit:bots.py:NoModle")
    assert "name the agent class after a colon" in error("livekit:bots.py")
    with pytest.raises(InputError, match=re.escape("livekit:bots.py:NotAnAgent")):
        run_suite(echo_suite(), agent="livekit:bots.py:NotAnAgent", db=str(tmp_path / "r.db"))


def test_a_missing_extra_is_named_with_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import polygon_voice.agents.livekit as adapter

    def not_installed(name: str) -> str:
        raise adapter.PackageNotFoundError(name)

    monkeypatch.setattr(adapter, "version", not_installed)
    with pytest.raises(AgentLoadError, match=r"pip install 'polygon-voice\[livekit\]'"):
        resolve_agent("livekit:bot.py:Assistant")
    monkeypatch.setattr(adapter, "version", lambda name: "2.0.1")
    with pytest.raises(AgentLoadError, match=re.escape("livekit-agents 2.0.1 is installed")):
        resolve_agent("livekit:bot.py:Assistant")


def test_an_agent_without_a_model_gets_the_agent_role_of_polygon(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "bare.py", """
        from livekit.agents import Agent

        class Bare(Agent):
            def __init__(self):
                super().__init__(instructions="You help.")
    """)  # fmt: skip
    with FakeLLMServer([Rule(text="Happy to help.")]) as server:
        monkeypatch.setenv("POLYGON_AGENT_MODEL", "fake-model")
        monkeypatch.setenv("POLYGON_AGENT_BASE_URL", server.base_url)
        monkeypatch.chdir(tmp_path)
        result = run_suite(echo_suite(), agent="livekit:bare.py:Bare",
                           db=str(tmp_path / "r.db"), write_files=False)  # fmt: skip
        models = {r.body["model"] for r in server.requests}
    assert models == {"fake-model"}
    assert result.calls[0].end_reason == "caller_hangup"


PYTEST_FILE = """
import pytest

from polygon_voice.pytest_plugin import assert_no_root_cause, assert_passed


@pytest.mark.polygon(suite="three-layer", agent="livekit:robust.py:Assistant",
                     scenarios=["int-03", "int-04"])
def test_robust(polygon_result):
    assert_passed(polygon_result)


@pytest.mark.polygon(suite="three-layer", agent="livekit:flawed.py:Assistant",
                     scenarios=["int-03"])
def test_flawed(polygon_result):
    assert_no_root_cause(polygon_result, "inflight_call_not_cancelled")
"""


def test_the_pytest_plugin_tests_a_livekit_agent_one_test_per_scenario(
    model: FakeLLMServer, examples: Path
) -> None:
    (examples / "test_calls.py").write_text(PYTEST_FILE, encoding="utf-8")
    plugin = [] if _plugin_installed() else ["-p", "polygon_voice.pytest_plugin"]
    command = [sys.executable, "-m", "pytest", *plugin, "-p", "no:cacheprovider", "-q",
               "-rf", "test_calls.py"]  # fmt: skip
    env = {**os.environ, "POLYGON_DB": str(examples / "pytest.db")}
    done = subprocess.run(
        command, cwd=examples, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    assert "FAILED test_calls.py::test_flawed[int-03]" in done.stdout
    assert "inflight_call_not_cancelled" in done.stdout


def _plugin_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "polygon" for ep in entry_points(group="pytest11"))


def test_the_docs_agent_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = (EXAMPLES.parents[1] / "docs" / "livekit.md").read_text(encoding="utf-8")
    source = docs.split("```python\n", 1)[1].split("```", 1)[0]
    (tmp_path / "agent.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # It has no lookup_order: LiveKit tells the model so, and the model says something else.
    with FakeLLMServer([*order_line_model(), Rule(text="Anything else?")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        db = str(tmp_path / "r.db")
        result = run_suite("three-layer", agent="livekit:agent.py:Assistant",
                           scenarios=("int-03",), db=db, write_files=False)  # fmt: skip
    store = open_store(str(tmp_path / "r.db"))
    try:
        conversation = store.get_conversation(result.run_id, "int-03")
    finally:
        store.close()
    # The body (orders_api) never ran: the stub wrote the backend, both calls (LiveKit's
    # default keeps the first one running).
    written = [(w.call_id, w.record, w.field, w.new) for w in conversation.backend_writes]
    assert written == [("lk-1", "5590", "quantity", 3), ("lk-2", "5590", "quantity", 5)]
    assert result.calls[0].root_cause == "inflight_call_not_cancelled"


STUBBORN = """
from livekit.agents import Agent
from livekit.plugins import openai


class Stubborn(Agent):
    def __init__(self):
        super().__init__(instructions="You explain.", llm=openai.LLM(model="m"),
                         allow_interruptions=ALLOW)
"""


@pytest.mark.parametrize("allow", [True, False])
def test_a_line_said_over_the_agent_is_answered_next_whether_it_allows_interruptions(
    allow: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In text mode a reply reaches Polygon once LiveKit has forwarded it whole: its speech is
    # over when the caller cuts in, so `allow_interruptions=False` holds nothing back.
    write(tmp_path, "stubborn.py", STUBBORN.replace("ALLOW", str(allow)))
    suite = Suite.model_validate({"name": "lk", "scenarios": [{"id": "one", "script": [
        {"say": "What is your return policy?"},
        {"barge_in": {"at": "mid_speech", "say": "Stop, I just want a refund."}},
    ]}]})  # fmt: skip
    rules = [
        Rule(contains="refund", text="Sure, which order?"),
        Rule(contains="policy", text="Our policy allows returns within thirty days of delivery."),
    ]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.chdir(tmp_path)
        result = run_suite(suite, agent="livekit:stubborn.py:Stubborn",
                           db=str(tmp_path / "r.db"), write_files=False)  # fmt: skip
        answering = server.requests[-1].body["messages"]
    store = open_store(str(tmp_path / "r.db"))
    try:
        conversation = store.get_conversation(result.run_id, "one")
    finally:
        store.close()
    turns = [(t.speaker, t.text, t.interrupted) for t in conversation.turns]
    assert turns[1] == ("agent", rules[1].text, True)  # Polygon's turn is the one cut off
    # LiveKit's history keeps what the caller heard of it, as after a cut-off in a voice call.
    heard = conversation.turns[1].heard
    assert heard == "Our policy allows returns"
    assert {"role": "assistant", "content": heard} in answering
    assert turns[2:] == [("caller", "Stop, I just want a refund.", False),
                         ("agent", "Sure, which order?", False)]  # fmt: skip


class _Refusing:
    """A session whose current speech allows no interruption, as LiveKit's refuses."""

    def __init__(self) -> None:
        self.replies: list[str] = []

    def interrupt(self) -> None:
        raise RuntimeError("speech does not allow interruptions")

    def generate_reply(self, user_input: str) -> None:
        self.replies.append(user_input)


class _Running:
    def done(self) -> bool:
        return False


def test_a_line_over_a_speech_that_refuses_interruption_is_held_not_lost() -> None:
    from polygon_voice.agents.base import AgentContext
    from polygon_voice.agents.livekit import LiveKitAgent

    agent = LiveKitAgent(lambda: None, AgentContext("c", "s", "en", 1), lambda: None)
    refusing = _Refusing()
    agent._session, agent._run = refusing, _Running()
    agent._caller_line("Stop, I want a refund.")
    assert agent._held == ["Stop, I want a refund."]
    assert refusing.replies == []  # not answered over the speech: after it (respond)


HANGING_UP = """
from livekit.agents import Agent, RunContext, function_tool
from livekit.plugins import openai


class Polite(Agent):
    def __init__(self):
        super().__init__(instructions="Say bye and hang up.", llm=openai.LLM(model="m"))

    @function_tool
    async def end_call(self, context: RunContext) -> None:
        \"\"\"Hang up once the caller is done.\"\"\"
        context.session.shutdown()
"""


def test_a_tool_the_suite_does_not_declare_runs_as_written_and_a_closed_session_hangs_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "polite.py", HANGING_UP)
    rules = [Rule(text="Goodbye!", tool_calls=[{"name": "end_call", "arguments": {}}])]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.chdir(tmp_path)
        result = run_suite(echo_suite(), agent="livekit:polite.py:Polite",
                           db=str(tmp_path / "r.db"), write_files=False)  # fmt: skip
    (only,) = result.calls
    assert (only.end_reason, only.end_message) == ("agent_hangup", "user_initiated")
    assert only.tool_calls == 0  # end_call is the agent's own, not a stub


def test_nothing_of_livekit_is_imported_until_a_livekit_agent_is_named() -> None:
    probe = (
        "import sys, polygon_voice, polygon_voice.agents.registry, polygon_voice.agents.livekit\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'livekit'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_the_same_answers_play_the_same_calls(model: FakeLLMServer, examples: Path) -> None:
    def played() -> list[str]:
        result = run_suite("three-layer", agent="livekit:flawed.py:Assistant", scenarios=CASES,
                           db=str(examples / "r.db"), write_files=False, concurrency=4)  # fmt: skip
        store = open_store(str(examples / "r.db"))
        try:
            return [c.model_dump_json() for c in store.iter_conversations(result.run_id)]
        finally:
            store.close()

    assert played() == played()


@pytest.mark.parametrize(("agent", "cause"), [("flawed", "inflight_call_not_cancelled"),
                                              ("robust", None)])  # fmt: skip
def test_the_examples_offline_model_plays_as_its_readme_says(
    agent: str, cause: str | None, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLLMServer(load_script(examples / "model.yaml")) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite("three-layer", agent=f"livekit:{agent}.py:Assistant",
                           scenarios=("int-03",), concurrency=1, db=str(examples / "r.db"),
                           write_files=False)  # fmt: skip
    assert [c.root_cause for c in result.calls] == [cause]


def test_a_call_that_ends_with_a_served_call_still_out_lets_the_run_end(
    examples: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The model's answer to the barge-in takes longer than the turn limit: the call ends with
    # the first update still running in LiveKit (not cancellable), and the run must still end.
    loaded = load_suite("three-layer")
    settings = loaded.suite.settings.model_copy(update={"agent_turn_timeout": 1.0})
    cases = [s for s in loaded.suite.scenarios if s.id == "int-03"]
    suite = loaded.suite.model_copy(update={"settings": settings, "scenarios": cases})
    rules = [
        Rule(contains="make it 5", latency=4, text="Let me see."),
        Step(contains="5590 to 3", tool_calls=[call("update_order", order_id="5590", quantity=3)]),
    ]
    started = time.monotonic()
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite(suite, agent="livekit:flawed.py:Assistant", db=str(examples / "r.db"),
                           write_files=False)  # fmt: skip
    (only,) = result.calls
    assert only.end_reason == "error"
    assert "within 1s" in only.end_message
    assert time.monotonic() - started < 30
    # Closed at once, not after the close's time limit ran out.
    assert not [r for r in caplog.records if "closing a LiveKit session failed" in r.message]


def test_calls_the_model_makes_together_go_out_in_one_response(
    examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_suite("three-layer")
    scenario = {"id": "two", "script": [{"say": "Where are orders 5590 and 5599?"}]}
    suite = loaded.suite.model_copy(update={"scenarios": [Scenario.model_validate(scenario)]})
    both = [call("lookup_order", order_id="5590"), call("lookup_order", order_id="5599")]
    rules = [
        Step(contains="5590 and 5599", tool_calls=both),
        Step(after="lookup_order", text="Both are processing."),
    ]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite(suite, agent="livekit:robust.py:Assistant", db=str(examples / "r.db"),
                           write_files=False)  # fmt: skip
        tool_messages = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    store = open_store(str(examples / "r.db"))
    try:
        conversation = store.get_conversation(result.run_id, "two")
    finally:
        store.close()
    kinds = [e.kind for e in conversation.trace if e.source in ("agent", "caller", "tools")]
    first = kinds.index("caller_said")
    assert kinds[first + 1 : first + 6] == [
        "update_state", "prepare_tool_call", "send_tool_call", "update_state", "prepare_tool_call",
    ]  # fmt: skip
    assert kinds.count("send_tool_call") == 2
    # LiveKit waited for both answers and gave the model both.
    assert len(tool_messages) == 2
    assert conversation.turns[-1].text == "Both are processing."


HANDOFF = '''
from livekit.agents import Agent, function_tool
from livekit.plugins import openai


class Billing(Agent):
    def __init__(self):
        super().__init__(instructions="You book refunds.", llm=openai.LLM(model="m"))

    @function_tool
    async def issue_refund(self, order_id: str, amount: int) -> dict:
        """Refund an amount in euros on an order."""
        raise RuntimeError("the real backend was called")


class FrontDesk(Agent):
    def __init__(self):
        super().__init__(instructions="You route calls.", llm=openai.LLM(model="m"))

    @function_tool
    async def transfer_to_billing(self):
        """Hand refunds over to billing."""
        return Billing(), "Transferring you to billing."
'''


def test_the_agent_handed_off_to_is_served_by_the_stubs_too(
    examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(examples, "desk.py", HANDOFF)
    loaded = load_suite("three-layer")
    lines = ["Please refund 40 euros on order 4821.", "Yes: 40 euros on order 4821."]
    scenario = {"id": "refund", "script": [{"say": line} for line in lines]}
    suite = loaded.suite.model_copy(update={"scenarios": [Scenario.model_validate(scenario)]})
    rules = [
        Step(contains="Please refund 40", tool_calls=[call("transfer_to_billing")]),
        # The desk's last word after the handoff (LiveKit asks it with tool_choice "none").
        Step(after="transfer_to_billing", text="Billing will take it from here."),
        Step(
            contains="Yes: 40 euros", tool_calls=[call("issue_refund", order_id="4821", amount=40)]
        ),
        Step(after="issue_refund", text="Your refund of 40 euros is booked."),
    ]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite(suite, agent="livekit:desk.py:FrontDesk", db=str(examples / "r.db"),
                           write_files=False)  # fmt: skip
    store = open_store(str(examples / "r.db"))
    try:
        conversation = store.get_conversation(result.run_id, "refund")
    finally:
        store.close()
    assert [(c.tool, c.args, c.status) for c in conversation.tool_calls] == [
        ("issue_refund", {"order_id": "4821", "amount": 40}, "completed")
    ]
    assert {w.collection for w in conversation.backend_writes} == {"refunds"}
    assert conversation.turns[-1].text == "Your refund of 40 euros is booked."


def before_and_over_speech_model() -> list[Rule]:
    """A correction in the request itself, one over the read-back, and noise over it."""
    update = "update_order"
    rules: list[Rule] = [
        Step(contains="I mean 4281", tool_calls=[call(update, order_id="4281", quantity=6)]),
        Step(contains="2026-12-20", text="So order 5599 should arrive on 2026-12-20, right?"),
        Step(contains="make that 2026-12-22",
             tool_calls=[call(update, order_id="5599", delivery_date="2026-12-22")]),
        Step(contains="5590 to 3 items", text="Order 5590 to 3 items: shall I go ahead?"),
        Step(contains="go ahead", tool_calls=[call(update, order_id="5590", quantity=3)]),
        Step(contains="bye", text="You're welcome. Goodbye!"),
    ]  # fmt: skip
    confirmations = {
        "4281": "Done: order 4281 now has 6 items.",
        "5599": "Done: order 5599 now arrives on 2026-12-22.",
        "5590": "Done: order 5590 now has 3 items.",
    }
    for order, confirmation in confirmations.items():
        has = f'"order_id": "{order}"'
        rules.append(
            Step(after=update, result_has=has, tool_calls=[call("lookup_order", order_id=order)])
        )
        rules.append(Step(after="lookup_order", result_has=has, text=confirmation))
    return rules


@pytest.mark.parametrize("agent", ["robust", "flawed"])
def test_corrections_before_a_call_and_noise_over_the_read_back_pass_either_agent(
    agent: str, examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No call is running when the change comes, so the tool settings make no difference; and
    # the noise never reaches the session (a text session hears no audio).
    with FakeLLMServer(before_and_over_speech_model()) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite("three-layer", agent=f"livekit:{agent}.py:Assistant",
                           scenarios=("corr-01", "corr-03", "int-01"), db=str(examples / "r.db"),
                           write_files=False)  # fmt: skip
    assert [(c.id, c.verdict, c.root_cause) for c in result.calls] == [
        ("corr-01", "pass", None),
        ("corr-03", "pass", None),
        ("int-01", "pass", None),
    ]


def test_every_case_of_the_suite_plays_to_an_end_without_an_adapter_error(
    examples: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model that knows four cases and answers the rest with a question: every barge-in point,
    # fault and ending of the suite is met, and none may end a call in error or hang the run.
    with FakeLLMServer([*order_line_model(), Rule(text="Could you say that again?")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        result = run_suite("three-layer", agent="livekit:robust.py:Assistant",
                           db=str(examples / "r.db"), write_files=False)  # fmt: skip
    assert len(result.calls) == 30
    assert [c.id for c in result.calls if c.end_reason == "error"] == []
    assert {c.id for c in result.calls if c.verdict == "pass"} >= set(CASES)
