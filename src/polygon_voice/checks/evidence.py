"""Reading a conversation's record for the three-layer checks: calls, writes, state, turns.

Everything here is computed from the trace and the backend's write log only, never from
what the agent claims about itself (except its spoken words, which are what it claims).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from polygon_voice.model import (
    BackendWrite,
    CallStatus,
    ConversationResult,
    Scenario,
    Speaker,
    StatefulStub,
    ToolCall,
    ToolSpec,
    Turn,
)

Records = dict[str, dict[str, dict[str, Any]]]

EPS = 1e-6
"""Turns are stored rounded to the microsecond; compare instants with this tolerance."""
_TOKEN = re.compile(r"[\w-]+")


def same(a: Any, b: Any) -> bool:
    """Values compare as text ("5590" equals 5590), booleans only with booleans."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a is not None and b is not None and str(a) == str(b)


def tokens(text: str) -> list[str]:
    """Words, numbers and dates of a sentence, lower case ("2026-12-20" stays one token)."""
    return [t.strip("-") for t in _TOKEN.findall(text.lower())]


def records_at(
    result: ConversationResult,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]],
    collection: str,
    until: float | None = None,
) -> dict[str, dict[str, Any]]:
    """A collection as stored at a moment (None: the end, writes after the hang-up included):
    the initial records plus the writes that had landed by then."""
    records = {k: dict(v) for k, v in copy.deepcopy(dict(initial.get(collection, {}))).items()}
    for write in result.backend_writes:
        if write.collection != collection or (until is not None and write.time > until + EPS):
            continue
        if write.op == "delete":
            records.pop(write.record, None)
        else:
            records.setdefault(write.record, {})[write.field] = write.new
    return records


@dataclass(frozen=True)
class WriteOp:
    """One operation on the backend: the writes of one call at one instant."""

    call_id: str
    time: float
    collection: str
    record: str
    op: str
    writes: tuple[BackendWrite, ...]


@dataclass
class CaseView:
    """A conversation seen through its case: the action, its stub, the initial records."""

    result: ConversationResult
    scenario: Scenario
    tools: Mapping[str, ToolSpec]
    initial: Records
    action_tool: str = field(init=False)
    wanted: dict[str, Any] = field(init=False)
    memo: dict[str, Any] = field(init=False, default_factory=dict, repr=False, compare=False)
    """Readings several axes and detectors share (the confirmation), made once per view."""

    def __post_init__(self) -> None:
        action = self.scenario.setup.get("action") or {}
        self.action_tool = str(action.get("tool", ""))
        self.wanted = dict(action.get("args") or {})

    @property
    def should_execute(self) -> bool:
        """Whether a correct system makes the action at all."""
        return self.scenario.expected is None or self.scenario.expected.should_execute

    def stub(self, tool: str) -> StatefulStub | None:
        """The stateful stub behind a tool, if it has one."""
        spec = self.tools.get(tool)
        return spec.stub if spec is not None and isinstance(spec.stub, StatefulStub) else None

    def action_calls(self) -> list[ToolCall]:
        """Calls to the consequential tool that took effect or still could: sent, and
        neither cancelled nor failed before anything of theirs landed."""
        written = {op.call_id for op in self.write_ops()}
        ineffective = (CallStatus.PREPARED, CallStatus.CANCELLED, CallStatus.FAILED)
        return [
            call
            for call in self.result.tool_calls
            if call.tool == self.action_tool
            and (call.status not in ineffective or call.call_id in written)
            and call.status is not CallStatus.PREPARED
        ]

    def write_ops(self) -> list[WriteOp]:
        """The write log grouped into operations, in order."""
        ops: list[WriteOp] = []
        for write in self.result.backend_writes:
            last = ops[-1] if ops else None
            if last and (last.call_id, last.time, last.record) == (
                write.call_id,
                write.time,
                write.record,
            ):
                ops[-1] = WriteOp(*_head(last), (*last.writes, write))
            else:
                ops.append(
                    WriteOp(
                        write.call_id,
                        write.time,
                        write.collection,
                        write.record,
                        write.op,
                        (write,),
                    )
                )
        return ops

    def args_right(self, call: ToolCall) -> bool:
        """Whether a call carries exactly the wanted arguments."""
        if set(call.args) != set(self.wanted):
            return False
        return all(same(call.args[k], v) for k, v in self.wanted.items())

    def sent_at(self, call: ToolCall) -> float | None:
        """When a call was sent."""
        return next((h.time for h in call.history if h.status is CallStatus.SENT), None)

    def version_at_send(self, call: ToolCall) -> int | None:
        """The agent's latest state version when it sent the call (from the trace)."""
        for entry in self.result.trace:
            if entry.kind == "send_tool_call" and entry.data.get("call_id") == call.call_id:
                return entry.state_version
        return None

    def built_on_current(self, call: ToolCall) -> bool:
        """Whether the call was built on the state version current when it was sent."""
        current = self.version_at_send(call)
        return call.state_version is None or current is None or call.state_version == current

    def final_state(self) -> dict[str, Any]:
        """The agent's working state at the end: the last reported value of each field."""
        state: dict[str, Any] = {}
        for update in self.result.state_updates:
            state[update.field] = update.value
        return state

    def snapshot(self, collection: str, until: float | None = None) -> dict[str, dict[str, Any]]:
        """The collection as stored at a moment (initial records plus writes up to then)."""
        return records_at(self.result, self.initial, collection, until)

    def agent_turns(self) -> list[Turn]:
        """What the agent said, in order."""
        return [t for t in self.result.turns if t.speaker is Speaker.AGENT]

    def caller_turns(self) -> list[Turn]:
        """What the caller said, in order."""
        return [t for t in self.result.turns if t.speaker is Speaker.CALLER]

    def responses_to(self, kind: str) -> Iterator[tuple[float, list[dict[str, Any]]]]:
        """For each event of `kind`, the actions of the agent's response to it."""
        trace = self.result.trace
        for position, entry in enumerate(trace):
            if entry.kind != kind:
                continue
            actions = []
            for later in trace[position + 1 :]:
                if later.source != "agent":
                    break
                actions.append({"kind": later.kind, **later.data})
            yield entry.time, actions


def _head(op: WriteOp) -> tuple[str, float, str, str, str]:
    return op.call_id, op.time, op.collection, op.record, op.op
