"""Held out. Planted flaw: a write answered with an HTTP 500 is reported to the caller as done.

The agent reads any answer to the write as success and confirms the caller's values; it
neither retries nor reads back. The write may or may not have landed.
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
FLAW = "success_claimed_without_write"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "confirms a write that failed with a 500, without retrying"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    async def failed(self, out: Outgoing, event: ToolError) -> AsyncIterator[Action]:
        if out.phase is Phase.WRITING and event.error == "http_500":
            self.phase = Phase.FINISHED  # the flaw: a 500 counts as done
            yield Say(text=f"That's done: order {out.args['order_id']}, {self.describe(out.args)}.")
            yield Say(text="Anything else?")
            return
        async for action in super().failed(out, event):
            yield action
