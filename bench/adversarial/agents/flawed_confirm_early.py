"""Planted flaw: the agent confirms a write a moment after sending it, before any answer.

A one-second timer after the send makes it tell the caller the change is done, from its own
working state; when the answer comes it has nothing more to say. Everything else is right.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from polygon_voice.model import Action, Say, SetTimer

try:
    from ._flawed_core import Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import Call, CarefulAgent  # type: ignore[no-redef, import-not-found]


LABEL = "flawed"
FLAW = "confirmed_before_result"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "confirms the change one second after sending it, before the backend answered"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    def after_send(self, call: Call) -> Iterator[Action]:
        if call.purpose == "write":
            yield SetTimer(name="confirm", seconds=1.0)

    def on_timer(self, name: str) -> Iterator[Action]:
        if self.called_off or not self.ready():
            return
        self.done = True  # the flaw: the caller hears "done" while the write is still out
        yield Say(text=self.confirmation(self.state) + " Anything else?")

    def on_written(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        self.done = True
        return iter(())
