"""An agent behind an HTTP endpoint, spoken to with a small JSON protocol (docs/agents.md).

For every event Polygon POSTs `{"conversation_id", "event", "context"?}` (the context only
with `call_started`) and expects `{"actions": [...]}` back, each action in the shape of
`polygon_voice.model` (`{"kind": "say", "text": "..."}`). Stdlib `urllib` in a worker thread
keeps the HTTP client out of the core dependencies.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

from pydantic import TypeAdapter, ValidationError

from polygon_voice.agents.base import AgentContext
from polygon_voice.model import Action, Event

DEFAULT_TIMEOUT = 10.0
_ACTIONS: TypeAdapter[list[Action]] = TypeAdapter(list[Action])
_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


class HttpAgentError(Exception):
    """The endpoint failed, timed out or answered outside the protocol."""


class HttpAgentFactory:
    """`--agent http://host:port/path`: one `HttpAgent` per call, all posting to `url`."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.url = url
        self.timeout = timeout
        # Set by the runner (the tool server's base URL): sent in the `call_started` context.
        self.tool_server: str | None = None

    def describe(self) -> dict[str, object]:
        """What a run records about the agent."""
        return {"agent_kind": "http", "agent_url": self.url}

    def __call__(self, context: AgentContext) -> HttpAgent:
        tools = None
        if self.tool_server is not None:
            quoted = urllib.parse.quote(context.conversation_id, safe="")
            tools = f"{self.tool_server}/conversations/{quoted}"
        return HttpAgent(self.url, context, timeout=self.timeout, tool_server=tools)


class HttpAgent:
    """Forwards each event to the endpoint and yields the actions it answers with."""

    def __init__(
        self, url: str, context: AgentContext, *, timeout: float, tool_server: str | None = None
    ) -> None:
        self.url = url
        self.context = context
        self.timeout = timeout
        self.tool_server = tool_server

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
        # A thread, so a slow endpoint does not block the event loop and other calls.
        raw = await asyncio.to_thread(self._post, json.dumps(body).encode("utf-8"))
        for action in parse_actions(raw, self.url):
            yield action

    def _post(self, payload: bytes) -> bytes:
        request = urllib.request.Request(
            self.url,
            data=payload,
            headers={"Content-Type": "application/json", "Accept": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as exc:
            raise HttpAgentError(f"agent at {self.url} answered HTTP {exc.code}") from None
        except TimeoutError:
            raise HttpAgentError(
                f"agent at {self.url} gave no answer within {self.timeout:g}s"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise HttpAgentError(f"agent at {self.url} unreachable: {exc}") from None


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
