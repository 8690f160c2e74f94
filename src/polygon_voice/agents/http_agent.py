"""An agent behind an HTTP endpoint, spoken to with a small JSON protocol (docs/agents.md).

For every event Polygon POSTs `{"conversation_id", "event", "context"?}` (the context only
with `call_started`) and expects `{"actions": [...]}` back, each action in the shape of
`polygon_voice.model` (`{"kind": "say", "text": "..."}`). The requests go through a small
asyncio-native client (`http_client`): no thread per request, a total deadline per request, a
byte cap on the answer and a limit on the connections open at once (`AgentLimits`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import urllib.parse
import weakref
from collections.abc import AsyncIterator
from typing import Any

from pydantic import TypeAdapter, ValidationError

from polygon_voice.agents.base import AgentContext
from polygon_voice.agents.http_client import HttpFailure, HttpRefused, post_json
from polygon_voice.masking import mask_secrets, mask_url, url_secrets, without_userinfo
from polygon_voice.model import Action, EngineSettings, Event

DEFAULT_TIMEOUT = 10.0  # when no suite's settings were given (agent_turn_timeout's default)
_ACTIONS: TypeAdapter[list[Action]] = TypeAdapter(list[Action])
_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


class HttpAgentError(Exception):
    """The endpoint failed, timed out or answered outside the protocol."""


class HttpAgentUnreachable(HttpAgentError):
    """No connection to the agent service at all (refused, unknown host): infrastructure,
    not the agent's behaviour; a run counts such calls apart (api/errors.py)."""


class AgentLimits:
    """What one run allows its HTTP agents: bytes per answer and requests open at once.

    One per factory, so per run; the connection slots are a semaphore per event loop, since
    an asyncio semaphore belongs to the loop it is first used on (a factory may serve runs on
    several loops, one after the other)."""

    def __init__(self, settings: EngineSettings | None = None) -> None:
        settings = settings or EngineSettings()
        self.max_reply_bytes = settings.max_reply_bytes
        self.max_connections = settings.max_agent_connections
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """Hold one of the run's connections for the length of a request."""
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self.max_connections)
        return slots


class HttpAgentFactory:
    """`--agent http://host:port/path`: one `HttpAgent` per call, all posting to `url`."""

    def __init__(self, url: str, *, timeout: float | None = None) -> None:
        self.url = url  # as given, credentials included: only ever used to make requests
        self.shown_url = mask_url(url)  # what is recorded, printed and put in errors
        self._timeout = timeout  # None: the suite's agent_turn_timeout (see configure)
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.limits = AgentLimits()
        # Set by the runner (the tool server's base URL): sent in the `call_started` context.
        self.tool_server: str | None = None

    def configure(self, settings: EngineSettings) -> None:
        """Take a suite's limits (the runner calls this before a run): the request deadline
        is `agent_turn_timeout` unless one was given, the byte cap `max_reply_bytes`, the
        connection limit `max_agent_connections`."""
        if self._timeout is None:
            self.timeout = settings.agent_turn_timeout
        self.limits = AgentLimits(settings)

    def describe(self) -> dict[str, object]:
        """What a run records about the agent."""
        return {"agent_kind": "http", "agent_url": self.shown_url}

    def __call__(self, context: AgentContext) -> HttpAgent:
        tools = None
        if self.tool_server is not None:
            quoted = urllib.parse.quote(context.conversation_id, safe="")
            tools = f"{self.tool_server}/conversations/{quoted}"
        return HttpAgent(
            self.url, context, timeout=self.timeout, tool_server=tools, limits=self.limits
        )


class HttpAgent:
    """Forwards each event to the endpoint and yields the actions it answers with."""

    def __init__(
        self,
        url: str,
        context: AgentContext,
        *,
        timeout: float,
        tool_server: str | None = None,
        limits: AgentLimits | None = None,
    ) -> None:
        # user:password@ goes as a Basic Authorization header, never in the request line.
        self.url, login = without_userinfo(url)
        self.shown_url = mask_url(url)
        self._secrets = url_secrets(url)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if login is not None:
            token = base64.b64encode(":".join(login).encode("utf-8")).decode("ascii")
            self._headers["Authorization"] = f"Basic {token}"
        self.context = context
        self.timeout = timeout
        self.tool_server = tool_server
        self.limits = limits or AgentLimits()

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """POST the event; a failure raises, so the engine ends the call with reason error."""
        body: dict[str, Any] = {
            "conversation_id": self.context.conversation_id,
            "event": _EVENT.dump_python(event, mode="json"),
        }
        if event.kind == "call_started":
            body["context"] = {
                "scenario_id": self.context.scenario_id,
                "language": self.context.language,
                "seed": self.context.seed,
                "tools": {
                    name: {"description": spec.description, "parameters": spec.parameters}
                    for name, spec in self.context.tools.items()
                },
            }
            if self.tool_server is not None:
                body["context"]["tool_server"] = self.tool_server
        try:
            raw = await self._post(json.dumps(body).encode("utf-8"))
            actions = parse_actions(raw, self.shown_url)
        except HttpAgentError as exc:
            # Whatever the HTTP stack put in the message, the URL's credentials never leave.
            raise type(exc)(mask_secrets(str(exc), self._secrets)) from None
        for action in actions:
            yield action

    async def _post(self, payload: bytes) -> bytes:
        # A coroutine, not a thread: the deadline cancels it even on a dripping connection,
        # and a stuck endpoint holds nothing the other calls or the run's exit wait for.
        try:
            async with self.limits.slot():
                answer = await post_json(
                    self.url,
                    payload,
                    deadline=self.timeout,
                    max_bytes=self.limits.max_reply_bytes,
                    headers=self._headers,
                )
        except HttpFailure as exc:
            error = HttpAgentUnreachable if isinstance(exc, HttpRefused) else HttpAgentError
            raise error(f"agent at {self.shown_url} {exc}") from None
        if not 200 <= answer.status < 300:
            raise HttpAgentError(f"agent at {self.shown_url} answered HTTP {answer.status}")
        return answer.body


def parse_actions(raw: bytes, url: str = "the agent") -> list[Action]:
    """The `actions` of a response body; HttpAgentError when it is not the protocol."""
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise HttpAgentError(f"{url} answered with no JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("actions", []), list):
        raise HttpAgentError(f'{url} must answer {{"actions": [...]}}')
    try:
        return _ACTIONS.validate_python(data.get("actions", []))
    except ValidationError as exc:
        raise HttpAgentError(f"{url} answered an invalid action: {exc.errors()[0]}") from None
