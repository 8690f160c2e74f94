"""Personas from an agent's prompt: reading it, the deterministic generator, the model path."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from polygon_voice.llm import LLMClient, RoleConfig
from polygon_voice.model import Outcome, Persona, PersonaType
from polygon_voice.scenario import SuiteError, load_suite
from polygon_voice.scenario.persona_plan import plan_personas
from polygon_voice.scenario.persona_refs import (
    persona_links,
    persona_version,
    resolve_persona_refs,
)
from polygon_voice.scenario.personas import (
    generate_personas,
    persona_status,
    prompt_hash_of,
    usage_line,
)
from polygon_voice.scenario.prompt_reading import read_prompt
from polygon_voice.seeding import content_hash
from polygon_voice.testing import FakeLLMServer, Rule

ROOT = Path(__file__).resolve().parents[2]
ORDER_PROMPT = (ROOT / "examples" / "order_line" / "prompt.md").read_text()
CLINIC_PROMPT = (
    "You are the front desk of a dental clinic. You help patients book an appointment. "
    "Ask for their full name, date of birth, phone number and email address. "
    "In order to help, be kind."
)


def test_the_order_line_prompt_is_read_for_task_and_slots() -> None:
    reading = read_prompt(ORDER_PROMPT)
    assert reading.language == "en"
    assert reading.task == "change the quantity or the delivery date of an order"
    assert [slot.name for slot in reading.slots] == ["order_id", "quantity", "delivery_date"]
    assert reading.alternatives == (("quantity", "delivery_date"),)


def test_specific_slots_claim_their_words_first() -> None:
    reading = read_prompt(CLINIC_PROMPT)
    assert reading.task == "book an appointment"
    # "email address" is no address, "date of birth" no plain date, "in order to" no order.
    assert [slot.name for slot in reading.slots] == [
        "appointment",
        "name",
        "birth_date",
        "phone",
        "email",
    ]


@pytest.mark.parametrize(
    ("text", "language", "slots"),
    [
        (
            "Sie sind die Bestellhotline. Sie helfen Kunden, die Menge oder den Liefertermin "
            "einer Bestellung zu ändern. Fragen Sie nach der Bestellnummer.",
            "de",
            ["quantity", "delivery_date", "order_id"],
        ),
        (
            "Vi ste linija za narudžbe. Pomažete korisnicima promijeniti količinu ili datum "
            "dostave narudžbe. Pitajte za broj telefona.",
            "hr",
            ["order_id", "quantity", "delivery_date", "phone"],
        ),
        (
            "Вы — линия заказов. Вы помогаете клиентам изменить количество или дату доставки "
            "заказа. Спросите адрес.",
            "ru",
            ["order_id", "quantity", "delivery_date", "address"],
        ),
    ],
)
def test_prompts_in_other_languages(text: str, language: str, slots: list[str]) -> None:
    reading = read_prompt(text)
    assert reading.language == language
    assert [slot.name for slot in reading.slots] == slots
    assert reading.alternatives == (("quantity", "delivery_date"),)


async def test_the_deterministic_generator_turns_slots_into_facts() -> None:
    result = await generate_personas(ORDER_PROMPT, 8, client=None, seed=3)
    assert result.failures == []
    assert result.prompt_hash == content_hash(ORDER_PROMPT)
    personas = [made.persona for made in result.personas]
    assert [p.type for p in personas[:6]] == list(PersonaType)
    assert [p.intended_outcome for p in personas[:4]] == list(Outcome)
    assert {made.generator for made in result.personas} == {"deterministic"}
    for persona in personas:
        facts = persona.facts
        # The order, and one of "the quantity or the delivery date", as the prompt offers.
        assert re.fullmatch(r"\d{4,5}", str(facts["order_id"]))
        assert ("quantity" in facts) != ("delivery_date" in facts)
        # The goal is a sentence the caller could say, as in a suite written by hand.
        if "quantity" in facts:
            assert isinstance(facts["quantity"], int)
            assert 1 <= facts["quantity"] <= 100
            wanted = f"Change the quantity of order {facts['order_id']} to {facts['quantity']}."
        else:
            assert date.fromisoformat(str(facts["delivery_date"])).year == 2026
            wanted = (
                f"Change the delivery date of order {facts['order_id']} "
                f"to {facts['delivery_date']}."
            )
        assert persona.goal == wanted
        assert 1 <= persona.difficulty <= 5
        assert persona.language == "en"
        assert ("callback_time" in facts) == (persona.intended_outcome is Outcome.CALLBACK)
    assert {"quantity", "delivery_date"} <= {key for p in personas for key in p.facts}


async def test_the_same_seed_makes_the_same_personas() -> None:
    first = await generate_personas(ORDER_PROMPT, 4, client=None, seed=1)
    again = await generate_personas(ORDER_PROMPT, 4, client=None, seed=1)
    other = await generate_personas(ORDER_PROMPT, 4, client=None, seed=2)
    later = await generate_personas(ORDER_PROMPT, 4, client=None, seed=1, start=4)
    persons = [[m.persona for m in r.personas] for r in (first, again, other, later)]
    assert persons[0] == persons[1]
    assert persons[0] != persons[2]
    assert persons[0] != persons[3]
    assert [m.plan.index for m in later.personas] == [4, 5, 6, 7]


async def test_types_outcomes_and_language_can_be_chosen() -> None:
    result = await generate_personas(
        CLINIC_PROMPT,
        3,
        [PersonaType.AGGRESSIVE],
        [Outcome.TRANSFER, Outcome.REFUSAL],
        client=None,
        language="hr",
    )
    personas = [made.persona for made in result.personas]
    assert {p.type for p in personas} == {PersonaType.AGGRESSIVE}
    assert [p.intended_outcome for p in personas] == [
        Outcome.TRANSFER,
        Outcome.REFUSAL,
        Outcome.TRANSFER,
    ]
    for persona in personas:
        assert persona.language == "hr"
        assert str(persona.facts["phone"]).startswith("+385 9")
        assert persona.facts["name"] == persona.name
        assert str(persona.facts["email"]).endswith("@example.com")
        assert persona.goal.startswith("Želim book an appointment")  # the prompt's own words


@pytest.mark.parametrize(
    ("text", "goal"),
    [
        (
            "Sie helfen Kunden, die Menge einer Bestellung zu ändern.",
            "Ich möchte die Menge einer Bestellung ändern: Menge {quantity}, "
            "Bestellnummer {order_id}.",
        ),
        (
            "Вы помогаете клиентам изменить количество заказа.",
            "Я хочу изменить количество заказа: количество {quantity}, номер заказа {order_id}.",
        ),
        ("Answer questions about our opening hours.", "Get help with my request."),
        ("You help patients book an appointment.", "Book an appointment for {appointment}."),
    ],
)
async def test_goals_are_what_the_caller_would_say(text: str, goal: str) -> None:
    [made] = (await generate_personas(text, 1, client=None)).personas
    assert made.persona.goal == goal.format(**made.persona.facts)


def test_a_plan_needs_at_least_one_persona_type_and_outcome() -> None:
    with pytest.raises(ValueError, match="at least one persona"):
        plan_personas(0, language="en", seed=0, prompt_hash="h")
    with pytest.raises(ValueError, match="one persona type and one outcome"):
        plan_personas(2, types=[], language="en", seed=0, prompt_hash="h")


# -- with a model ---------------------------------------------------------------------------


def _draft(name: str) -> dict[str, object]:
    return {"name": name, "goal": "Change order 5590 to 3.", "facts": {"order_id": "5590"}}


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    rules = [
        Rule(role="caller", contains="Persona number 2:", error=500, message="overloaded"),
        Rule(role="caller", contains="Persona number 4:", raw="{not json"),
        Rule(role="caller", contains="Persona number 5:", json={"name": "", "goal": "x"}),
        Rule(role="caller", json=_draft("Maria Lopez"), latency=0.05),
    ]
    with FakeLLMServer(rules) as fake:
        yield fake


def _client(server: FakeLLMServer) -> LLMClient:
    return LLMClient(
        RoleConfig(role="caller", model="fake-gen", base_url=server.base_url, max_retries=0)
    )


async def test_one_failing_persona_request_does_not_stop_the_batch(
    server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    done: list[tuple[int, bool]] = []
    with caplog.at_level(logging.INFO, logger="polygon_voice.personas"):
        async with _client(server) as client:
            result = await generate_personas(
                ORDER_PROMPT,
                6,
                client=client,
                seed=5,
                concurrency=2,
                on_done=lambda plan, persona: done.append((plan.index, persona is not None)),
            )
    assert server.request_count == 6  # one request per persona
    assert server.max_in_flight <= 2
    assert [m.plan.index for m in result.personas] == [0, 2, 5]
    assert [f.plan.index for f in result.failures] == [1, 3, 4]
    assert "overloaded" in result.failures[0].message
    assert "not a chat completion" in result.failures[1].message
    assert sorted(done) == [(0, True), (1, False), (2, True), (3, False), (4, False), (5, True)]
    made = result.personas[0]
    assert made.generator == "llm:fake-gen"
    assert made.persona.name == "Maria Lopez"
    assert made.persona.facts == {"order_id": "5590"}
    # Type, outcome and difficulty come from the plan, not from the model.
    assert (made.persona.type, made.persona.intended_outcome) == (
        PersonaType.COOPERATIVE,
        Outcome.SUCCESS,
    )
    assert result.personas[1].persona.type is PersonaType.DISTRUSTFUL
    assert len([r for r in caplog.records if "failed" in r.getMessage()]) == 3


async def test_each_request_carries_the_prompt_and_the_plan(server: FakeLLMServer) -> None:
    async with _client(server) as client:
        await generate_personas(
            ORDER_PROMPT, 1, [PersonaType.CHATTY], [Outcome.CALLBACK], client=client
        )
    [request] = server.requests
    ask = request.body["messages"][-1]["content"]
    assert "You help callers change the quantity" in ask
    assert "manner (chatty)" in ask
    assert "intended outcome (callback)" in ask
    assert "language: English" in ask
    assert request.body["response_format"]["json_schema"]["name"] == "PersonaDraft"


async def test_a_persona_without_facts_is_asked_again_once() -> None:
    empty = {"name": "Ana", "goal": "Change my order.", "facts": {}}
    rules = [Rule(role="caller", call=1, json=empty), Rule(role="caller", json=_draft("Ana"))]
    with FakeLLMServer(rules, dialect="vllm") as server:
        async with _client(server) as client:
            result = await generate_personas(ORDER_PROMPT, 1, client=client, seed=2**40)
        seeds = [r.body["seed"] for r in server.requests]
    assert [m.persona.facts for m in result.personas] == [{"order_id": "5590"}]
    assert result.failures == []
    # A second seed: the same request would replay the same answer from a cache.
    assert seeds[1] == (seeds[0] + 1) % 2**31
    assert all(0 <= seed < 2**31 for seed in seeds)


async def test_a_persona_without_facts_twice_is_a_failure_with_its_reason() -> None:
    empty = {"name": "Ana", "goal": "Change my order.", "facts": {}}
    with FakeLLMServer([Rule(role="caller", json=empty)]) as server:
        async with _client(server) as client:
            result = await generate_personas(ORDER_PROMPT, 2, client=client, concurrency=1)
        asked = server.request_count
    assert result.personas == []
    assert [f.plan.index for f in result.failures] == [0, 1]
    assert all("no facts (asked twice)" in f.message for f in result.failures)
    assert asked == 4


async def test_the_batch_records_its_model_usage(server: FakeLLMServer) -> None:
    async with _client(server) as client:
        await generate_personas(ORDER_PROMPT, 1, client=client)  # before: not this batch's
        result = await generate_personas(ORDER_PROMPT, 3, client=client, start=5)
    usage = result.usage
    assert usage is not None
    assert (usage.calls, usage.failed_calls) == (3, 0)
    assert usage.tokens_in > 0
    line = usage_line(usage)
    assert f"{usage.calls} requests" in line
    assert f"{usage.tokens_in} tokens in" in line
    plain = await generate_personas(ORDER_PROMPT, 1, client=None)
    assert plain.usage is None


# -- staleness and references ---------------------------------------------------------------


def test_a_persona_goes_stale_when_its_prompt_changes(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text(ORDER_PROMPT)
    stored = prompt_hash_of(prompt)
    assert stored == content_hash(ORDER_PROMPT)
    assert persona_status(stored, prompt_hash_of(prompt)) == "current"
    prompt.write_text(ORDER_PROMPT + "\nAlways ask for the customer number.\n")
    assert persona_status(stored, prompt_hash_of(prompt)) == "stale"
    prompt.unlink()
    assert persona_status(stored, prompt_hash_of(prompt)) == "missing"


SUITE = """name: refs
scenarios:
  - id: one
    persona_ref: p-1
    script: [{say: hi}]
  - id: two
    persona: {goal: written out}
    script: [{say: hi}]
