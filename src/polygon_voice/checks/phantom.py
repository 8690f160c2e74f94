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
    since = backed_since(result, tools)
    return [
        turn
        for turn in result.turns
        if turn.speaker is Speaker.AGENT
        and (since is None or since > turn.start + EPS)
        and claims_done(turn.text, result.language)
    ]


def backed_by(result: ConversationResult, tools: Mapping[str, ToolSpec], moment: float) -> bool:
    """Whether a write had landed, or an unseen writer had answered, by `moment`."""
    since = backed_since(result, tools)
    return since is not None and since <= moment + EPS


def backed_since(result: ConversationResult, tools: Mapping[str, ToolSpec]) -> float | None:
    """The first moment a write had landed or an unseen writer had answered; None: never.

    One pass over the record for every turn of the call, rather than one per turn."""
    moments = [w.time for w in result.backend_writes]
    for call in result.tool_calls:
        done = next((h.time for h in call.history if h.status is CallStatus.COMPLETED), None)
        if done is not None and _unseen_writer(tools, call.tool):
            moments.append(done)
    return min(moments, default=None)


def _unseen_writer(tools: Mapping[str, ToolSpec], tool: str) -> bool:
    spec = tools.get(tool)
    return spec is None or not isinstance(spec.stub, StatefulStub)
