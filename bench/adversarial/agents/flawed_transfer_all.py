"""Held out. Planted flaw: every request is handed to a human straight away.

Whatever the caller wants, the agent transfers the call after the first thing they say; it
never tries the tools itself.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.model import Action, CallerSaid, Say, Transfer

try:
    from ._phase_core import PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "quit_early"
MUST_FAIL = True
SPLIT = "held_out"
DESCRIPTION = "transfers every caller to a human after their first sentence"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    async def on_caller_said(self, event: CallerSaid) -> AsyncIterator[Action]:
        yield Say(text="Let me put you through to a colleague who can help with that.")
        yield Transfer(target="human")  # the flaw: nothing is ever attempted
