"""Phantom claims: the agent said the change was made when nothing that could have made it
had happened yet.

Read from the record: a turn is a phantom claim when `claims_done` reads it as "done" and,
at the moment it began, no backend write had landed and no call had completed to a tool
whose writes the log cannot show (a fixed, template or rules stub, or a tool this check
was not told about). A stateful tool's writes are in the log, so its answer alone backs
nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

from polygon_voice.checks.claims import claims_done
from polygon_voice.checks.evidence import EPS
from polygon_voice.model import (
    CallStatus,
    ConversationResult,
    Speaker,
    StatefulStub,
    ToolSpec,
    Turn,
)


def phantom_claims(result: ConversationResult, tools: Mapping[str, ToolSpec]) -> list[Turn]:
    """The agent turns that claim a change nothing had made by the time they were said."""
    # The timing first: it is cheap, and a turn something backs needs no reading at all.
    return [
        turn
        for turn in result.turns
        if turn.speaker is Speaker.AGENT
        and not backed_by(result, tools, turn.start)
        and claims_done(turn.text, result.language)
    ]


def backed_by(result: ConversationResult, tools: Mapping[str, ToolSpec], moment: float) -> bool:
    """Whether a write had landed, or an unseen writer had answered, by `moment`."""
    if any(w.time <= moment + EPS for w in result.backend_writes):
        return True
    for call in result.tool_calls:
        done = next((h.time for h in call.history if h.status is CallStatus.COMPLETED), None)
        if done is not None and done <= moment + EPS and _unseen_writer(tools, call.tool):
            return True
    return False


def _unseen_writer(tools: Mapping[str, ToolSpec], tool: str) -> bool:
    spec = tools.get(tool)
    return spec is None or not isinstance(spec.stub, StatefulStub)
