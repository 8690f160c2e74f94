"""One conversation's tool calls: prepare, send, cancel, and outcomes on the virtual clock.

* `ToolRuntime.prepare` checks the arguments against the tool's JSON Schema and records
  ``args_valid`` / ``arg_errors`` on the new `ToolCall` (status PREPARED). ``number`` is the
  1-based count of calls prepared for that tool in this runtime.
* `ToolRuntime.send` (status SENT) draws the latency, picks the fault (``call.fault``) and
  schedules the call's steps (see `polygon_voice.tools.timeline`) on a heap.
* `ToolRuntime.advance` applies every step due by ``now`` in (time, scheduling order): writes
  land in the backend, and the events due are returned. When a call's first outcome event is
  returned, its status becomes COMPLETED (ToolResult), TIMED_OUT (TIMEOUT) or FAILED (any other
  ToolError), with ``result`` or ``error`` / ``error_message`` set. A late result after a
  timeout leaves the status TIMED_OUT and ``error`` TIMEOUT, and sets ``result`` and
  ``late_result_at``.
* `ToolRuntime.cancel` of a PREPARED or SENT call (status CANCELLED) drops its steps not yet
  applied: writes not yet landed never land, undelivered events are never delivered; a write
  that already landed stays. A call that is finished (completed, failed, timed out, cancelled)
  is left alone: after a timeout the request is already out of the agent's hands, so a write
  still in flight lands and a late result still arrives.
* Every status change is appended to ``call.history`` with its virtual time.
* Results handed out are copies, so an agent that changes them cannot change the backend or
  the recorded call.
* Protocol misuse raises `ToolUsageError`: an unknown tool (the message lists the known ones),
  a reused call_id, sending or cancelling an unknown call_id, sending a call twice or sending
  a cancelled one.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import count
from typing import Any

from polygon_voice.model.events import (
    Event,
    PrepareToolCall,
    ToolError,
    ToolErrorKind,
    ToolResult,
)
from polygon_voice.model.tools import FaultSpec, ToolSpec
from polygon_voice.model.trace import CallStatus, StatusChange, ToolCall
from polygon_voice.seeding import rng_for
from polygon_voice.tools.backend import Backend, WriteContext, clone
from polygon_voice.tools.errors import ToolUsageError
from polygon_voice.tools.faults import empty_like, pick_fault
from polygon_voice.tools.latency import sample_latency
from polygon_voice.tools.schema import ArgumentChecker
from polygon_voice.tools.stubs import Outcome, StatefulAnswer, Stub
from polygon_voice.tools.timeline import Deliver, Reply, Run, Step, plan_call

_FINISHED = frozenset(
    {CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.TIMED_OUT, CallStatus.CANCELLED}
)


@dataclass(frozen=True, slots=True)
class CompiledTool:
    """One tool ready to run: its spec, argument checker and stub."""

    name: str
    spec: ToolSpec
    checker: ArgumentChecker
    stub: Stub

    @property
    def stateful(self) -> StatefulAnswer | None:
        """The stateful stub, if the tool has one."""
        return self.stub if isinstance(self.stub, StatefulAnswer) else None


class _Entry:
    """A call with what its steps need: the tool, the fault and the stub's outcome."""

    __slots__ = ("call", "fault", "outcome", "tool")

    def __init__(self, call: ToolCall, tool: CompiledTool) -> None:
        self.call = call
        self.tool = tool
        self.fault: FaultSpec | None = None
        self.outcome: Outcome | None = None


