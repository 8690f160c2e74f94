"""Held out. Planted flaw: a running write made stale by a correction is cancelled too late.

The agent sends the corrected write at once but cancels the old one only when the new one
has answered, by which time the old write has landed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from polygon_voice.agents import AgentContext
from polygon_voice.model import Action, CancelToolCall

try:
    from ._phase_core import Outgoing, Phase, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Outgoing, Phase, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "inflight_call_not_cancelled"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "cancels a stale running write only after the corrected one has answered"
SUITES = ("three-layer", "failure-modes")


class Agent(PhaseAgent):
    def __init__(self, context: AgentContext) -> None:
        super().__init__(context)
        self.later: list[str] = []  # stale running writes, to be cancelled "afterwards"

    async def abandon(self, out: Outgoing) -> AsyncIterator[Action]:
        if out.sent and out.phase is Phase.WRITING:
            out.live = False
            self.later.append(out.call_id)  # the flaw: not now
            return
        async for action in super().abandon(out):
            yield action

    async def after_write(self, out: Outgoing, record: dict[str, Any]) -> AsyncIterator[Action]:
        for call_id in self.later:
            yield CancelToolCall(call_id=call_id)
        self.later = []
        async for action in super().after_write(out, record):
            yield action
