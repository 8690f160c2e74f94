"""The scripted caller: plays a scenario's script, needs no model.

A script is read in order. `say`, `silence` and `hangup` steps are played when it is
the caller's turn. A `barge_in` step is *armed* when it reaches the head of the
script and fires at the next matching point of the agent's action stream; while it
waits, the caller goes on with its following lines. When the script runs out the
caller hangs up; a barge-in that never found its point is reported by `unfired()`.
"""

from __future__ import annotations

from polygon_voice.caller.base import (
    CallerMove,
    CallView,
    HangUp,
    Interrupt,
    Speak,
    StaySilent,
)
from polygon_voice.caller.events import BargeInQueue
from polygon_voice.model import BargeInStep, InterruptPoint, ScriptStep


class ScriptedCaller:
    """Plays `script` step by step; deterministic."""

    def __init__(self, script: list[ScriptStep]) -> None:
        self._steps = list(script)
        self._next = 0
        self._armed = BargeInQueue()

    async def reply(self, view: CallView) -> CallerMove:
        """Play the next say/silence/hangup step; hang up when the script is done."""
        self._arm()
        if self._next >= len(self._steps):
            return HangUp()
        step = self._steps[self._next]
        self._next += 1
        if step.say is not None:
            return Speak(step.say)
        if step.silence:
            return StaySilent()
        return HangUp()

    def barge_in(
        self, point: InterruptPoint, view: CallView, tool: str | None = None
    ) -> Interrupt | None:
        """Fire the first armed barge-in that waits for this point (and this tool, if named)."""
        self._arm()
        return self._armed.fire(point, tool)

    def unfired(self) -> list[BargeInStep]:
        """Barge-ins whose point never came (armed or still ahead in the script)."""
        ahead = [s.barge_in for s in self._steps[self._next :] if s.barge_in is not None]
        return [*self._armed.pending, *ahead]

    def _arm(self) -> None:
        while self._next < len(self._steps):
            step = self._steps[self._next]
            if step.barge_in is None:
                return
            self._armed.arm(step.barge_in)
            self._next += 1
