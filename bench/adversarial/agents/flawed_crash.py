"""Planted flaw: the agent raises an exception on the first tool answer it reads.

It expects a field the backend never sends (`order_reference`) and fails with a KeyError in
the middle of the call; up to that point it behaves well.
"""

from __future__ import annotations

from collections.abc import Iterator

from polygon_voice.model import Action, ToolResult

try:
    from ._flawed_core import CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "agent_error"
MUST_FAIL = True
SPLIT = "tuning"
DESCRIPTION = "raises KeyError on the first tool result (expects a field that is not there)"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")


class Agent(CarefulAgent):
    def on_result(self, event: ToolResult) -> Iterator[Action]:
        record = event.result if isinstance(event.result, dict) else {}
        reference = record["order_reference"]  # the flaw: no such field; KeyError mid-call
        self.state["reference"] = reference
        yield from super().on_result(event)
