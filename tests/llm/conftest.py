"""Fixtures for the LLM client tests: a fake server on loopback and a recording sleeper."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from polygon_voice.llm import LLMClient, RetryPolicy, Role, RoleConfig
from polygon_voice.llm.capabilities import forget_capabilities
from polygon_voice.llm.dialects import forget_forms
from polygon_voice.testing import FakeLLMServer, Rule

# A key-shaped secret: the tests assert it never leaves the environment variable.
SECRET_KEY = "sk-test-SECRET-9f8e7d6c5b4a"
KEY_VAR = "POLYGON_TEST_LLM_KEY"


class Sleeps:
    """An injected sleeper: records every wait instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeLLMServer]]:
    """Start fake servers with the given rules; all are stopped after the test."""
    started: list[FakeLLMServer] = []

    def start(rules: Sequence[Rule] = (), **options: Any) -> FakeLLMServer:
        server = FakeLLMServer(list(rules), **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def config_for(server: FakeLLMServer, role: Role = "caller", **settings: Any) -> RoleConfig:
    """A role pointed at the fake server, with the test key's variable."""
    settings.setdefault("model", f"fake-{role}")
    settings.setdefault("api_key_env", KEY_VAR)
    settings.setdefault("base_url", server.base_url)
    return RoleConfig(role=role, **settings)


def client_for(
    server: FakeLLMServer, role: Role = "caller", *, sleeps: Sleeps | None = None, **options: Any
) -> LLMClient:
    """A client of the fake server whose retries never wait (and draw jitter from seed 0)."""
    settings = options.pop("settings", {})
    retry = RetryPolicy(rng=random.Random(0), sleep=sleeps or Sleeps())
    options.setdefault("env", {KEY_VAR: SECRET_KEY})
    return LLMClient(config_for(server, role, **settings), retry=retry, **options)


USER_HELLO = [{"role": "user", "content": "Hello, I would like to change my order."}]


@pytest.fixture(autouse=True)
def fresh_forms() -> Iterator[None]:
    """Each test finds out endpoints' structured-output forms anew (ports are reused)."""
    forget_forms()
    forget_capabilities()
    yield
    forget_forms()
    forget_capabilities()
