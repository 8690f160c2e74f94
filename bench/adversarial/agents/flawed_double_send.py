"""Held out. Planted flaw: every write goes out twice, "to be safe", and never with a key.

Right after sending the write the agent sends the same request once more without waiting;
neither copy carries an idempotency key (nor does a retry), so both land.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from polygon_voice.model import Action, PrepareToolCall, SendToolCall

try:
    from ._phase_core import Outgoing, Phase, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Outgoing, Phase, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "missing_idempotency_key"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "sends each write twice in a row, without an idempotency key"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    def key(self, tool: str, args: dict[str, Any]) -> str | None:
        return None

    def retry_key(self, out: Outgoing) -> str | None:
        return None

    async def while_waiting(self, out: Outgoing) -> AsyncIterator[Action]:
        if out.phase is not Phase.WRITING or out.attempt > 1:
            return
        self.serial += 1
        copy = f"c{self.serial}-{out.tool}-again"
        # The flaw: a second, identical, keyless request; its answer is not awaited.
        self.outgoing[copy] = Outgoing(copy, out.tool, out.args, out.phase, None, live=False)
        yield PrepareToolCall(
            call_id=copy, tool=out.tool, args=out.args, state_version=self.version
        )
        yield SendToolCall(call_id=copy)
