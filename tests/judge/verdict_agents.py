"""Agents that must not pass: written from the README alone, each wrong in one plain way."""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.agents import AgentContext
from polygon_voice.model import Action, CallerSaid, CallStarted, EndCall, Event, Say


class EchoAgent:
    """The README's echo agent: repeats the caller and hangs up, doing nothing."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, how can I help?")
        elif isinstance(event, CallerSaid):
            yield Say(text=f"You said: {event.text}. Goodbye!")
            yield EndCall()


class PhantomAgent:
    """Says the change is made without ever calling a tool."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, order line, how can I help?")
        elif isinstance(event, CallerSaid):
            yield Say(text="All set, I have updated your order. Goodbye!")
            yield EndCall()


class RaisingAgent:
    """Greets, then raises on the caller's first words."""

    def __init__(self, context: AgentContext) -> None:
        self.context = context

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        if isinstance(event, CallStarted):
            yield Say(text="Hello, how can I help?")
        elif isinstance(event, CallerSaid):
            raise RuntimeError("the agent's own bug")
