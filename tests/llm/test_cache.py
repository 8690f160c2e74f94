"""The response cache: a rerun sends nothing and replays exactly; the agent is not cached."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from polygon_voice.llm import (
    LLMFormatError,
    ResponseCache,
    load_llm_config,
    make_client,
    request_key,
)
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import KEY_VAR, SECRET_KEY, USER_HELLO, client_for

Serve = Callable[..., FakeLLMServer]


async def test_a_second_identical_call_sends_no_request(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="first answer", times=1), Rule(text="a different answer")])
    cache = ResponseCache(tmp_path)
    async with client_for(server, cache=cache) as client:
        first = await client.chat(USER_HELLO, seed=1)
        second = await client.chat(USER_HELLO, seed=1)
    assert len(server.requests) == 1
    assert (first.text, second.text) == ("first answer", "first answer")
    assert (first.cached, second.cached) == (False, True)
    assert (second.tokens_in, second.tokens_out) == (first.tokens_in, first.tokens_out)
    tally = client.usage.roles["caller"]
    assert (tally.calls, tally.cached_calls) == (2, 1)
    assert tally.tokens_in == first.tokens_in  # the cached call costs nothing


async def test_a_rerun_in_a_new_client_replays_from_disk(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(structured=True, json={"score": 3}, times=1), Rule(json={"score": 1})])
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    for _ in range(2):
        async with client_for(server, "judge", cache=ResponseCache(tmp_path)) as client:
            reply = await client.chat(USER_HELLO, response_schema=schema)
        assert reply.parsed == {"score": 3}
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 2},
        {"temperature": 0.3},
        {"messages": [{"role": "user", "content": "Hello, I would like to cancel my order."}]},
        {"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]},
        {"params": {"top_p": 0.5}},
    ],
)
async def test_any_change_to_the_request_misses(
    serve: Serve, tmp_path: Path, change: dict[str, object]
) -> None:
    server = serve([Rule(text="ok")])
    async with client_for(server, cache=ResponseCache(tmp_path)) as client:
        await client.chat(USER_HELLO, seed=1)
        kwargs: dict[str, object] = {"seed": 1, **change}
        messages = kwargs.pop("messages", USER_HELLO)
        reply = await client.chat(messages, **kwargs)
    assert not reply.cached
    assert len(server.requests) == 2


def test_the_key_covers_model_and_endpoint_but_not_the_api_key() -> None:
    body = {"model": "m", "messages": USER_HELLO}
    key = request_key("http://a/v1", body)
    assert key == request_key("http://a/v1/", dict(body))
    assert key != request_key("http://b/v1", body)
    assert key != request_key("http://a/v1", {**body, "model": "n"})


async def test_the_agent_under_test_is_not_cached(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="live")])
    async with client_for(server, "agent", cache=ResponseCache(tmp_path)) as client:
        await client.chat(USER_HELLO)
        reply = await client.chat(USER_HELLO)
    assert not reply.cached
    assert len(server.requests) == 2
    assert not any(tmp_path.iterdir())


async def test_the_agent_is_cached_when_its_config_says_so(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="live")])
    cache = ResponseCache(tmp_path)
    async with client_for(server, "agent", cache=cache, settings={"cache": True}) as client:
        await client.chat(USER_HELLO)
        assert (await client.chat(USER_HELLO)).cached
    assert len(server.requests) == 1


async def test_make_client_caches_caller_and_judge_only(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="ok")])
    env = {"POLYGON_BASE_URL": server.base_url, KEY_VAR: SECRET_KEY}
    for role in ("caller", "judge", "agent"):
        env[f"POLYGON_{role.upper()}_MODEL"] = f"m-{role}"
    config_file = tmp_path / "polygon.yaml"
    config_file.write_text(f"llm:\n  cache_dir: {tmp_path / 'cache'}\n  api_key_env: {KEY_VAR}\n")
    settings = load_llm_config(config_file, env)
    for role in ("caller", "judge", "agent"):
        async with make_client(settings, role, env=env) as client:
            await client.chat(USER_HELLO)
            await client.chat(USER_HELLO)
    roles = [r.role for r in server.requests]
    assert roles == ["caller", "judge", "agent", "agent"]
    assert len(ResponseCache(tmp_path / "cache")) == 2


async def test_an_unreadable_answer_is_cached_and_replays_the_same_error(
    serve: Serve, tmp_path: Path
) -> None:
    server = serve([Rule(text="five", times=1), Rule(json={"score": 5})])
    schema = {"type": "object"}
    async with client_for(server, "judge", cache=ResponseCache(tmp_path)) as client:
        for _ in range(2):
            with pytest.raises(LLMFormatError) as caught:
                await client.chat(USER_HELLO, response_schema=schema)
            assert caught.value.raw == "five"
    assert len(server.requests) == 1


async def test_a_damaged_entry_is_fetched_again(serve: Serve, tmp_path: Path) -> None:
    server = serve([Rule(text="ok")])
    cache = ResponseCache(tmp_path)
    async with client_for(server, cache=cache) as client:
        await client.chat(USER_HELLO)
        [(key, _)] = cache.items()
        cache.put(key, b"{ truncated")
        reply = await client.chat(USER_HELLO)
    assert reply.text == "ok"
    assert not reply.cached
    assert len(server.requests) == 2
    assert cache.get(key) is not None
    assert cache.get(key).startswith(b'{"id"')  # type: ignore[union-attr]


def test_many_writers_share_one_cache(tmp_path: Path) -> None:
    # Separate connections, as separate processes would have, writing at once.
    def write(writer: int) -> None:
        cache = ResponseCache(tmp_path)
        for n in range(50):
            cache.put(f"{writer}-{n}", b"body %d %d" % (writer, n))
            cache.put("shared", b"same bytes from everyone")
        cache.close()

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cache = ResponseCache(tmp_path)
    assert len(cache) == 6 * 50 + 1
    assert cache.get("3-49") == b"body 3 49"
    assert cache.get("shared") == b"same bytes from everyone"


def test_an_unusable_cache_is_a_miss_not_an_error(tmp_path: Path) -> None:
    (tmp_path / "responses.sqlite3").write_bytes(b"this is not a database" * 100)
    cache = ResponseCache(tmp_path)
    assert cache.get("k") is None
    cache.put("k", b"v")  # logged, not raised
