"""The replay's caller: plays the recorded caller lines in order, and marks where they stop
fitting the new agent (the rule of `replay.mismatch`).

Before each line it compares the new agent's turn with the recorded one. On a mismatch it
writes a `replay_mismatch` trace entry (the turn, the line, the rule and the reason) and then,
by `--on-mismatch`: plays the line anyway (`continue`), ends the call there (`stop`), or
hands the call to the LLM caller (`llm`), seeded with the conversation so far and given the
lines it had not played yet as its goal. Recorded interruptions are not replayed: a barge-in
needs the agent's speech at the same moment, which a new agent does not reproduce.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from polygon_voice.caller.base import Caller, CallerMove, CallView, HangUp, Interrupt, Speak
from polygon_voice.model import InterruptPoint, Persona, Speaker
from polygon_voice.replay.mismatch import Exchange, Mismatch, mismatch
from polygon_voice.replay.plan import ReplayedCall

OnMismatch = Literal["continue", "stop", "llm"]
ON_MISMATCH: tuple[OnMismatch, ...] = ("continue", "stop", "llm")
MISMATCH_KIND = "replay_mismatch"
HANDOVER_KIND = "replay_handover"
_SHOWN = 200  # characters of each turn a mismatch entry quotes
_GOAL_LINE = 500  # characters of each remaining line the LLM caller's goal quotes


@dataclass
class ReplayHooks:
    """What the caller may do to its call: note in the trace, end the call with a message."""

    note: Callable[[str, dict[str, Any]], None]
    stop: Callable[[str], None]


@dataclass
class ReplayCaller:
    """Plays one recorded call's caller lines against the new agent."""

    call: ReplayedCall
    on_mismatch: OnMismatch
    hooks: ReplayHooks
    # Builds the LLM caller for a hand-over (None: no caller model; `llm` is refused earlier).
    llm_caller: Callable[[Persona], Caller] | None = None
    marks: list[Mismatch] = field(default_factory=list)
    _next: int = 0
    _handed: Caller | None = None

    async def reply(self, view: CallView) -> CallerMove:
        """The next recorded line, unless it no longer fits and the caller must not play it."""
        if self._handed is not None:
            return await self._handed.reply(view)
        lines = self.call.lines
        if self._next >= len(lines):
            return HangUp()
        found = self._check(view)
        if found is not None:
            move = await self._on_mismatch(found, view)
            if move is not None:
                return move
        line = lines[self._next]
        self._next += 1
        return Speak(line)

    def barge_in(
        self, point: InterruptPoint, view: CallView, tool: str | None = None
    ) -> Interrupt | None:
        """Never: the recorded interruptions do not fit a new agent's speech."""
        return None

    def _check(self, view: CallView) -> Mismatch | None:
        k = self._next
        played = [Exchange(self.call.agent_before[i], self.call.lines[i]) for i in range(k)]
        new = _agent_since_caller(view)
        return mismatch(
            self.call.agent_before[k], new, played, self.call.lines[k], self.call.language
        )

    async def _on_mismatch(self, found: Mismatch, view: CallView) -> CallerMove | None:
        self.marks.append(found)
        line = self._next + 1
        self.hooks.note(
            MISMATCH_KIND,
            {
                "turn": _answer_turn(view),
                "line": line,
                "rule": found.rule,
                "reason": found.reason,
                "recorded": _short(self.call.agent_before[self._next]),
                "new": _short(_agent_since_caller(view)),
                "next_line": _short(self.call.lines[self._next]),
                "action": self.on_mismatch,
            },
        )
        if self.on_mismatch == "stop":
            self.hooks.stop(f"replay stopped before recorded caller line {line}: {found.reason}")
            return HangUp()
        if self.on_mismatch == "llm" and self.llm_caller is not None:
            self._handed = self.llm_caller(self._persona())
            self.hooks.note(
                HANDOVER_KIND, {"line": line, "remaining": len(self.call.lines) - line + 1}
            )
            return await self._handed.reply(view)
        return None

    def _persona(self) -> Persona:
        """The caller the model plays: the recorded caller, with the lines still to say as its
        goal and every recorded line as a fact (so numbers it repeats pass the guard rails)."""
        remaining = self.call.lines[self._next :]
        goal = "You called about this and still meant to say, in this order: " + " | ".join(
            _cut(line, _GOAL_LINE) for line in remaining
        )
        facts: dict[str, str | int | float | bool] = {
            f"line_{i}": _cut(line, _GOAL_LINE) for i, line in enumerate(self.call.lines, 1)
        }
        return Persona(goal=goal, facts=dict(facts), language=self.call.language)


def _agent_since_caller(view: CallView) -> str:
    said: list[str] = []
    for turn in reversed(view.turns):
        if turn.speaker is Speaker.CALLER:
            break
        said.append(turn.text)
    return " ".join(reversed(said))


def _answer_turn(view: CallView) -> int:
    """The index of the new agent's first turn since the caller's last line: where its answer
    began (where that turn would be, when it said nothing)."""
    first = len(view.turns)
    for turn in reversed(view.turns):
        if turn.speaker is Speaker.CALLER:
            break
        first = turn.index
    return first


def _short(text: str) -> str:
    return _cut(text, _SHOWN)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
