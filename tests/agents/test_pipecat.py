"""The Pipecat adapter against the real `pipecat-ai` and the fake LLM server: the example bots
unchanged, their events mapped onto actions, barge-ins, loading and failures."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pipecat", reason="the pipecat extra is not installed: pip install 'polygon-voice[pipecat]'"
)

from polygon_voice import RunOptions, run_suite
from polygon_voice.agents import AgentContext, AgentLoadError, resolve_agent
from polygon_voice.agents.pipecat import PipecatAgentFactory
from polygon_voice.api import load_suite
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    CancelToolCall,
    Event,
    InterruptPoint,
    PrepareToolCall,
    Say,
    SendToolCall,
    ToolResult,
    UpdateState,
)
from polygon_voice.testing import FakeLLMServer, Rule, ToolCallSpec, load_script
from tests.cli.conftest import ROOT, Polygon

EXAMPLE = ROOT / "examples" / "pipecat_bot"
ROBUST = f"pipecat:{EXAMPLE / 'bot.py'}:run_bot"
FLAWED = f"pipecat:{EXAMPLE / 'flawed_bot.py'}:run_bot"
SCRIPT = EXAMPLE / "fake_llm.yaml"


@pytest.fixture
def fake_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The example's scripted model, where the bot's OpenAI client looks (its environment)."""
    with FakeLLMServer(load_script(SCRIPT)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield server


def three_layer(agent: str, scenarios: tuple[str, ...], db: Path) -> dict[str, Any]:
    options = RunOptions(agent=agent, scenarios=scenarios, write_files=False, concurrency=4)
    result = run_suite("three-layer", options, db=str(db / "results.db"))
    return {call.scenario: call for call in result.calls}


CASES = ("corr-*", "int-*")  # the three-layer suite's corrections and interruptions


def test_the_robust_bot_passes_corrections_and_interruptions(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    # Every barge-in point: before any call, during the call's preparation, after it was
    # sent, over the read-back (mid speech), noise, and "no, don't" (docs/pipecat.md).
    calls = three_layer(ROBUST, CASES, tmp_path)
    assert len(calls) == 20
    assert {sid: (c.verdict, c.root_cause) for sid, c in calls.items()} == dict.fromkeys(
        calls, ("pass", None)
    )
    assert all(all(c.axes.values()) for c in calls.values())


def test_the_flawed_bot_shows_the_root_cause_of_its_flaw(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    calls = three_layer(FLAWED, CASES, tmp_path)
    causes = {sid: c.root_cause for sid, c in calls.items() if c.verdict != "pass"}
    # A write running when the caller corrected it is never cancelled ...
    assert {s for s, cause in causes.items() if cause == "inflight_call_not_cancelled"} == {
        "int-03",
        "int-04",
        "int-05",
    }
    # ... one held up between preparing and sending goes out after the correction ...
    held = {f"corr-{n:02d}" for n in range(4, 11)} | {"int-06", "int-07", "int-08"}
    assert {s for s, cause in causes.items() if cause == "stale_tool_args"} == held
    assert len(causes) == 13
    assert calls["int-03"].axes["stale_write_prevented"] is False
    # ... and where nothing runs when the caller changes the request, the flaw does not show.
    assert {s for s, c in calls.items() if c.verdict == "pass"} == {
        "corr-01", "corr-02", "corr-03", "int-01", "int-02", "int-09", "int-10"
    }  # fmt: skip


def test_from_the_command_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    polygon = Polygon(tmp_path)
    code, out, err = polygon(
        "run", "three-layer", "--agent", FLAWED, "--scenario", "int-04", "--fail-on", "fail"
    )
    assert code == 1, out + err
    assert "inflight_call_not_cancelled" in out
    code, out, err = polygon(
        "run", "three-layer", "--agent", ROBUST, "--scenario", "int-04", "--fail-on", "fail"
    )
    assert code == 0, out + err


# --- the mapping, event by event -------------------------------------------------------------

ORDER_ID = {"type": "string"}


def context(tools: tuple[str, ...] = ("lookup_order", "update_order")) -> AgentContext:
    suite = load_suite("three-layer").suite
    return AgentContext(
        conversation_id="c1",
        scenario_id="s1",
        language="en",
        seed=1,
        tools={name: suite.tools[name] for name in tools},
    )


async def answer(agent: Any, event: Event) -> list[Action]:
    return [action async for action in agent.respond(event)]


async def first(actions: AsyncIterator[Action], n: int) -> list[Action]:
    """The first `n` actions, then the generator is closed, as the engine does at a barge-in."""
    taken = []
    async for action in actions:
        taken.append(action)
        if len(taken) == n:
            break
    await actions.aclose()  # type: ignore[attr-defined]
    return taken


RULES = [
    Rule(turn=0, text="Hello, order service."),
    Rule(regex="bye", text="Goodbye!"),
    Rule(regex="make it 5", last_role="user", tool_calls=[
        ToolCallSpec(name="update_order", arguments={"order_id": "5590", "quantity": 5})]),
    Rule(regex="3 items", last_role="user", text="One moment.", tool_calls=[
        ToolCallSpec(name="update_order", arguments={"order_id": "5590", "quantity": 3})]),
    Rule(text="Done: order 5590 now has the new quantity."),
]  # fmt: skip


@pytest.fixture
def rules_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(RULES) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield server


async def test_text_calls_and_results_become_actions(rules_llm: FakeLLMServer) -> None:
    factory = resolve_agent(ROBUST)
    assert isinstance(factory, PipecatAgentFactory)
    agent = factory(context())
    try:
        assert await answer(agent, CallStarted()) == [Say(text="Hello, order service.")]
        turn = await answer(agent, CallerSaid(text="Please change order 5590 to 3 items."))
        call_id = next(a.call_id for a in turn if isinstance(a, PrepareToolCall))
        assert turn == [
            UpdateState(field="order_id", value="5590", version=1),
            UpdateState(field="quantity", value=3, version=2),
            PrepareToolCall(
                call_id=call_id,
                tool="update_order",
                args={"order_id": "5590", "quantity": 3},
                state_version=2,
            ),
            SendToolCall(call_id=call_id),
            # Pipecat runs the call as soon as the answer is complete, while the words play.
            Say(text="One moment."),
        ]
        result = {"order_id": "5590", "quantity": 3}
        confirmed = await answer(agent, ToolResult(call_id=call_id, result=result))
        assert confirmed == [Say(text="Done: order 5590 now has the new quantity.")]
        # The stub's answer went back to the model as the function's result.
        tool_messages = [
            m
            for m in rules_llm.requests[-1].body["messages"]
            if m.get("role") == "tool" and m.get("tool_call_id") == call_id
        ]
        assert tool_messages
        assert "5590" in tool_messages[0]["content"]
    finally:
        await factory.aclose()


@pytest.mark.parametrize(
    ("spec", "cancelled"), [(ROBUST, True), (FLAWED, False)], ids=["robust", "flawed"]
)
async def test_a_barge_in_after_the_send_cancels_only_where_the_bot_does(
    rules_llm: FakeLLMServer, spec: str, cancelled: bool
) -> None:
    factory = resolve_agent(spec)
    agent = factory(context())
    try:
        await answer(agent, CallStarted())
        sent = await first(agent.respond(CallerSaid(text="Change order 5590 to 3 items.")), 4)
        stale = sent[2]
        assert isinstance(stale, PrepareToolCall)
        assert isinstance(sent[3], SendToolCall)
        after = await answer(
            agent, BargeIn(point=InterruptPoint.AFTER_TOOL_FIRED, text="Wait, make it 5 items.")
        )
        cancels = [a for a in after if isinstance(a, CancelToolCall)]
        assert cancels == ([CancelToolCall(call_id=stale.call_id)] if cancelled else [])
        # The words of the interrupted reply ("One moment.") are not said after all.
        assert Say(text="One moment.") not in after
        new = [a for a in after if isinstance(a, PrepareToolCall)]
        assert [a.args for a in new] == [{"order_id": "5590", "quantity": 5}]
    finally:
        await factory.aclose()


async def test_a_call_held_between_prepare_and_send_is_sent_unless_cancelled(
    rules_llm: FakeLLMServer,
) -> None:
    for spec, sends_stale in ((ROBUST, False), (FLAWED, True)):
        factory = resolve_agent(spec)
        agent = factory(context())
        try:
            await answer(agent, CallStarted())
            held = await first(agent.respond(CallerSaid(text="Change order 5590 to 3 items.")), 3)
            stale = held[2]
            assert isinstance(stale, PrepareToolCall)
            after = await answer(
                agent, BargeIn(point=InterruptPoint.DURING_TOOL_PREP, text="Wait, make it 5 items.")
            )
            assert (SendToolCall(call_id=stale.call_id) in after) is sends_stale, spec
            assert (CancelToolCall(call_id=stale.call_id) in after) is not sends_stale, spec
        finally:
            await factory.aclose()


async def test_noise_reaches_no_text_mode_pipeline(rules_llm: FakeLLMServer) -> None:
    factory = resolve_agent(ROBUST)
    agent = factory(context())
    try:
        await answer(agent, CallStarted())
        held = await first(agent.respond(CallerSaid(text="Change order 5590 to 3 items.")), 3)
        # A barge-in without words: nothing is interrupted, the held call goes out.
        after = await answer(agent, BargeIn(point=InterruptPoint.DURING_TOOL_PREP, text=None))
        assert after[0] == SendToolCall(call_id=held[2].call_id)  # type: ignore[union-attr]
        assert not any(isinstance(a, CancelToolCall | UpdateState) for a in after)
    finally:
        await factory.aclose()


# --- loading and failures --------------------------------------------------------------------


def write_bot(folder: Path, body: str) -> str:
    (folder / "mybot.py").write_text(body, encoding="utf-8")
    return f"pipecat:{folder / 'mybot.py'}:run_bot"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("async def bot(runner_args):\n    pass\nrun_bot = bot\n", "not the runner's entry point"),
        ("def run_bot(transport, runner_args):\n    pass\n", "not an async function"),
    ],
)
def test_a_function_that_cannot_take_the_transport_is_refused(
    tmp_path: Path, body: str, message: str
) -> None:
    with pytest.raises(AgentLoadError, match=message):
        resolve_agent(write_bot(tmp_path, body))


def test_a_module_spec_is_found_from_the_current_folder() -> None:
    factory = resolve_agent("pipecat:bot:run_bot", cwd=EXAMPLE)
    assert isinstance(factory, PipecatAgentFactory)
    assert factory.run_bot.__module__ == "bot"
    assert factory.takes_runner_args


def test_the_spec_needs_a_function_and_names_a_misspelt_one(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError, match="name the bot's pipeline function"):
        resolve_agent(f"pipecat:{EXAMPLE / 'bot.py'}")
    with pytest.raises(AgentLoadError, match="did you mean 'run_bot'"):
        resolve_agent(f"pipecat:{EXAMPLE / 'bot.py'}:run_bto")


def test_without_pipecat_the_error_gives_the_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pipecat" else real(name)
    )
    with pytest.raises(AgentLoadError, match=r"pip install 'polygon-voice\[pipecat\]'"):
        resolve_agent(ROBUST)


