"""Hand-built conversation records for the three-layer checks.

`TraceBuilder` writes what the engine would have recorded: turns, tool calls with their
lifecycle, state updates, backend writes, and the trace entries the checks read:

* `update_state` agent actions (with the reported version),
* `prepare_tool_call` / `send_tool_call` / `cancel_tool_call` agent actions; every trace entry
  carries the agent's state version *at that moment* (the last version reported before it),
  which is where `CaseView.version_at_send` reads the version a call was sent on,
* `caller_said` and `barge_in` events (`data.text` is None for background noise),
  `tool_result` / `tool_error` events, and `say` actions for agent turns.

Entries are ordered by time; at the same instant events come first, then the agent's answer
in the engine's order (state updates, prepares, sends, cancels, speech), each group in the
order the builder was told. So `.barge_in(at=9).state(..., at=9)` puts the state update
right after the barge-in, as `CaseView.responses_to` expects.

Caller and agent turns last `TURN_SECONDS` unless `end=` is given; a caller turn's event
(`caller_said`, or `barge_in` for a worded barge-in) is recorded when the turn ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from polygon_voice.model import (
    BackendWrite,
    CallEnd,
    CallStatus,
    ConversationResult,
    EndReason,
    FaultKind,
    Speaker,
    StateUpdate,
    StatusChange,
    ToolCall,
    ToolErrorKind,
    TraceEntry,
    Turn,
)

TURN_SECONDS = 2.0

Source = Literal["engine", "caller", "agent", "tools"]
WriteKind = Literal["update", "create", "delete"]

# At one instant: events first, then the agent's actions in the engine's order.
_ORDER = {
    "update_state": 1,
    "prepare_tool_call": 2,
    "send_tool_call": 3,
    "cancel_tool_call": 4,
    "say": 5,
    "end_call": 6,
}


@dataclass
class _Entry:
    time: float
    source: Source
    kind: str
    data: dict[str, Any]

    def group(self) -> int:
        return _ORDER.get(self.kind, 7) if self.source == "agent" else 0


@dataclass
class _Write:
    collection: str
    record: str
    field: str
    old: Any
    new: Any
    call_id: str
    time: float
    op: WriteKind
    version: int | None


@dataclass
class TraceBuilder:
    """A fluent builder of one `ConversationResult`; every method returns the builder."""

    scenario_id: str
    language: str = "en"
    _turns: list[tuple[float, float, Speaker, str, bool]] = field(default_factory=list)
    _calls: list[ToolCall] = field(default_factory=list)
    _updates: list[StateUpdate] = field(default_factory=list)
    _writes: list[_Write] = field(default_factory=list)
    _entries: list[_Entry] = field(default_factory=list)
    _end: float | None = None

    # --- speech ------------------------------------------------------------------------------

    def caller(self, text: str, *, at: float, end: float | None = None) -> TraceBuilder:
        """The caller says `text` from `at` (a `caller_said` event when the turn ends)."""
        stop = at + TURN_SECONDS if end is None else end
        self._turns.append((at, stop, Speaker.CALLER, text, False))
        self._entry(stop, "caller", "caller_said", {"text": text})
        return self

    def barge_in(
        self,
        text: str | None = None,
        *,
        at: float,
        end: float | None = None,
        point: str = "mid_speech",
    ) -> TraceBuilder:
        """The caller talks over the agent. Without `text` it is background noise: no turn, a
        `barge_in` event at `at`. With `text` it is a caller turn from `at` (marked
        `barge_in`), and the event comes when the turn ends."""
        if text is None:
            self._entry(at, "caller", "barge_in", {"point": point, "text": None})
            return self
        stop = at + TURN_SECONDS if end is None else end
        self._turns.append((at, stop, Speaker.CALLER, text, True))
        self._entry(stop, "caller", "barge_in", {"point": point, "text": text})
        return self

    def agent(self, text: str, *, at: float, end: float | None = None) -> TraceBuilder:
        """The agent says `text` from `at` (a `say` action)."""
        stop = at + TURN_SECONDS if end is None else end
        self._turns.append((at, stop, Speaker.AGENT, text, False))
        self._entry(at, "agent", "say", {"text": text})
        return self

    def agent_chunks(self, chunks: list[tuple[str, float]], *, end: float) -> TraceBuilder:
        """One agent turn (one response) spoken in chunks, each `(text, at)` a `say` action:
        other actions can fall between them, as in a real response."""
        text = " ".join(chunk for chunk, _ in chunks)
        self._turns.append((chunks[0][1], end, Speaker.AGENT, text, False))
        for chunk, at in chunks:
            self._entry(at, "agent", "say", {"text": chunk})
        return self

    def note(self, kind: str, data: dict[str, Any], *, at: float) -> TraceBuilder:
        """A note the engine records for the caller's side (e.g. `script_unplayed`)."""
        self._entry(at, "caller", kind, data)
        return self

    # --- the agent's working state -------------------------------------------------------------

    def state(self, name: str, value: Any, *, version: int, at: float) -> TraceBuilder:
        """The agent reports `name=value` as state version `version` (an `update_state`)."""
        self._updates.append(StateUpdate(field=name, value=value, version=version, time=at))
        data = {"field": name, "value": value, "version": version}
        self._entry(at, "agent", "update_state", data)
        return self

    # --- tool calls ------------------------------------------------------------------------------

    def call(
        self,
        call_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        version: int | None = None,
        key: str | None = None,
        prepared: float | None = None,
        sent: float | None = None,
        completed: float | None = None,
        failed: float | None = None,
        timed_out: float | None = None,
        cancelled: float | None = None,
        fault: FaultKind | None = None,
        result: Any = None,
        error: ToolErrorKind | None = None,
    ) -> TraceBuilder:
        """A tool call built on state `version` with idempotency `key`. Its lifecycle is given
        by the times: `prepared` (defaults to `sent`), `sent`, then at most one of `completed`,
        `failed`, `timed_out`, with `cancelled` possibly after any of them but a finish."""
        start = sent if prepared is None else prepared
        if start is None:
            raise ValueError("a call needs `prepared` or `sent`")
        outcomes = [t for t in (completed, failed, timed_out) if t is not None]
        if len(outcomes) > 1 or (outcomes and sent is None):
            raise ValueError("a sent call has at most one outcome")
        history = [StatusChange(status=CallStatus.PREPARED, time=start)]
        self._entry(
            start,
            "agent",
            "prepare_tool_call",
            {
                "call_id": call_id,
                "tool": tool,
                "args": args,
                "state_version": version,
                "idempotency_key": key,
            },
        )
        if sent is not None:
            history.append(StatusChange(status=CallStatus.SENT, time=sent))
            self._entry(sent, "agent", "send_tool_call", {"call_id": call_id})
        if completed is not None:
            history.append(StatusChange(status=CallStatus.COMPLETED, time=completed))
            self._entry(
                completed,
                "tools",
                "tool_result",
                {"call_id": call_id, "result": result, "late": False},
            )
        for status, when, default in (
            (CallStatus.FAILED, failed, ToolErrorKind.HTTP_500),
            (CallStatus.TIMED_OUT, timed_out, ToolErrorKind.TIMEOUT),
        ):
            if when is not None:
                error = error or default
                history.append(StatusChange(status=status, time=when))
                data = {"call_id": call_id, "error": error.value, "message": ""}
                self._entry(when, "tools", "tool_error", data)
        if cancelled is not None:
            if outcomes:
                raise ValueError("a finished call cannot be cancelled")
            history.append(StatusChange(status=CallStatus.CANCELLED, time=cancelled))
            self._entry(cancelled, "agent", "cancel_tool_call", {"call_id": call_id})
        number = 1 + sum(1 for c in self._calls if c.tool == tool)
        self._calls.append(
            ToolCall(
                call_id=call_id,
                tool=tool,
                args=args,
                state_version=version,
                idempotency_key=key,
                status=history[-1].status,
                history=history,
                fault=fault,
                result=result,
                error=error,
                number=number,
            )
        )
        return self

    # --- the backend's write log -----------------------------------------------------------------

    def write(
        self,
        collection: str,
        record: str,
        name: str,
        old: Any,
        new: Any,
        *,
        call: str,
        at: float,
        op: WriteKind = "update",
        version: int | None = None,
    ) -> TraceBuilder:
        """One field written by `call` at `at` (writes of one call at one instant on one record
        form one operation). The idempotency key is the call's; the version is counted."""
        self._writes.append(_Write(collection, record, name, old, new, call, at, op, version))
        return self

    def create(
        self, collection: str, record: str, fields: dict[str, Any], *, call: str, at: float
    ) -> TraceBuilder:
        """A record created by `call` at `at`: one `create` write per field."""
        for name, value in fields.items():
            self.write(collection, record, name, None, value, call=call, at=at, op="create")
        return self

    def end(self, at: float) -> TraceBuilder:
        """When the call ended (default: one second after the last thing that happened)."""
        self._end = at
        return self

    # --- the record ------------------------------------------------------------------------------

    def build(self) -> ConversationResult:
        """The conversation record."""
        entries = sorted(enumerate(self._entries), key=lambda p: (p[1].time, p[1].group(), p[0]))
        times = [e.time for e in self._entries] + [w.time for w in self._writes]
        end = self._end if self._end is not None else max(times, default=0.0) + 1.0
        trace: list[TraceEntry] = [
            TraceEntry(seq=0, time=0.0, source="engine", kind="call_started")
        ]
        version: int | None = None
        for _, entry in entries:
            trace.append(
                TraceEntry(
                    seq=len(trace),
                    time=entry.time,
                    source=entry.source,
                    kind=entry.kind,
                    data=entry.data,
                    state_version=version,
                )
            )
            if entry.kind == "update_state":
                version = entry.data["version"]
        trace.append(
            TraceEntry(
                seq=len(trace),
                time=end,
                source="engine",
                kind="call_ended",
                data={"reason": EndReason.AGENT_HANGUP.value, "message": ""},
                state_version=version,
            )
        )
        turns = [
            Turn(
                index=index,
                speaker=speaker,
                text=text,
                heard=text,
                start=start,
                end=stop,
                barge_in=barge_in,
            )
            for index, (start, stop, speaker, text, barge_in) in enumerate(
                sorted(self._turns, key=lambda t: t[0])
            )
        ]
        return ConversationResult(
            id=f"{self.scenario_id}-0",
            scenario_id=self.scenario_id,
            seed=0,
            language=self.language,
            end=CallEnd(reason=EndReason.AGENT_HANGUP, time=end),
            turns=turns,
            tool_calls=list(self._calls),
            state_updates=sorted(self._updates, key=lambda u: u.time),
            backend_writes=self._backend_writes(),
            trace=trace,
        )

    def _backend_writes(self) -> list[BackendWrite]:
        keys = {c.call_id: c.idempotency_key for c in self._calls}
        ops: dict[tuple[str, str], list[tuple[str, float]]] = {}
        created: set[tuple[str, str]] = set()
        writes: list[BackendWrite] = []
        for write in sorted(self._writes, key=lambda w: w.time):
            record = (write.collection, write.record)
            done = ops.setdefault(record, [])
            if not done and write.op == "create":
                created.add(record)
            if (write.call_id, write.time) not in done:
                done.append((write.call_id, write.time))
            # Given records start at version 1, created ones at 1 with their creation.
            counted = len(done) + (0 if record in created else 1)
            writes.append(
                BackendWrite(
                    seq=len(writes),
                    collection=write.collection,
                    record=write.record,
                    field=write.field,
                    old=write.old,
                    new=write.new,
                    version=write.version if write.version is not None else counted,
                    idempotency_key=keys.get(write.call_id),
                    time=write.time,
                    call_id=write.call_id,
                    op=write.op,
                )
            )
        return writes

    def _entry(self, time: float, source: Source, kind: str, data: dict[str, Any]) -> None:
        self._entries.append(_Entry(time, source, kind, data))
