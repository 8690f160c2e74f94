"""Planted flaw: the agent claims the change is made without ever calling the write tool.

It understands the request, reports its state and may look the order up, then says "All set,
updated" with the values the caller asked for. No write goes out.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, Say

try:
    from ._flawed_core import CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import CarefulAgent  # type: ignore[no-redef, import-not-found]


LABEL = "flawed"
FLAW = "success_claimed_without_write"
MUST_FAIL = True
SPLIT = "tuning"
DESCRIPTION = "says 'All set, updated' but never calls the write tool"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def write(self) -> Iterator[Action]:
        self.done = True
        yield Say(text="All set, updated. " + self.confirmation(self.state).removeprefix("Done: "))
