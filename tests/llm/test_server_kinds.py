"""Structured output against every server kind: the forms, the switch, and the fake's dialects."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from polygon_voice.caller.llm import LLMCaller
from polygon_voice.judge import V2, JudgeInput, judge_conversation_async
from polygon_voice.judge.llm import LLMJudge
from polygon_voice.llm import (
    LLMClient,
    LLMConfigError,
    LLMRequestError,
    RoleConfig,
    load_llm_config,
)
from polygon_voice.llm.dialects import is_shape_refusal
from polygon_voice.model.judgement import Judgement
from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.testing.fake_llm import main as fake_main
from tests.caller.test_llm_caller import AGENT_GREETS, PERSONA
from tests.judge.calls import NO_CHECKS, good_call
from tests.judge.calls import PERSONA as JUDGED_PERSONA
from tests.llm.conftest import USER_HELLO, Sleeps, client_for
from tests.llm.recorded.replay import load

DIALECTS = ["openai", "llamacpp", "vllm", "ollama"]
IDS = [c.id for c in V2.criteria]
QUOTE = "order 5590 now has 3 items"
SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}},
}
# llama-cpp-python 0.3.36's own words, recorded (tests/llm/recorded/), its traceback line cut.
LLAMACPP_REFUSAL = load("judge_json_schema_refused").body["error"]["message"].split("\n\n")[0]


def post(server: FakeLLMServer, body: dict[str, Any], timeout: float = 5) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def ask(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields}


def formats(server: FakeLLMServer) -> list[str | None]:
    return [(r.body.get("response_format") or {}).get("type") for r in server.requests]


def verdict_answer(score: int = 5) -> dict[str, Any]:
    return {"criteria": {cid: {"score": score, "evidence": QUOTE, "reason": "ok"} for cid in IDS}}


def judged(server: FakeLLMServer, setting: str = "auto") -> Judgement:
    config = RoleConfig(
        role="judge",
        model="fake",
        base_url=server.base_url,
        cache=False,
        structured_output=setting,  # type: ignore[arg-type]
    )
    given = JudgeInput(good_call(), JUDGED_PERSONA, NO_CHECKS)

    async def go() -> Judgement:
        judge = LLMJudge(LLMClient(config))
        try:
            return await judge_conversation_async(judge, V2, given, 1)
        finally:
            await judge.aclose()

    return asyncio.run(go())


# --- what counts as a refusal of the request's shape ------------------------------------


@pytest.mark.parametrize(
    ("status", "detail", "expected"),
    [
        (500, LLAMACPP_REFUSAL, True),  # the llama.cpp server
        (
            500,  # llama-cpp-python's error handler wrapping the pydantic error
            "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
            True,
        ),
        (400, "JSON schema conversion failed: unsupported keyword", True),
        (400, "Invalid 'response_format.json_schema': unknown field", True),
        (500, "CUDA out of memory", False),  # about the server, not the shape: retried
        (429, "response_format: too many requests", False),
        (401, "invalid key for response_format", False),
        (None, "no answer within 60 s", False),
    ],
)
def test_which_errors_are_shape_refusals(status: int | None, detail: str, expected: bool) -> None:
    assert is_shape_refusal(status, detail) is expected


# --- the fake server's dialects, checked with plain HTTP ---------------------------------


def test_llamacpp_refuses_json_schema_with_its_own_status_and_body(serve: Any) -> None:
    server = serve([Rule(json={"score": 4})], dialect="llamacpp")
    wanted = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
    status, body = post(server, ask(response_format=wanted))
    assert status == 500
    error = {"message": LLAMACPP_REFUSAL, "type": "internal_server_error", "param": None,
             "code": None}  # fmt: skip
    assert body == {"error": error}
    status, body = post(server, ask(response_format={"type": "json_object", "schema": SCHEMA}))
    assert status == 200
    assert json.loads(body["choices"][0]["message"]["content"]) == {"score": 4}
    assert [r.rule for r in server.requests] == [None, 0]  # the refused one used no rule


def test_llamacpp_refuses_an_assistant_message_with_null_content(serve: Any) -> None:
    server = serve([Rule(text="ok")], dialect="llamacpp")
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
    ]
    assert post(server, {"model": "m", "messages": messages})[0] == 500
    messages[1]["content"] = ""
    assert post(server, {"model": "m", "messages": messages})[0] == 200
    openai = serve([Rule(text="ok")])  # OpenAI takes a tool-call message without content
    messages[1]["content"] = None
    assert post(openai, {"model": "m", "messages": messages})[0] == 200


def test_llamacpp_ignores_tools_unless_tool_choice_is_sent(serve: Any) -> None:
    server = serve([Rule(text="in words", tool_calls=[{"name": "lookup"}])], dialect="llamacpp")
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    _, ignored = post(server, ask(tools=tools))
    assert "tool_calls" not in ignored["choices"][0]["message"]
    assert ignored["choices"][0]["message"]["content"] == "in words"
    _, called = post(server, ask(tools=tools, tool_choice="auto"))
    assert called["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "lookup"


def test_llamacpp_reads_max_tokens_zero_as_unlimited(serve: Any) -> None:
    server = serve([Rule(text="ok")], dialect="llamacpp")
    with pytest.raises(TimeoutError):
        post(server, ask(max_tokens=0), timeout=0.5)  # still generating when the client quits
    assert post(server, ask(max_tokens=1))[0] == 200


@pytest.mark.parametrize("dialect", ["vllm", "ollama"])
def test_vllm_and_ollama_refuse_a_seed_past_int64(serve: Any, dialect: str) -> None:
    server = serve([Rule(text="ok")], dialect=dialect)
    status, body = post(server, ask(seed=2**64 - 1))
    assert status == 400
    assert str(2**64 - 1) in json.dumps(body)
    assert post(server, ask(seed=2**63 - 1))[0] == 200


def test_vllm_refuses_max_tokens_zero_and_takes_both_schema_forms(serve: Any) -> None:
    server = serve([Rule(json={"score": 4})], dialect="vllm")
    status, body = post(server, ask(max_tokens=0))
    assert (status, body["object"], body["type"]) == (400, "error", "BadRequestError")
    wanted = {"type": "json_schema", "json_schema": {"name": "x", "schema": SCHEMA}}
    assert post(server, ask(response_format=wanted))[0] == 200
    assert post(server, ask(response_format={"type": "json_object"}))[0] == 200


def test_an_unknown_dialect_is_refused() -> None:
    with pytest.raises(ValueError, match="llamacpp"):
        FakeLLMServer([], dialect="tgi")  # type: ignore[arg-type]
    with pytest.raises(SystemExit):
        fake_main(["--dialect", "tgi"])


# --- the client: auto finds the form once per endpoint and model -------------------------


def test_auto_costs_one_refused_request_per_endpoint_and_model(serve: Any, sleeps: Sleeps) -> None:
    server = serve([Rule(json={"score": 4})], dialect="llamacpp")

    async def go() -> list[Any]:
        first = client_for(server, "judge", sleeps=sleeps)
        second = client_for(server, "judge", sleeps=sleeps)  # another client, same endpoint+model
        try:
            answers = [await first.chat(USER_HELLO, response_schema=SCHEMA)]
            # Concurrent calls once the form is known, and from a second client.
            many = [first.chat(USER_HELLO, response_schema=SCHEMA) for _ in range(5)]
            answers += await asyncio.gather(*many, second.chat(USER_HELLO, response_schema=SCHEMA))
            return [a.parsed for a in answers]
        finally:
            await first.aclose()
            await second.aclose()

    assert asyncio.run(go()) == [{"score": 4}] * 7
    assert formats(server) == ["json_schema"] + ["json_object"] * 7
    assert sleeps.delays == []  # the refusal was never retried


def test_concurrent_first_calls_still_cost_one_refusal(serve: Any, sleeps: Sleeps) -> None:
    server = serve([Rule(json={"score": 4})], dialect="llamacpp", latency=0.05)

    async def go() -> None:
        client = client_for(server, "judge", sleeps=sleeps)
        try:
            await asyncio.gather(
                *(client.chat(USER_HELLO, response_schema=SCHEMA) for _ in range(8))
            )
        finally:
            await client.aclose()

    asyncio.run(go())
    assert formats(server).count("json_schema") == 1
    assert len(server.requests) == 9


def test_another_model_on_the_same_endpoint_finds_out_for_itself(serve: Any) -> None:
    server = serve([Rule(json={"score": 4})], dialect="llamacpp")

    async def go() -> None:
        for model in ("small", "large", "small"):
            client = client_for(server, "judge", settings={"model": model})
            try:
                await client.chat(USER_HELLO, response_schema=SCHEMA)
            finally:
                await client.aclose()

    asyncio.run(go())
    assert formats(server) == [
        "json_schema",
        "json_object",
        "json_schema",
        "json_object",
        "json_object",
    ]


def test_a_5xx_not_about_the_shape_is_still_retried(serve: Any, sleeps: Sleeps) -> None:
    server = serve([Rule(call=1, error=503), Rule(json={"score": 4})], dialect="llamacpp")

    async def go() -> Any:
        client = client_for(
            server, "judge", sleeps=sleeps, settings={"structured_output": "json_object"}
        )
        try:
            return (await client.chat(USER_HELLO, response_schema=SCHEMA)).parsed
        finally:
            await client.aclose()

    assert asyncio.run(go()) == {"score": 4}
    assert len(sleeps.delays) == 1
    assert formats(server) == ["json_object", "json_object"]


def test_a_fixed_form_that_is_refused_fails_at_once_and_says_what_to_set(
    serve: Any, sleeps: Sleeps
) -> None:
    server = serve([Rule(json={"score": 4})], dialect="llamacpp")

    async def go() -> None:
        client = client_for(
            server, "judge", sleeps=sleeps, settings={"structured_output": "json_schema"}
        )
        try:
            await client.chat(USER_HELLO, response_schema=SCHEMA)
        finally:
            await client.aclose()

    with pytest.raises(LLMRequestError) as caught:
        asyncio.run(go())
    message = str(caught.value)
    assert "refused structured output as json_schema" in message
    assert LLAMACPP_REFUSAL in message
    hint = "set structured_output: auto to let Polygon try the other forms"
    assert message.endswith(f'{hint} (docs/llm.md, "Server kinds")')
    assert caught.value.status == 500
    assert len(server.requests) == 1  # not retried four times
    assert sleeps.delays == []


def test_the_prompt_form_sends_no_response_format_and_validates_on_arrival(serve: Any) -> None:
    server = serve([Rule(text='```json\n{"score": 4}\n```')])

    async def go() -> Any:
        client = client_for(server, "judge", settings={"structured_output": "prompt"})
        try:
            return (await client.chat(USER_HELLO, response_schema=SCHEMA)).parsed
        finally:
            await client.aclose()

    assert asyncio.run(go()) == {"score": 4}
    body = server.requests[0].body
    assert "response_format" not in body
    assert body["messages"][0]["role"] == "system"
    assert '"maximum": 5' in body["messages"][0]["content"]


def test_the_setting_comes_from_the_file_and_the_environment(tmp_path: Any) -> None:
    path = tmp_path / "polygon.yaml"
    path.write_text("llm:\n  structured_output: json_object\n  judge:\n    model: m\n")
    settings = load_llm_config(path, env={"POLYGON_CALLER_STRUCTURED_OUTPUT": "prompt"})
    assert settings.role("judge").structured_output == "json_object"
    assert settings.role("caller").structured_output == "prompt"
    assert load_llm_config(None, env={}).role("agent").structured_output == "auto"
    with pytest.raises(LLMConfigError, match="POLYGON_JUDGE_STRUCTURED_OUTPUT"):
        load_llm_config(None, env={"POLYGON_JUDGE_STRUCTURED_OUTPUT": "grammar"})


# --- the judge and the caller roles against every dialect --------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_judge_scores_against_every_dialect(serve: Any, dialect: str) -> None:
    server = serve([Rule(role="judge", json=verdict_answer(4))], dialect=dialect)
    judgement = judged(server)
    assert judgement.errors == []
    assert {c.status for c in judgement.criteria.values()} == {"scored"}
    assert judgement.composite == 75.0
    refused = 1 if dialect == "llamacpp" else 0
    assert len(server.requests) == 1 + refused
    # The integer bounds reach a json_schema server; llama.cpp's json_object grammar gets none.
    sent = server.requests[-1].body["response_format"]
    score = json.dumps(sent)
    assert ('"maximum": 5' in score) is (dialect != "llamacpp")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_out_of_range_score_is_unscored_in_every_dialect(serve: Any, dialect: str) -> None:
    huge = verdict_answer()
    huge["criteria"][IDS[0]]["score"] = 1023984760000000
    judgement = judged(serve([Rule(role="judge", json=huge)], dialect=dialect))
    assert judgement.criteria[IDS[0]].status == "unscored"
    assert judgement.criteria[IDS[0]].score is None
    assert all(judgement.criteria[cid].status == "scored" for cid in IDS[1:])


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_caller_speaks_against_every_dialect(serve: Any, dialect: str) -> None:
    line = {"say": "I'd like to change order 5590 to 3 items.", "end_call": False}
    server = serve([Rule(role="caller", json=line)], dialect=dialect)

    async def go() -> Any:
        client = LLMClient(
            RoleConfig(role="caller", model="fake", base_url=server.base_url, cache=False)
        )
        try:
            caller = LLMCaller(PERSONA, "en", client, seed=7)
            moves = [await caller.reply(AGENT_GREETS) for _ in range(2)]
            return moves, caller.errors
        finally:
            await client.aclose()

    moves, errors = asyncio.run(go())
    assert errors == []
    assert [getattr(m, "text", None) for m in moves] == [line["say"]] * 2
    sent = [r.body["response_format"] for r in server.requests]
    assert all("maxLength" not in json.dumps(s) for s in sent)  # the grammar that killed llama.cpp
    assert len(server.requests) == (3 if dialect == "llamacpp" else 2)
