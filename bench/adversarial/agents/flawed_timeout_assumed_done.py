"""Held out. Planted flaw: a write that timed out is taken as done, and confirmed at once.

After a timeout the agent tells the caller the change is made (it assumes the backend will
catch up), with the values the caller asked for; no retry, no read-back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.model import Action, Say, ToolError

try:
    from ._phase_core import Outgoing, Phase, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Outgoing, Phase, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "confirmed_before_result"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "after a write times out, assumes it went through and confirms"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    async def failed(self, out: Outgoing, event: ToolError) -> AsyncIterator[Action]:
        if out.phase is Phase.WRITING and event.error == "timeout":
            self.phase = Phase.FINISHED  # the flaw: "it will go through"
            order = out.args["order_id"]
            yield Say(text="Our system is a bit slow, but it is going through.")
            yield Say(text=f"Order {order} now has {self.describe(out.args)}.")
            return
        async for action in super().failed(out, event):
            yield action
