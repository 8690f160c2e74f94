"""Planted flaw: the confirmation is spoken in the same turn as the read-back, after the send.

"I am putting through ... All set, order 5590 now has 3 items": the write was sent but has
not answered when the caller hears that it is done. Everything else is done right.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from polygon_voice.model import Action, Say

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
DESCRIPTION = "says 'all set' in the read-back turn, right after sending the write"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    def after_send(self, call: Call) -> Iterator[Action]:
        if call.purpose == "write":
            self.done = True
            yield Say(text="All set: " + self.confirmation(self.state).removeprefix("Done: "))

    def on_written(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        return iter(())  # already "confirmed"
