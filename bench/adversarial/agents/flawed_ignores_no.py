"""Held out. Planted flaw: "no, don't" is not understood; the prepared write is sent anyway.

The caller calls the request off while the call is being built; the agent hears nothing it
knows, carries on and sends the call it had prepared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from polygon_voice.model import Action, Say, SendToolCall

try:
    from ._phase_core import PhaseAgent
except ImportError:  # loaded as a file: polygon run SUITE --agent path/to/this.py:Agent
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _phase_core import PhaseAgent  # type: ignore[no-redef, import-not-found]

LABEL = "flawed"
FLAW = "stale_tool_args"
MUST_FAIL = False
SPLIT = "held_out"
DESCRIPTION = "ignores 'no, don't' and sends the write it had prepared"
SUITES = ("three-layer", "failure-modes")


class Agent(PhaseAgent):
    async def stop(self) -> AsyncIterator[Action]:
        prepared = [out for out in self.live_calls() if not out.sent]
        yield Say(text="Alright, carrying on.")
        for out in prepared:
            out.sent = True  # the flaw: the call the caller just stopped goes out
            yield SendToolCall(call_id=out.call_id)
        if not prepared:
            async for action in self.advance():
                yield action
