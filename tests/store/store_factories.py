"""Hand-built runs and conversation results for the store tests (imported by name)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from polygon_voice.model.events import ToolErrorKind
from polygon_voice.model.tools import FaultKind
from polygon_voice.model.trace import (
    BackendWrite,
    CallEnd,
    CallStatus,
    ConversationResult,
    EndReason,
    Speaker,
    StateUpdate,
    StatusChange,
    ToolCall,
    TraceEntry,
    Turn,
)
from polygon_voice.store import RunRecord

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def make_run(run_id: str, *, minutes: int = 0, **overrides: object) -> RunRecord:
    """A run record started `minutes` after T0."""
    values: dict[str, object] = {
        "id": run_id,
        "suite": "clinic",
        "suite_path": "suites/clinic.yaml",
        "suite_hash": "sha256:abc",
        "agent": "reference:robust",
        "seed": 7,
        "started_at": T0 + timedelta(minutes=minutes),
        "config": {"concurrency": 4, "caller": {"model": "scripted"}},
    }
    values.update(overrides)
    return RunRecord.model_validate(values)


def make_result(conversation_id: str = "c1", *, scenario_id: str = "book") -> ConversationResult:
    """A small but complete conversation: two turns, a tool call with a fault, a write."""
    return ConversationResult(
        id=conversation_id,
        scenario_id=scenario_id,
        seed=42,
        language="de",
        end=CallEnd(reason=EndReason.ERROR, time=9.5, message="agent raised"),
        turns=[
            Turn(
                index=0,
                speaker=Speaker.CALLER,
                text="Hallo, ich möchte",
                heard="Hallo ich",
                start=0.0,
                end=1.2,
            ),
            Turn(
                index=1,
                speaker=Speaker.AGENT,
                text="Gern, welcher Tag?",
                heard="Gern, welcher Tag?",
                start=1.4,
                end=2.9,
                interrupted=True,
                barge_in=True,
            ),
        ],
        tool_calls=[
            ToolCall(
                call_id="t1",
                tool="book_slot",
                args={"day": "2025-03-02", "slots": [1, 2]},
                state_version=3,
                idempotency_key="k-1",
                status=CallStatus.FAILED,
                history=[
                    StatusChange(status=CallStatus.SENT, time=3.0),
                    StatusChange(status=CallStatus.FAILED, time=4.0),
                ],
                fault=FaultKind.HTTP_500,
                error=ToolErrorKind.HTTP_500,
                error_message="boom",
                number=1,
            )
        ],
        state_updates=[StateUpdate(field="day", value="2025-03-02", version=3, time=2.5)],
        backend_writes=[
            BackendWrite(
                seq=1,
                collection="bookings",
                record="b-1",
                field="day",
                old=None,
                new={"date": "2025-03-02", "ok": True},
                version=1,
                idempotency_key="k-1",
                time=3.5,
                call_id="t1",
                op="create",
            )
        ],
        backend_final={"bookings/b-1": {"day": "2025-03-02"}},
        trace=[
            TraceEntry(seq=0, time=0.0, source="engine", kind="call_started"),
            TraceEntry(
                seq=1,
                time=3.0,
                source="agent",
                kind="send",
                data={"call_id": "t1"},
                state_version=3,
            ),
        ],
    )