def test_an_untested_pipecat_release_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "2.0.0")
    with pytest.raises(AgentLoadError, match=r"pipecat-ai 2\.0\.0 is installed"):
        resolve_agent(ROBUST)


def test_a_bot_that_raises_ends_its_call_with_the_reason(
    rules_llm: FakeLLMServer, tmp_path: Path
) -> None:
    spec = write_bot(
        tmp_path,
        "async def run_bot(transport, runner_args):\n"
        "    raise RuntimeError('no DEEPGRAM_API_KEY')\n",
    )
    options = RunOptions(agent=spec, scenarios=("corr-01",), write_files=False)
    call = run_suite("three-layer", options, db=str(tmp_path / "r.db")).calls[0]
    assert call.end_reason == "error"
    assert "RuntimeError: no DEEPGRAM_API_KEY" in call.end_message


def test_unused_the_adapter_imports_no_pipecat() -> None:
    code = (
        "import sys\n"
        "from polygon_voice.agents import resolve_agent\n"
        "import polygon_voice.agents.pipecat\n"
        "resolve_agent('reference:robust')\n"
        "assert not [m for m in sys.modules if m.split('.')[0] == 'pipecat'], 'imported'\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


MINIMAL_BOT = """
import os
from pipecat.frames.frames import EndTaskFrame, LLMRunFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import LLMContextAggregatorPair
from pipecat.processors.frame_processor import FrameDirection
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.workers.runner import WorkerRunner

async def end_call(params):
    await params.result_callback({"ok": True})
    await params.llm.push_frame(EndTaskFrame(), FrameDirection.UPSTREAM)

async def run_bot(transport):
    llm = OpenAILLMService(api_key="k", settings=OpenAILLMService.Settings(model="m"))
    llm.register_function("end_call", end_call)
    context = LLMContext()
    user, assistant = LLMContextAggregatorPair(context)
    worker = PipelineWorker(
        Pipeline([transport.input(), user, llm, transport.output(), assistant])
    )

    @transport.event_handler("on_client_connected")
    async def on_client_connected(transport, client):
        await worker.queue_frames([LLMRunFrame()])

    runner = WorkerRunner(handle_sigint=False)
    await runner.add_workers(worker)
    await runner.run()
"""


def run_minimal(tmp_path: Path, rules: list[Rule], monkeypatch: pytest.MonkeyPatch) -> Any:
    spec = write_bot(tmp_path, MINIMAL_BOT)
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        options = RunOptions(agent=spec, scenarios=("corr-01",), write_files=False)
        return run_suite("three-layer", options, db=str(tmp_path / "r.db")).calls[0]


def test_a_bot_that_ends_its_pipeline_hangs_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A function the suite does not have runs as the bot wrote it: here it ends the call.
    rules = [
        Rule(turn=0, text="Hello."),
        Rule(last_role="user", tool_calls=[ToolCallSpec(name="end_call")]),
        Rule(text="Bye."),
    ]
    call = run_minimal(tmp_path, rules, monkeypatch)
    assert (call.end_reason, call.end_message) == ("agent_hangup", "the bot ended its pipeline")
    assert call.tool_calls == 0  # end_call is the bot's own, not a suite tool


def test_a_model_that_fails_ends_the_call_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = [Rule(turn=0, text="Hello."), Rule(error=500, message="the model is down")]
    call = run_minimal(tmp_path, rules, monkeypatch)
    assert call.end_reason == "error"
    assert "the bot reported an error" in call.end_message


def test_a_suite_tool_the_bot_never_registered_stays_pipecat_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pipecat answers it as a missing function; the call goes on, and Polygon saw no call.
    rules = [
        Rule(turn=0, text="Hello."),
        Rule(regex="bye", text="Goodbye."),
        Rule(last_role="user", tool_calls=[ToolCallSpec(name="update_order")]),
        Rule(text="Sorry, I cannot change orders."),
    ]
    call = run_minimal(tmp_path, rules, monkeypatch)
    assert call.end_reason == "caller_hangup", call.end_message
    assert call.tool_calls == 0
