"""Planted flaw: a write already sent when the caller changes the request is never cancelled.

The agent builds and sends the corrected call, but the running one is only forgotten, not
cancelled, so its write still lands; everything else is done right.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action

try:
    from ._flawed_core import Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import Call, CarefulAgent  # type: ignore[no-redef, import-not-found]


LABEL = "flawed"
FLAW = "inflight_call_not_cancelled"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "forgets a running write after a correction instead of cancelling it"
SUITES = ("three-layer", "failure-modes")


class Agent(CarefulAgent):
    def drop_stale(self, call: Call) -> Iterator[Action]:
        if call.sent:
            call.open = False  # the flaw: stops waiting for it, but never cancels it
            return
        yield from super().drop_stale(call)
