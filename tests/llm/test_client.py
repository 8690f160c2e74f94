"""The client against the real fake server: text, tool calls, structured output, bad answers."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from polygon_voice.llm import LLMClient, LLMConfigError, LLMFormatError, LLMRequestError, RoleConfig
from polygon_voice.llm.config import LOCAL_MAX_TOKENS
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import KEY_VAR, SECRET_KEY, USER_HELLO, client_for

Serve = Callable[..., FakeLLMServer]
SCORE_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "integer", "minimum": 1, "maximum": 5}},
    "required": ["score"],
}


class Score(BaseModel):
    score: int
    evidence: str


async def test_plain_text_reply_and_request(serve: Serve) -> None:
    server = serve([Rule(text="Sure, which order?")])
    async with client_for(server, settings={"temperature": 0.7}) as client:
        reply = await client.chat(USER_HELLO, seed=11)
    assert reply.text == "Sure, which order?"
    assert reply.tool_calls == ()
    assert reply.parsed is None
    assert not reply.cached
    assert reply.finish_reason == "stop"
    assert reply.tokens_in == 8  # words of the prompt, the fake server's "tokenizer"
    assert reply.tokens_out == 3
    body = server.requests[0].body
    assert body == {
        "model": "fake-caller",
        "messages": USER_HELLO,
        "temperature": 0.7,
        "seed": 11,
        "max_tokens": LOCAL_MAX_TOKENS,  # the fake server is on loopback: a local server
    }
    assert server.requests[0].role == "caller"


async def test_tool_calls_are_parsed(serve: Serve) -> None:
    server = serve([Rule(tool_calls=[{"name": "lookup_order", "arguments": {"order_id": "A-17"}}])])
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup_order",
                "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}},
            },
        }
    ]
    async with client_for(server, "agent") as client:
        reply = await client.chat(USER_HELLO, tools=tools)
    assert reply.text is None
    assert reply.finish_reason == "tool_calls"
    [call] = reply.tool_calls
    assert call.name == "lookup_order"
    assert call.arguments == {"order_id": "A-17"}
    assert call.id
    assert server.requests[0].body["tools"] == tools


async def test_structured_output_with_a_json_schema(serve: Serve) -> None:
    server = serve([Rule(structured=True, json={"score": 4})])
    async with client_for(server, "judge") as client:
        reply = await client.chat(USER_HELLO, response_schema=SCORE_SCHEMA, schema_name="score")
    assert reply.parsed == {"score": 4}
    sent = server.requests[0].body
    assert sent["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "score", "schema": SCORE_SCHEMA},
    }
    assert sent["temperature"] == 0.0  # the judge's default (RUB-7)


async def test_structured_output_with_a_pydantic_model(serve: Serve) -> None:
    server = serve([Rule(json={"score": 5, "evidence": "I have changed it."})])
    async with client_for(server, "judge") as client:
        reply = await client.chat(USER_HELLO, response_schema=Score)
    assert reply.parsed == Score(score=5, evidence="I have changed it.")
    schema = server.requests[0].body["response_format"]["json_schema"]
    assert schema["name"] == "Score"
    assert schema["schema"]["required"] == ["score", "evidence"]


async def test_an_answer_that_is_not_json_raises_with_the_raw_text(serve: Serve) -> None:
    server = serve([Rule(text="Score: four out of five")])
    async with client_for(server, "judge") as client:
        with pytest.raises(LLMFormatError, match="not JSON") as caught:
            await client.chat(USER_HELLO, response_schema=SCORE_SCHEMA)
    assert caught.value.raw == "Score: four out of five"


@pytest.mark.parametrize(
    ("answer", "message"),
    [({"score": 9}, r"score: 9 is greater than the maximum of 5"), ({}, r"'score' is a required")],
)
async def test_an_answer_off_the_schema_raises(serve: Serve, answer: object, message: str) -> None:
    server = serve([Rule(json=answer)])
    async with client_for(server, "judge") as client:
        with pytest.raises(LLMFormatError, match=message) as caught:
            await client.chat(USER_HELLO, response_schema=SCORE_SCHEMA)
    assert caught.value.raw == __import__("json").dumps(answer)


async def test_an_answer_off_the_pydantic_model_names_the_field(serve: Serve) -> None:
    server = serve([Rule(json={"score": "high"})])
    async with client_for(server, "judge") as client:
        with pytest.raises(LLMFormatError, match=r"does not match Score: score") as caught:
            await client.chat(USER_HELLO, response_schema=Score)
    assert caught.value.raw == '{"score": "high"}'


async def test_a_body_that_is_not_a_completion_raises_with_the_raw_body(serve: Serve) -> None:
    server = serve([Rule(raw='{"choices": [{"message": ')])
    async with client_for(server) as client:
        with pytest.raises(LLMFormatError, match="not a chat completion") as caught:
            await client.chat(USER_HELLO)
    assert caught.value.raw == '{"choices": [{"message": '


async def test_malformed_tool_arguments_raise_with_the_raw_arguments(serve: Serve) -> None:
    server = serve([Rule(tool_calls=[{"name": "lookup_order", "arguments": '{"order_id": '}])])
    async with client_for(server, "agent") as client:
        with pytest.raises(LLMFormatError, match="lookup_order") as caught:
            await client.chat(USER_HELLO)
    assert caught.value.raw == '{"order_id": '


async def test_a_client_error_is_not_retried(serve: Serve) -> None:
    server = serve([Rule(error=400, message="model not found")])
    async with client_for(server) as client:
        with pytest.raises(LLMRequestError, match="HTTP 400: model not found") as caught:
            await client.chat(USER_HELLO)
    assert caught.value.status == 400
    assert caught.value.attempts == 1
    assert len(server.requests) == 1


def test_a_role_without_a_model_has_no_client() -> None:
    with pytest.raises(LLMConfigError, match="POLYGON_JUDGE_MODEL"):
        LLMClient(RoleConfig(role="judge"))


async def test_a_missing_key_variable_is_named(serve: Serve) -> None:
    server = serve([Rule(text="hi")])
    async with client_for(server, env={}) as client:
        with pytest.raises(LLMConfigError, match=f"{KEY_VAR} is not set"):
            await client.chat(USER_HELLO)
    assert server.requests == []


async def test_the_key_is_sent_as_a_bearer_token(serve: Serve) -> None:
    server = serve([Rule(text="hi")], api_key=SECRET_KEY)
    async with client_for(server) as client:
        assert (await client.chat(USER_HELLO)).text == "hi"
    assert server.requests[0].headers["authorization"] == "[redacted]"


async def test_a_wrong_key_fails_at_once(serve: Serve) -> None:
    server = serve([Rule(text="hi")], api_key="sk-the-right-one")
    async with client_for(server) as client:
        with pytest.raises(LLMRequestError, match="HTTP 401") as caught:
            await client.chat(USER_HELLO)
    assert caught.value.attempts == 1
    assert server.request_count == 0


async def test_the_openai_sdk_reads_the_fake_servers_answers() -> None:
    # The fake server speaks the protocol exactly: the SDK's own typed parsing accepts it.
    import openai

    with FakeLLMServer(
        [Rule(text="hi", tool_calls=[{"name": "f", "arguments": {"a": 1}}])]
    ) as fake:
        sdk = openai.AsyncOpenAI(api_key="unused", base_url=fake.base_url, max_retries=0)
        completion = await sdk.chat.completions.create(model="m", messages=USER_HELLO)
        await sdk.close()
    message = completion.choices[0].message
    assert message.content == "hi"
    assert message.tool_calls is not None
    assert message.tool_calls[0].function.arguments == '{"a": 1}'
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 3  # "hi" and the two words of the arguments
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + 3


async def test_without_the_http_stack_the_error_says_what_to_install(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve([Rule(text="hi")])
    monkeypatch.setitem(__import__("sys").modules, "aiohttp", None)  # `import aiohttp` now fails
    async with client_for(server) as client:
        with pytest.raises(LLMConfigError, match=r"pip install 'polygon-voice\[llm\]'"):
            await client.chat(USER_HELLO)
    assert server.requests == []
