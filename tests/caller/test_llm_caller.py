"""The LLM caller against the fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from polygon_voice.caller import CallView, HangUp, Speak, StaySilent
from polygon_voice.caller.factory import CallerContext, make_caller
from polygon_voice.caller.llm import SAFE_LINES, LLMCaller, llm_caller_client
from polygon_voice.caller.llm_prompt import CONNECTED, SILENCE, history, system_prompt
from polygon_voice.llm import LLMClient, LLMConfigError, RoleConfig, load_llm_config
from polygon_voice.model import (
    InterruptPoint,
    Outcome,
    Persona,
    PersonaType,
    Scenario,
    Speaker,
    Suite,
    Turn,
)
from polygon_voice.testing import FakeLLMServer, Rule

PERSONA = Persona(
    name="Anna Miller",
    type=PersonaType.BUSY,
    intended_outcome=Outcome.SUCCESS,
    difficulty=2,
    goal="Change the quantity of order 5590 to 3.",
    facts={"order_id": "5590", "quantity": 3},
    language="en",
)
GREETING = "Hello, this is the order line. How can I help you today?"


def turn(index: int, speaker: Speaker, text: str, heard: str | None = None) -> Turn:
    return Turn(
        index=index,
        speaker=speaker,
        text=text,
        heard=text if heard is None else heard,
        start=float(index),
        end=index + 0.5,
    )


def view(*turns: Turn, language: str = "en") -> CallView:
    return CallView(persona=PERSONA, language=language, turns=list(turns), now=0.0)


AGENT_GREETS = view(turn(0, Speaker.AGENT, GREETING))


Serve = Callable[[Sequence[Rule]], FakeLLMServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    """Start a fake server with the given rules; stopped after the test."""
    started: list[FakeLLMServer] = []

    def start(rules: Sequence[Rule]) -> FakeLLMServer:
        started.append(FakeLLMServer(list(rules)).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def client(server: FakeLLMServer) -> LLMClient:
    # No retries: a scripted 500 is the model failing for good.
    return LLMClient(
        RoleConfig(role="caller", model="fake", base_url=server.base_url, max_retries=0)
    )


def said(answer: dict[str, Any], **conditions: Any) -> Rule:
    return Rule(role="caller", json=answer, **conditions)


async def test_the_model_plays_the_persona_turn_by_turn(serve: Serve) -> None:
    fake = serve([said({"say": "Order 5590, make it 3.", "end_call": False})])
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=7)
        assert await caller.reply(AGENT_GREETS) == Speak("Order 5590, make it 3.")
    [request] = fake.requests
    assert request.role == "caller"
    messages = request.body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "Anna Miller" in messages[0]["content"]
    assert "- order_id: 5590" in messages[0]["content"]
    assert messages[1]["content"] == GREETING
    assert request.body["response_format"]["type"] == "json_schema"
    assert isinstance(request.body["seed"], int)
    assert caller.blocked == []
    assert caller.errors == []


async def test_end_call_says_goodbye_then_hangs_up(serve: Serve) -> None:
    fake = serve([said({"say": "Thanks, bye.", "end_call": True})])
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        assert await caller.reply(AGENT_GREETS) == Speak("Thanks, bye.")
        # The agent answers the goodbye; then the caller is gone without asking the model.
        assert await caller.reply(AGENT_GREETS) == HangUp()
    assert len(fake.requests) == 1


async def test_an_empty_line_is_silence_and_an_empty_goodbye_hangs_up(serve: Serve) -> None:
    fake = serve(
        [
            said({"say": "", "end_call": False}, call=1),
            said({"say": " ", "end_call": True}, call=2),
        ],
    )
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        assert await caller.reply(AGENT_GREETS) == StaySilent()
        # Not a word of its part was said: the engine records the call as not exercised.
        assert await caller.reply(AGENT_GREETS) == HangUp(never_spoke=True)


async def test_an_empty_goodbye_after_a_line_is_a_plain_hang_up(serve: Serve) -> None:
    fake = serve(
        [
            said({"say": "Hi, it's about order 5590.", "end_call": False}, call=1),
            said({"say": "", "end_call": True}, call=2),
        ],
    )
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        assert await caller.reply(AGENT_GREETS) == Speak("Hi, it's about order 5590.")
        assert await caller.reply(AGENT_GREETS) == HangUp()


async def test_a_number_not_in_the_facts_is_not_passed_on(serve: Serve) -> None:
    fake = serve(
        [
            said({"say": "It's order 5509.", "end_call": False}, call=1),
            said({"say": "It's order 5590.", "end_call": False}, call=2),
        ],
    )
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        assert await caller.reply(AGENT_GREETS) == Speak("It's order 5590.")
    first, retry = fake.requests
    note = retry.body["messages"][0]["content"]
    assert "rejected: it states 5509, which is not in your facts" in note
    assert "rejected" not in first.body["messages"][0]["content"]
    assert retry.body["seed"] != first.body["seed"]
    assert caller.blocked == []


async def test_a_line_rejected_twice_becomes_the_safe_line(serve: Serve) -> None:
    fake = serve([said({"say": "My card number is 4111 1111.", "end_call": True})])
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "de", llm, seed=0)
        move = await caller.reply(view(turn(0, Speaker.AGENT, "Hallo!"), language="de"))
        assert move == Speak(SAFE_LINES["de"])
        # The fallback never ends the call: the model's end marker went with the bad line.
        assert await caller.reply(AGENT_GREETS) == Speak(SAFE_LINES["de"])
    assert len(fake.requests) == 4
    assert [b.turn for b in caller.blocked] == [1, 1]
    assert caller.blocked[0].text == "My card number is 4111 1111."
    assert "4111 1111" in caller.blocked[0].reason


@pytest.mark.parametrize(
    "line",
    [
        "As an AI language model, I cannot have an order.",
        "Honestly, this is just a simulation.",
        "Ich bin ein Bot, entschuldigen Sie.",
        "Я бот, извините.",
        "Ovo je samo simulacija.",
    ],
)
async def test_the_caller_never_says_it_is_an_ai_or_a_simulation(serve: Serve, line: str) -> None:
    fake = serve(
        [
            said({"say": line, "end_call": False}, call=1),
            said({"say": "Sorry, where was I?", "end_call": False}),
        ],
    )
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        assert await caller.reply(AGENT_GREETS) == Speak("Sorry, where was I?")
    assert "AI, a model, a bot or a simulation" in fake.requests[1].body["messages"][0]["content"]


@pytest.mark.parametrize(
    "failure",
    [
        Rule(role="caller", error=500, message="model crashed"),
        Rule(role="caller", raw='{"choices": [{"message": {"content": "not json"'),
        Rule(role="caller", json={"say": 3}),
    ],
    ids=["http-500", "malformed-body", "wrong-schema"],
)
async def test_a_model_error_hangs_up_cleanly(serve: Serve, failure: Rule) -> None:
    fake = serve([failure])
    async with client(fake) as llm:
        caller = LLMCaller(PERSONA, "en", llm, seed=0)
        move = await caller.reply(AGENT_GREETS)
    [error] = caller.errors
    # A hang-up that says why: the call is then not exercised, never judged as played.
    assert move == HangUp(failure=error)
    assert "model crashed" in error or "JSON" in error or "CallerLine" in error


def test_the_llm_caller_never_barges_in() -> None:
    caller = LLMCaller(PERSONA, "en", _unused_client(), seed=0)
    for point in InterruptPoint:
        assert caller.barge_in(point, AGENT_GREETS, "update_order") is None


def test_history_roles_are_from_the_callers_side() -> None:
    turns = [
        turn(0, Speaker.AGENT, "Hello.", heard="Hel"),
        turn(1, Speaker.AGENT, "Anyone?"),
        turn(2, Speaker.CALLER, "Order 5590."),
        turn(3, Speaker.CALLER, "Hello?"),
    ]
    messages = history(turns)
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Hel Anyone?"),  # what the caller heard; two agent turns are one message
        ("assistant", json.dumps({"say": "Order 5590.", "end_call": False})),
        ("user", SILENCE),  # roles alternate: the agent's silence between two caller turns
        ("assistant", json.dumps({"say": "Hello?", "end_call": False})),
        ("user", SILENCE),
    ]
    assert history([]) == [{"role": "user", "content": CONNECTED}]
    assert history([turn(0, Speaker.CALLER, "Hi")])[0] == {"role": "user", "content": CONNECTED}


def test_the_system_prompt_casts_the_persona() -> None:
    text = system_prompt(PERSONA, "hr")
    assert "speak only Croatian" in text
    assert "in a hurry" in text  # busy
    assert "Change the quantity of order 5590 to 3." in text
    assert "- quantity: 3" in text
    assert "Never say or hint that you are an AI" in text
    assert '"end_call"' in text


def test_a_scenario_with_caller_llm_needs_a_configured_model() -> None:
    scenario = Scenario(id="ask-llm", caller="llm", persona=PERSONA)
    context = CallerContext(conversation_id="c", language="en", seed=1)
    with pytest.raises(LLMConfigError, match=r"'ask-llm' uses `caller: llm`.*POLYGON_CALLER_MODEL"):
        make_caller(scenario, context)
    llm = _unused_client()
    caller = make_caller(scenario, CallerContext("c", "de", 1, llm_client=llm))
    assert isinstance(caller, LLMCaller)
    assert (caller.persona, caller.language, caller.client) == (PERSONA, "de", llm)


def test_the_caller_client_is_made_only_when_a_scenario_asks_for_a_model() -> None:
    plain = Suite(name="s", scenarios=[Scenario(id="a", script=[{"say": "hi"}])])
    with_llm = Suite(name="s", scenarios=[Scenario(id="a"), Scenario(id="b", caller="llm")])
    unset = load_llm_config(None, env={})
    assert llm_caller_client(plain, unset) is None
    with pytest.raises(LLMConfigError, match="scenario 'b'"):
        llm_caller_client(with_llm, unset)
    settings = load_llm_config(
        None, env={"POLYGON_CALLER_MODEL": "m", "POLYGON_BASE_URL": "http://127.0.0.1:9/v1"}
    )
    made = llm_caller_client(with_llm, settings)
    assert made is not None
    assert (made.config.model, made.config.base_url) == ("m", "http://127.0.0.1:9/v1")


def _unused_client() -> LLMClient:
    return LLMClient(RoleConfig(role="caller", model="fake", base_url="http://127.0.0.1:9/v1"))