class ToolRuntime:
    """The tool calls of one conversation over one backend (made by `ToolSet.open`)."""

    def __init__(
        self, tools: Mapping[str, CompiledTool], backend: Backend, seed_parts: tuple[object, ...]
    ) -> None:
        self._tools = tools
        self._backend = backend
        self._seed_parts = seed_parts
        self._entries: dict[str, _Entry] = {}
        self._calls: list[ToolCall] = []
        self._numbers: dict[str, int] = {}
        self._heap: list[tuple[float, int, _Entry, Step]] = []
        self._order = count()
        self._in_flight = 0

    @property
    def backend(self) -> Backend:
        """The backend the stateful stubs read and write."""
        return self._backend

    @property
    def calls(self) -> list[ToolCall]:
        """Every call in order of preparation, kept up to date (the live list)."""
        return self._calls

    def call(self, call_id: str) -> ToolCall:
        """The call with that id; ToolUsageError if there is none."""
        return self._entry(call_id).call

    def prepare(self, action: PrepareToolCall, now: float) -> ToolCall:
        """Record a prepared call and check its arguments; nothing is scheduled yet."""
        if action.call_id in self._entries:
            used = self._entries[action.call_id].call.tool
            raise ToolUsageError(
                f"call_id {action.call_id!r} is already used by a call to {used!r}"
            )
        tool = self._tools.get(action.tool)
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolUsageError(f"unknown tool {action.tool!r}; known tools: {known}")
        number = self._numbers.get(tool.name, 0) + 1
        self._numbers[tool.name] = number
        errors = tool.checker.errors(action.args)
        call = ToolCall(
            call_id=action.call_id,
            tool=tool.name,
            args=clone(action.args),
            state_version=action.state_version,
            idempotency_key=action.idempotency_key,
            history=[StatusChange(status=CallStatus.PREPARED, time=now)],
            args_valid=not errors,
            arg_errors=errors,
            number=number,
        )
        self._entries[call.call_id] = _Entry(call, tool)
        self._calls.append(call)
        return call

    def send(self, call_id: str, now: float) -> None:
        """Send a prepared call: draw its latency and fault, and schedule its steps."""
        entry = self._entry(call_id)
        call, spec = entry.call, entry.tool.spec
        if call.status is not CallStatus.PREPARED:
            why = "was cancelled" if call.status is CallStatus.CANCELLED else "was already sent"
            raise ToolUsageError(f"call {call_id!r} {why} and cannot be sent")
        latency = sample_latency(spec.latency, self._seed_parts, call.tool, call.number)
        if call.args_valid:
            entry.fault = pick_fault(spec.faults, self._seed_parts, call.tool, call.number)
            call.fault = entry.fault.kind if entry.fault is not None else None
            if entry.fault is not None and entry.fault.latency is not None:
                latency = entry.fault.latency  # the faulty call is this slow, whatever the draw
        steps = plan_call(
            now,
            latency,
            spec.timeout,
            entry.fault,
            args_valid=call.args_valid,
            writes=entry.tool.stub.writes,
        )
        for step in steps:
            heapq.heappush(self._heap, (step.at, next(self._order), entry, step))
        self._set_status(call, CallStatus.SENT, now)
        self._in_flight += 1

    def cancel(self, call_id: str, now: float) -> None:
        """Cancel a prepared or sent call; a finished call is left as it is."""
        call = self._entry(call_id).call
        if call.status in _FINISHED:
            return
        if call.status is CallStatus.SENT:
            self._in_flight -= 1
        # Its steps stay in the heap and are skipped when popped (cheaper than removing them).
        self._set_status(call, CallStatus.CANCELLED, now)

    def next_due(self) -> float | None:
        """The virtual time of the next scheduled step, or None if nothing is scheduled."""
        heap = self._heap
        while heap and heap[0][2].call.status is CallStatus.CANCELLED:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def advance(self, now: float) -> list[tuple[float, Event]]:
        """Apply every step due by `now`; the agent events due, by (time, scheduling order)."""
        events: list[tuple[float, Event]] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, entry, step = heapq.heappop(heap)
            if entry.call.status is CallStatus.CANCELLED:
                continue
            if isinstance(step, Run):
                self._run(entry, step, at)
                continue
            event = self._event(entry, step)
            if event is not None:
                self._record(entry.call, event, at)
                events.append((at, event))
        return events

    def awaiting(self) -> bool:
        """True while a sent call has not had its first outcome event returned by advance."""
        return self._in_flight > 0

    # --- internals -----------------------------------------------------------------------

    def _entry(self, call_id: str) -> _Entry:
        entry = self._entries.get(call_id)
        if entry is None:
            raise ToolUsageError(f"no prepared call has call_id {call_id!r}")
        return entry

    def _set_status(self, call: ToolCall, status: CallStatus, now: float) -> None:
        call.status = status
        call.history.append(StatusChange(status=status, time=now))

    def _run(self, entry: _Entry, step: Run, at: float) -> None:
        call = entry.call
        ctx = WriteContext(call.call_id, at, call.idempotency_key)
        outcome = entry.tool.stub.run(call.args, self._backend, ctx, step.commit)
        # A duplicate runs after the answer was delivered, so keeping its outcome is harmless.
        entry.outcome = outcome

    def _event(self, entry: _Entry, step: Deliver) -> ToolResult | ToolError | None:
        call_id, reply = entry.call.call_id, step.reply
        outcome = entry.outcome or Outcome()
        if reply is Reply.ANSWER:
            if outcome.error is None:
                return ToolResult(call_id=call_id, result=clone(outcome.value), late=step.late)
            # A failure arriving after the timeout is no late success: the agent hears nothing.
            if step.late:
                return None
            return ToolError(call_id=call_id, error=outcome.error, message=outcome.message)
        if reply is Reply.EMPTY:
            return ToolResult(call_id=call_id, result=empty_like(outcome.value))
        if reply is Reply.WRONG_RECORD:
            return ToolResult(call_id=call_id, result=self._wrong_record(entry, outcome))
        return ToolError(
            call_id=call_id, error=ToolErrorKind(reply.value), message=self._why(entry, reply)
        )

    def _why(self, entry: _Entry, reply: Reply) -> str:
        tool = entry.tool
        if reply is Reply.TIMEOUT:
            return f"{tool.name} did not answer within {tool.spec.timeout:g} s"
        if reply is Reply.HTTP_500:
            return f"{tool.name} failed: the backend answered HTTP 500"
        return "invalid arguments: " + "; ".join(entry.call.arg_errors)

    def _wrong_record(self, entry: _Entry, outcome: Outcome) -> Any:
        fault, stateful = entry.fault, entry.tool.stateful
        if fault is not None and "record" in fault.model_fields_set:
            return clone(fault.record)
        if stateful is None:
            return None
        collection = stateful.spec.collection
        others = [key for key in self._backend.keys(collection) if key != outcome.key]
        if not others:
            return None
        number = entry.call.number
        key = rng_for(*self._seed_parts, "wrong_record", entry.call.tool, number).choice(others)
        return stateful.shape(key, self._backend.get(collection, key) or {})

    def _record(self, call: ToolCall, event: ToolResult | ToolError, at: float) -> None:
        if isinstance(event, ToolResult):
            call.result = clone(event.result)
            if event.late:
                # A late result follows the call's TIMEOUT: the status stays TIMED_OUT.
                call.late_result_at = at
                return
            status = CallStatus.COMPLETED
        else:
            call.error, call.error_message = event.error, event.message
            timed_out = event.error is ToolErrorKind.TIMEOUT
            status = CallStatus.TIMED_OUT if timed_out else CallStatus.FAILED
        self._in_flight -= 1
        self._set_status(call, status, at)
