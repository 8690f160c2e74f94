"""Planted flaw: after background noise the request is silently dropped.

The noise makes the agent lose what it was doing: it says nothing, reports nothing, and when
the caller speaks again it says goodbye as if all were done. Everything else is right.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, EndCall, Say

try:
    from ._flawed_core import CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import CarefulAgent  # type: ignore[no-redef, import-not-found]


LABEL = "flawed"
FLAW = "request_dropped"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "forgets the request after a barge-in without words and ends the call"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    dropped = False

    def on_noise(self) -> Iterator[Action]:
        if self.state and not self.done:
            self.dropped = True  # the flaw: the request is gone, and nobody is told
        return iter(())

    def on_words(self, text: str) -> Iterator[Action]:
        if self.dropped:
            yield Say(text="Great, thank you for calling. Have a nice day!")
            yield EndCall(reason="done")
            return
        yield from super().on_words(text)
