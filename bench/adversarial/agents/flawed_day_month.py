"""Held out. Planted flaw: dates are written with day and month swapped (YYYY-DD-MM).

The agent hears and repeats the date correctly, but formats it for the backend the wrong
way round, so a valid-looking but wrong date is written on the current state version.
"""

from __future__ import annotations

from typing import Any

try:
    from ._phase_core import PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "wrong_field_or_record"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "writes delivery dates as YYYY-DD-MM"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(PhaseAgent):
    def write_args(self) -> dict[str, Any]:
        args = super().write_args()
        if "delivery_date" in args:
            year, month, day = str(args["delivery_date"]).split("-")
            args["delivery_date"] = f"{year}-{day}-{month}"  # the flaw
        return args
