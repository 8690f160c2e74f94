"""Scripted barge-ins: armed steps that fire at the next matching point of the agent.

Shared by the scripted caller (its script's `barge_in` steps, armed in script order) and
the persona caller (a scenario's `barge_in` steps as events, all armed from the start).
"""

from __future__ import annotations

from collections.abc import Iterable

from polygon_voice.caller.base import Interrupt
from polygon_voice.model import BargeInStep, InterruptPoint


class BargeInQueue:
    """Armed barge-ins; the first that waits for a point (and tool, and call) fires once."""

    def __init__(self, steps: Iterable[BargeInStep] = ()) -> None:
        self._armed = list(steps)
        self._points: dict[tuple[InterruptPoint, str | None], int] = {}

    def arm(self, step: BargeInStep) -> None:
        """Wait for this step's point from now on."""
        self._armed.append(step)

    def fire(self, point: InterruptPoint, tool: str | None) -> Interrupt | None:
        """The barge-in for this point, if one is armed for it; counts the point either way."""
        seen = self._points[(point, tool)] = self._points.get((point, tool), 0) + 1
        for position, armed in enumerate(self._armed):
            if armed.on_call is not None and armed.on_call != seen:
                continue
            if armed.at is point and armed.tool in (None, tool):
                del self._armed[position]
                return Interrupt(armed.say)
        return None

    @property
    def pending(self) -> list[BargeInStep]:
        """Armed steps whose point has not come yet."""
        return list(self._armed)
