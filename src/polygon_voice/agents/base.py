"""The protocol an agent under test implements, and the context it is built with."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from polygon_voice.model import Action, Event, ToolSpec


@dataclass(frozen=True)
class AgentContext:
    """What an agent learns about the call it is built for."""

    conversation_id: str
    scenario_id: str
    language: str
    seed: int
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    """An agent answers each event with a stream of actions.

    `respond` is normally an async generator, so the engine can stop consuming it at a
    barge-in: actions not yet yielded never happen. A plain function returning a list
    of actions also works; then a barge-in drops the rest of the list.
    """

    def respond(self, event: Event) -> AsyncIterator[Action] | Iterable[Action]:
        """Answer one event with actions."""
        ...


AgentFactory = Callable[[AgentContext], Agent]
