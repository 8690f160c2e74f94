"""The protocol a simulated caller implements, and the moves it can make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from polygon_voice.model import InterruptPoint, Persona, Turn


@dataclass(frozen=True)
class Speak:
    """Say something when it is the caller's turn."""

    text: str


@dataclass(frozen=True)
class HangUp:
    """End the call; `failure` says why when the caller could not go on (its model failed),
    so the call is recorded as not exercised rather than as the caller's choice.

    `never_spoke`: a caller that hangs up without having said a word of its part, although
    it may have kept silent (a model caller whose silences were no test of their own, unlike
    a script's `silence` step): the call is recorded as not exercised too."""

    failure: str | None = None
    never_spoke: bool = False


@dataclass(frozen=True)
class StaySilent:
    """Say nothing this turn (the agent gets a Silence event)."""


@dataclass(frozen=True)
class Interrupt:
    """Talk over the agent; `text` None is background noise (no words)."""

    text: str | None


CallerMove = Speak | HangUp | StaySilent


@dataclass(frozen=True)
class CallView:
    """What the caller can see of the call so far."""

    persona: Persona
    language: str
    turns: Sequence[Turn]
    now: float


class Caller(Protocol):
    """A simulated caller: answers when it is its turn, may talk over the agent."""

    async def reply(self, view: CallView) -> CallerMove:
        """The caller's move when the agent has finished its turn."""
        ...

    def barge_in(
        self, point: InterruptPoint, view: CallView, tool: str | None = None
    ) -> Interrupt | None:
        """Whether the caller talks over the agent here; `tool` names the call at tool points."""
        ...
