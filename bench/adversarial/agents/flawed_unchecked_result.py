"""Planted flaw: a looked-up record is used as it comes, never read again.

An empty answer counts as zero items, and another order's record is taken as the order to
change (its number goes into the write); everything else is done right.
"""

from __future__ import annotations

from typing import Any

try:
    from ._flawed_core import Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import Call, CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "unchecked_tool_result"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "trusts a wrong or empty lookup answer and builds the write from it"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    def suspicious(self, call: Call, record: dict[str, Any]) -> bool:
        return False  # the flaw: every answer is believed

    def write_args(self) -> dict[str, Any]:
        args = super().write_args()
        if self.checked and "order_id" in self.checked and not self.refund:
            args["order_id"] = str(self.checked["order_id"])  # the record's number wins
        return args
