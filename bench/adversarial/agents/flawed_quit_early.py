"""Planted flaw: the agent hangs up right after the caller's first request.

It hears the request, reports the details and promises to see to it, then ends the call
before doing anything.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, EndCall, Say

try:
    from ._flawed_core import CarefulAgent, hear
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import CarefulAgent, hear  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "quit_early"
MUST_FAIL = True
SPLIT = "tuning"
DESCRIPTION = "reports the request, promises to handle it, hangs up after the first caller line"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    quitting = False

    def on_words(self, text: str) -> Iterator[Action]:
        self.take(hear(text))
        yield from self.flush()
        yield from self.quit()

    def on_noise(self) -> Iterator[Action]:
        if self.quitting:  # noise cut the goodbye: it still leaves, nothing done
            yield from self.quit()

    def quit(self) -> Iterator[Action]:
        self.quitting = True
        yield Say(text="Thank you, I will take care of that. Goodbye!")
        yield EndCall(reason="request noted")  # the flaw: nothing was done
