"""Held out. Planted flaw: background noise over the agent is heard as the caller objecting.

The agent reports that the request is off (execute false) and waits; when the caller tells
it to go ahead it reports execute true again and does the job.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.model import Action, CallerSaid, Say, UpdateState

try:
    from ._phase_core import Phase, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Phase, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "noise_taken_as_interruption"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "takes noise over the read-back as 'stop', reports execute=false until told to go on"
SUITES = ("three-layer", "failure-modes")


class Agent(PhaseAgent):
    held = False

    async def on_noise(self) -> AsyncIterator[Action]:
        if not self.request or self.phase is Phase.FINISHED:
            return
        self.held = True
        self.version += 1
        yield UpdateState(field="execute", value=False, version=self.version)  # the flaw
        yield Say(text="Oh, sorry, I'll hold off then.")

    async def on_caller_said(self, event: CallerSaid) -> AsyncIterator[Action]:
        if self.held and "ahead" in event.text.lower():
            self.held = False
            self.version += 1
            yield UpdateState(field="execute", value=True, version=self.version)
        async for action in super().on_caller_said(event):
            yield action
