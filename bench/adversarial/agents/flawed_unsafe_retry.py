"""Planted flaw: a write retried after an error carries a new idempotency key.

The first attempt is keyed, but the retry gets a fresh key, so a write that landed behind a
500 or a timeout lands again; everything else is done right.
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
FLAW = "unsafe_retry_after_backend_error"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "retries a failed write with a new idempotency key"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def retry_key(self, call: Call) -> str | None:
        if call.key is None:
            return None
        return f"{call.key}/retry-{call.retries + 1}"  # the flaw: a new key for the same write
