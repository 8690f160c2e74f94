"""Held out. Planted flaw: a suspicious record is read again, but the write uses the first one.

The agent notices another order's record and reads it once more, yet keeps the number from
the first answer it cached and writes the caller's change to that order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from polygon_voice.agents import AgentContext
from polygon_voice.model import Action

try:
    from ._phase_core import Outgoing, PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import Outgoing, PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "wrong_field_or_record"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "re-reads a wrong record but writes to the order of the first (wrong) answer"
SUITES = ("three-layer", "failure-modes")


class Agent(PhaseAgent):
    def __init__(self, context: AgentContext) -> None:
        super().__init__(context)
        self.first_answers: dict[str, dict[str, Any]] = {}

    async def after_check(self, out: Outgoing, record: dict[str, Any]) -> AsyncIterator[Action]:
        if record:
            # Cached per order asked for, and never let go of: the re-read does not replace it.
            self.first_answers.setdefault(str(out.args["order_id"]), record)
        async for action in super().after_check(out, record):
            yield action

    def write_args(self) -> dict[str, Any]:
        args = super().write_args()
        cached = self.first_answers.get(str(args["order_id"]))
        if cached and "order_id" in cached and not self.refund:
            args["order_id"] = str(cached["order_id"])  # the flaw: the first answer's order
        return args
