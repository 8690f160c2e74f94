"""Planted flaw: no write ever carries an idempotency key.

A request the network delivers twice writes twice, and a retry after a 500 or a timeout
writes again; everything else (retrying once, reading back, confirming) is done right.
"""

from __future__ import annotations

try:
    from ._flawed_core import Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import Call, CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "missing_idempotency_key"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "never sends an idempotency key, first attempts and retries alike"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def key_for(self, tool: str) -> str | None:
        return None

    def retry_key(self, call: Call) -> str | None:
        return None
