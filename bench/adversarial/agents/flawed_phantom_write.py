"""Planted flaw: the write is built but never sent, and the agent confirms it anyway.

The trace shows a prepared write with the right arguments on the current version, so the call
looks handled; it is never sent, nothing lands, and the caller hears that it is saved.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, PrepareToolCall, Say

try:
    from ._flawed_core import REFUND, UPDATE, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import REFUND, UPDATE, CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "phantom_write"
MUST_FAIL = True
SPLIT = "tuning"
DESCRIPTION = "prepares the write, never sends it, and says it is saved"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def write(self) -> Iterator[Action]:
        tool = REFUND if self.refund else UPDATE
        yield Say(text=self.read_back())
        self.read_backs += 1
        self.counter += 1
        yield PrepareToolCall(
            call_id=f"{tool}-{self.counter}",
            tool=tool,
            args=self.write_args(),
            state_version=self.version,
            idempotency_key=self.key_for(tool),
        )
        # The flaw: no SendToolCall, yet the caller is told the change is stored.
        self.done = True
        yield Say(text="Your change is saved. " + self.confirmation(self.state))
