"""Planted flaw: a call prepared before the caller's correction is sent anyway, stale.

It hears the correction and reports it, but the update it had already built goes out as it
was, and no new one follows; everything else is done right.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, SendToolCall

try:
    from ._flawed_core import Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import Call, CarefulAgent  # type: ignore[no-redef, import-not-found]


LABEL = "flawed"
FLAW = "stale_tool_args"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "sends the write it built before a correction instead of rebuilding it"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def drop_stale(self, call: Call) -> Iterator[Action]:
        if call.purpose == "write" and not call.sent:
            call.sent = True  # the flaw: the call built on the old details goes out
            yield SendToolCall(call_id=call.call_id)
            return
        yield from super().drop_stale(call)