"""


def test_persona_refs_are_filled_in_and_kept(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    loaded = load_suite(tmp_path / "suite.yaml")
    stored = Persona(name="Ana", facts={"order_id": "5590"})
    resolved = resolve_persona_refs(loaded, lambda ref: stored)
    one, two = resolved.suite.scenarios
    assert (one.persona, one.persona_ref) == (stored, "p-1")
    assert two.persona.goal == "written out"
    assert resolved.hash == loaded.hash  # the file's version, as written
    assert persona_links(resolved.suite) == [
        {"scenario": "one", "persona": "p-1", "version": persona_version(stored)}
    ]


def test_an_unknown_persona_ref_names_the_scenario(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(SUITE)
    loaded = load_suite(tmp_path / "suite.yaml")

    def missing(ref: str) -> Persona:
        raise LookupError(f"no persona with id '{ref}'")

    with pytest.raises(SuiteError) as caught:
        resolve_persona_refs(loaded, missing)
    text = str(caught.value)
    assert "scenarios[0].persona_ref" in text
    assert "scenario 'one' references the stored persona 'p-1'" in text


def test_persona_and_persona_ref_together_are_refused(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text(
        "name: x\nscenarios:\n  - id: a\n    persona_ref: p-1\n    persona: {goal: g}\n"
    )
    with pytest.raises(SuiteError, match="either 'persona' or 'persona_ref'"):
        load_suite(tmp_path / "suite.yaml")


def _cut_off(text: str) -> str:
    # A completion that stopped at the token limit inside a string, as SmolLM2 on
    # llama-cpp-python answers (tests/llm/recorded: persona_json_object).
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": "length",
    }
    return json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                       "choices": [choice],
                       "usage": {"prompt_tokens": 9, "completion_tokens": 300}})  # fmt: skip


async def test_a_persona_cut_off_at_the_token_limit_is_asked_again_once() -> None:
    cut = _cut_off('{"name": "Ana", "goal": "Change my order of ten thousand')
    rules = [Rule(role="caller", call=1, raw=cut), Rule(role="caller", json=_draft("Ana"))]
    with FakeLLMServer(rules) as server:
        async with _client(server) as client:
            result = await generate_personas(ORDER_PROMPT, 1, client=client)
        seeds = [r.body["seed"] for r in server.requests]
    assert [m.persona.name for m in result.personas] == ["Ana"]
    assert result.failures == []
    assert seeds[1] == (seeds[0] + 1) % 2**31  # another draw, not the same request again


async def test_a_persona_cut_off_twice_fails_naming_the_limit() -> None:
    cut = _cut_off('{"name": "Ana", "goal": "Change')
    with FakeLLMServer([Rule(role="caller", raw=cut)]) as server:
        async with _client(server) as client:
            result = await generate_personas(ORDER_PROMPT, 1, client=client)
        asked = server.request_count
    assert result.personas == []
    assert asked == 2
    (failure,) = result.failures
    assert "cut off at the token limit" in failure.message
    assert "llm.caller.max_tokens" in failure.message
