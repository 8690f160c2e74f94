"""Planted flaw: background noise over the agent is taken for the caller cutting in.

The agent thinks the caller wants to start over: it clears the details it had (reporting
each as None) and asks again; everything else is done right.
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
FLAW = "noise_taken_as_interruption"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "treats a barge-in without words as the caller starting over and clears its state"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    def on_noise(self) -> Iterator[Action]:
        for name in list(self.state):
            self.report(name, None)  # the flaw: noise wipes the request
            del self.state[name]
        self.refund = False
        self.add_items = None
        self.checked = None
        yield from self.flush()
        yield Say(text="Sorry, go ahead please. What would you like to change?")
