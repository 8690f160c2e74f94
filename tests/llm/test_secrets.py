"""The API key never reaches reprs, errors, logs, the cache or the fake server's log."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from polygon_voice.llm import LLMRequestError, ResponseCache, load_llm_config
from polygon_voice.testing import FakeLLMServer, Rule
from tests.llm.conftest import KEY_VAR, SECRET_KEY, USER_HELLO, Sleeps, client_for

Serve = Callable[..., FakeLLMServer]


async def test_the_key_appears_nowhere(
    serve: Serve, sleeps: Sleeps, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A server that echoes the key in its errors, as some do for a wrong one.
    echo = f"Incorrect API key provided: {SECRET_KEY}"
    server = serve(
        [
            Rule(error=500, message=echo, times=1),
            Rule(text="ok", times=1),
            Rule(error=401, message=echo),
        ]
    )
    caplog.set_level(logging.DEBUG)
    cache = ResponseCache(tmp_path)
    async with client_for(server, sleeps=sleeps, cache=cache) as client:
        await client.chat(USER_HELLO)
        with pytest.raises(LLMRequestError) as caught:
            await client.chat([{"role": "user", "content": "again"}])
        seen = [repr(client), repr(client.config), str(caught.value)]
    assert "Incorrect API key provided: ***" in str(caught.value)
    seen += [record.getMessage() for record in caplog.records]
    cache.close()
    stored = [p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()]
    assert stored  # the cache database (and its WAL) were written
    assert not any(SECRET_KEY.encode() in data for data in stored)
    seen += [repr(request) for request in server.requests]
    assert any("retry 1 of 4" in text for text in seen)  # the retry was logged
    for text in seen:
        assert SECRET_KEY not in text


def test_settings_hold_the_variable_name_only() -> None:
    settings = load_llm_config(None, {"POLYGON_API_KEY": SECRET_KEY, "POLYGON_JUDGE_MODEL": "m"})
    assert settings.role("judge").api_key_env == "POLYGON_API_KEY"
    for text in (repr(settings), str(settings), settings.model_dump_json()):
        assert SECRET_KEY not in text
    assert KEY_VAR not in repr(settings)


async def test_credentials_in_the_base_url_are_not_shown(sleeps: Sleeps) -> None:
    server = FakeLLMServer().start()
    server.stop()
    url = server.base_url.replace("http://", "http://user:hunter2@")
    async with client_for(server, sleeps=sleeps, settings={"base_url": url, "max_retries": 0}) as c:
        with pytest.raises(LLMRequestError) as caught:
            await c.chat(USER_HELLO)
    assert "hunter2" not in str(caught.value)
    assert caught.value.endpoint == server.base_url
