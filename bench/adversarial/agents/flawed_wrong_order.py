"""Planted flaw: after the caller corrects the order number, the write goes to the old order.

The agent reports the corrected number and looks it up, but builds the write with the first
order number it heard, on the current state version. Everything else is done right.
"""

from __future__ import annotations

from typing import Any

try:
    from ._flawed_core import CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "wrong_field_or_record"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "writes the corrected change to the order number heard first"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    first_order: str | None = None

    def report(self, name: str, value: Any) -> None:
        if name == "order_id" and self.first_order is None:
            self.first_order = value
        super().report(name, value)

    def write_args(self) -> dict[str, Any]:
        args = super().write_args()
        if self.first_order is not None:
            args["order_id"] = self.first_order  # the flaw: the old order keeps the write
        return args
