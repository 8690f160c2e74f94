"""Held out. Planted flaw: the correction is reported, then the call built before it is sent.

The caller corrects a detail (or calls it off) while the write is being built. The agent reports
the change with a new version, and then sends the call it had prepared on the old version instead
of building a new one (or none). Everything else is done right.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.model import Action, SendToolCall

try:
    from ._phase_core import Outgoing, Phase, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Outgoing, Phase, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "stale_tool_args"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "reports a correction (or a call-off), then sends the write prepared before it"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    async def abandon(self, out: Outgoing) -> AsyncIterator[Action]:
        if out.phase is Phase.WRITING and not out.sent:
            out.sent = True  # the flaw: the old call goes out, and stays awaited
            yield SendToolCall(call_id=out.call_id)
            return
        async for action in super().abandon(out):
            yield action

    async def invalidate(self, changed: set[str]) -> AsyncIterator[Action]:
        async for action in super().invalidate(changed):
            yield action
        if any(out.live and out.phase is Phase.WRITING for out in self.outgoing.values()):
            self.phase = Phase.WRITING  # waiting for the stale call's answer
