"""Planted flaw: after a write the agent checks it again and again, saying the same line.

Each read-back answer starts another read-back (or, without a read tool, the same keyed write
again), announced with the same sentence every time: a real loop, with no caller input.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from polygon_voice.model import Action, Say

try:
    from ._flawed_core import GET_REFUND, LOOKUP, Call, CarefulAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _flawed_core import GET_REFUND, LOOKUP, Call, CarefulAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "loop"
MUST_FAIL = False
SPLIT = "tuning"
DESCRIPTION = "re-checks its write forever, saying 'let me double-check that' each time"
SUITES = ("three-layer", "failure-modes", "examples/order_line/suite.yaml")

CHECK_AGAIN = "Let me just double-check that for you, one moment please."


class Agent(CarefulAgent):
    def on_written(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        yield from self.check_again(call, record)

    def on_verified(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        yield from self.check_again(call, record)

    def check_again(self, call: Call, record: dict[str, Any]) -> Iterator[Action]:
        yield Say(text=CHECK_AGAIN)  # the flaw: the same check, the same words, forever
        if call.tool in (LOOKUP, GET_REFUND):
            yield from self.place(call.tool, call.args, "verify")
            return
        verify = self.verify_call(call, record)
        if verify is not None:
            yield from self.place(*verify, "verify")
        else:
            yield from self.place(call.tool, call.args, "write", key=call.key)
