"""Every fault kind: events and their times, what lands in the backend, statuses (TOOL-3, FM-3).

Unless a test says otherwise: sent at t=1, latency 2 s, timeout 5 s.
"""

from __future__ import annotations

from typing import Any

from polygon_voice.model import (
    CallStatus,
    FaultKind,
    FaultSpec,
    ToolError,
    ToolErrorKind,
    ToolResult,
)
from polygon_voice.tools import DUPLICATE_DELAY, ToolRuntime, empty_like, pick_fault
from tests.tools.helpers import ORDERS, drain, kinds, runtime, send, spec, stateful, statuses


def faulty(op: str, fault: dict[str, Any], **extra: Any) -> ToolRuntime:
    """A stateful tool over orders whose first call has `fault`."""
    settings = {"latency": 2.0, "timeout": 5.0, **extra}
    return runtime({"t": stateful(op, faults=[{"on_call": 1, **fault}], **settings)})


UPDATE = {"order_id": "A1", "qty": 9}


def test_timeout_fault_fails_at_the_timeout_and_does_not_write() -> None:
    rt = faulty("update", {"kind": "timeout"})
    call = send(rt, "t", UPDATE, at=1.0)
    assert rt.advance(5.9) == []
    assert rt.awaiting()
    events = drain(rt)
    assert kinds(events) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert call.fault is FaultKind.TIMEOUT
    assert call.status is CallStatus.TIMED_OUT
    assert statuses(call) == [("prepared", 1.0), ("sent", 1.0), ("timed_out", 6.0)]
    assert rt.backend.writes == []
    assert not rt.awaiting()


def test_timeout_fault_whose_write_lands_writes_at_the_latency() -> None:
    rt = faulty("update", {"kind": "timeout", "write_lands": True})
    send(rt, "t", UPDATE, at=1.0)
    assert rt.advance(3.0) == []
    assert [(w.time, w.new) for w in rt.backend.writes] == [(3.0, 9)]
    assert rt.awaiting()
    assert kinds(drain(rt)) == [(6.0, ToolErrorKind.TIMEOUT)]


def test_empty_result_answers_the_empty_value_of_the_answers_type() -> None:
    rt = faulty("get", {"kind": "empty_result"})
    call = send(rt, "t", {"order_id": "A1"}, at=1.0)
    [(at, event)] = drain(rt)
    assert at == 3.0
    assert isinstance(event, ToolResult)
    assert event.result == {}
    assert call.status is CallStatus.COMPLETED
    assert call.fault is FaultKind.EMPTY_RESULT
    assert call.result == {}


def test_empty_result_for_lists_and_text() -> None:
    fault = [{"kind": "empty_result", "on_call": 1}, {"kind": "empty_result", "on_call": 2}]
    rt = runtime(
        {
            "list": spec({"kind": "fixed", "returns": [1, 2]}, faults=fault[:1]),
            "text": spec({"kind": "template", "returns": "hi {n}"}, faults=fault[:1]),
        }
    )
    send(rt, "list", call_id="a")
    send(rt, "text", {"n": "x"}, call_id="b")
    assert [getattr(event, "result", "?") for _, event in drain(rt)] == [[], ""]
    assert [empty_like(value) for value in ({"a": 1}, [1], "x", 3, None)] == [
        {},
        [],
        "",
        None,
        None,
    ]


def test_empty_result_does_not_write_unless_told() -> None:
    rt = faulty("update", {"kind": "empty_result"})
    send(rt, "t", UPDATE, at=1.0)
    [(at, event)] = drain(rt)
    assert (at, getattr(event, "result", "?")) == (3.0, {})
    assert rt.backend.writes == []

    rt = faulty("update", {"kind": "empty_result", "write_lands": True})
    send(rt, "t", UPDATE, at=1.0)
    drain(rt)
    assert [(w.time, w.field, w.new) for w in rt.backend.writes] == [(3.0, "qty", 9)]


def wrong_record(seed: tuple[object, ...]) -> Any:
    tool = stateful("get", faults=[{"kind": "wrong_record", "on_call": 1}])
    rt = runtime({"t": tool}, seed=seed)
    call = send(rt, "t", {"order_id": "A1"})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolResult)
    assert call.fault is FaultKind.WRONG_RECORD
    return event.result


def test_wrong_record_returns_another_record_shaped_like_get_and_seeded() -> None:
    seen = {str(wrong_record((seed, "c"))) for seed in range(12)}
    # Seeded: the same seed gives the same record; across seeds both others show up.
    assert wrong_record((3, "c")) == wrong_record((3, "c"))
    assert seen == {
        str({**ORDERS["B2"], "order_id": "B2"}),
        str({**ORDERS["C3"], "order_id": "C3"}),
    }


def test_wrong_record_returns_the_given_record() -> None:
    rt = faulty("get", {"kind": "wrong_record", "record": {"order_id": "X", "qty": 0}})
    send(rt, "t", {"order_id": "A1"}, at=1.0)
    assert [(at, getattr(e, "result", "?")) for at, e in drain(rt)] == [
        (3.0, {"order_id": "X", "qty": 0})
    ]


def test_wrong_record_without_another_record_answers_none() -> None:
    tool = stateful("get", faults=[{"kind": "wrong_record", "on_call": 1}])
    rt = runtime({"t": tool}, {"orders": {"A1": {"qty": 1}}})
    call = send(rt, "t", {"order_id": "A1"})
    drain(rt)
    assert (call.status, call.result) == (CallStatus.COMPLETED, None)


def test_wrong_record_on_an_update_does_not_write_unless_told() -> None:
    rt = faulty("update", {"kind": "wrong_record"})
    call = send(rt, "t", UPDATE, at=1.0)
    drain(rt)
    assert call.result is not None
    assert call.result["order_id"] in {"B2", "C3"}
    assert rt.backend.writes == []

    rt = faulty("update", {"kind": "wrong_record", "write_lands": True})
    call = send(rt, "t", UPDATE, at=1.0)
    drain(rt)
    assert call.result["order_id"] in {"B2", "C3"}
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 9}


def test_http_500_fails_at_the_latency_without_writing() -> None:
    rt = faulty("update", {"kind": "http_500"})
    call = send(rt, "t", UPDATE, at=1.0)
    events = drain(rt)
    assert kinds(events) == [(3.0, ToolErrorKind.HTTP_500)]
    assert call.status is CallStatus.FAILED
    assert call.error is ToolErrorKind.HTTP_500
    assert "500" in call.error_message
    assert rt.backend.writes == []


def test_http_500_whose_write_landed_makes_a_retry_unsafe() -> None:
    rt = faulty("update", {"kind": "http_500", "write_lands": True})
    send(rt, "t", {"order_id": "A1", "qty": 9}, call_id="a", at=1.0)
    assert kinds(drain(rt)) == [(3.0, ToolErrorKind.HTTP_500)]
    send(rt, "t", {"order_id": "A1", "qty": 9}, call_id="b", at=4.0)
    assert kinds(drain(rt)) == [(6.0, "tool_result")]
    assert [(w.call_id, w.version) for w in rt.backend.writes] == [("a", 2), ("b", 3)]


def test_http_500_whose_write_landed_is_safe_to_retry_with_an_idempotency_key() -> None:
    rt = faulty("update", {"kind": "http_500", "write_lands": True})
    send(rt, "t", UPDATE, call_id="a", at=1.0, key="k")
    send(rt, "t", UPDATE, call_id="b", at=4.0, key="k")
    drain(rt)
    assert [w.call_id for w in rt.backend.writes] == ["a"]
    assert rt.calls[1].result == {"item": "pizza", "qty": 9, "order_id": "A1"}


def test_late_success_after_the_timeout_times_out_then_reports_late() -> None:
    rt = faulty("update", {"kind": "late_success", "delay": 10.0})
    call = send(rt, "t", UPDATE, at=1.0)
    # The write lands at t+L = 3, before anything reaches the agent.
    assert rt.advance(3.0) == []
    assert [(w.time, w.new) for w in rt.backend.writes] == [(3.0, 9)]
    assert rt.next_due() == 6.0
    first = rt.advance(6.0)
    assert kinds(first) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert call.status is CallStatus.TIMED_OUT
    assert not rt.awaiting()
    assert rt.next_due() == 13.0
    [(at, late)] = rt.advance(13.0)
    assert at == 13.0
    assert isinstance(late, ToolResult)
    assert late.late is True
    assert late.result == {"item": "pizza", "qty": 9, "order_id": "A1"}
    assert call.status is CallStatus.TIMED_OUT
    assert call.error is ToolErrorKind.TIMEOUT
    assert call.late_result_at == 13.0
    assert call.result == late.result
    assert statuses(call) == [("prepared", 1.0), ("sent", 1.0), ("timed_out", 6.0)]
    assert rt.next_due() is None


def test_late_success_within_the_timeout_is_a_normal_result() -> None:
    rt = faulty("update", {"kind": "late_success", "delay": 2.5})
    call = send(rt, "t", UPDATE, at=1.0)
    events = drain(rt)
    assert kinds(events) == [(5.5, "tool_result")]
    assert getattr(events[0][1], "late", None) is False
    assert call.status is CallStatus.COMPLETED
    assert call.late_result_at is None
    assert rt.backend.writes[0].time == 3.0


def test_late_success_of_a_failing_stub_gives_only_the_timeout() -> None:
    rt = faulty("update", {"kind": "late_success", "delay": 10.0})
    call = send(rt, "t", {"order_id": "nope", "qty": 1}, at=1.0)
    assert kinds(drain(rt)) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert call.late_result_at is None
    assert rt.backend.writes == []


def test_late_success_whose_write_does_not_land_still_reports_the_answer() -> None:
    rt = faulty("update", {"kind": "late_success", "delay": 10.0, "write_lands": False})
    send(rt, "t", UPDATE, at=1.0)
    events = drain(rt)
    assert kinds(events) == [(6.0, ToolErrorKind.TIMEOUT), (13.0, "tool_result")]
    assert getattr(events[1][1], "result", None) == {"item": "pizza", "qty": 9, "order_id": "A1"}
    assert rt.backend.writes == []


def test_duplicate_write_without_a_key_writes_twice_and_answers_once() -> None:
    rt = faulty("update", {"kind": "duplicate_write"})
    call = send(rt, "t", UPDATE, at=1.0)
    events = drain(rt)
    assert kinds(events) == [(3.0, "tool_result")]
    assert call.status is CallStatus.COMPLETED
    assert call.fault is FaultKind.DUPLICATE_WRITE
    assert [(w.time, w.old, w.new, w.version, w.call_id) for w in rt.backend.writes] == [
        (3.0, 2, 9, 2, "c1"),
        (3.0 + DUPLICATE_DELAY, 9, 9, 3, "c1"),
    ]
    assert rt.backend.version("orders", "A1") == 3


def test_duplicate_write_of_a_keyless_create_makes_two_records() -> None:
    records = {"orders": {"1": {"qty": 1}}}
    rt = runtime(
        {"t": stateful("create", faults=[{"kind": "duplicate_write", "on_call": 1}])}, records
    )
    call = send(rt, "t", {"qty": 2})
    drain(rt)
    assert call.result == {"qty": 2, "order_id": "2"}
    assert rt.backend.touched() == {"orders": {"2": {"qty": 2}, "3": {"qty": 2}}}


def test_duplicate_write_with_an_idempotency_key_writes_once() -> None:
    rt = faulty("update", {"kind": "duplicate_write"})
    send(rt, "t", UPDATE, at=1.0, key="k")
    assert kinds(drain(rt)) == [(3.0, "tool_result")]
    assert [(w.time, w.idempotency_key) for w in rt.backend.writes] == [(3.0, "k")]
    assert rt.backend.version("orders", "A1") == 2


def test_duplicate_write_of_a_read_reads_once() -> None:
    rt = faulty("get", {"kind": "duplicate_write"})
    send(rt, "t", {"order_id": "A1"}, at=1.0)
    assert rt.next_due() == 3.0
    assert kinds(drain(rt)) == [(3.0, "tool_result")]
    assert rt.next_due() is None


def test_a_slow_faulted_call_times_out_but_its_write_follows_the_fault() -> None:
    rt = faulty("update", {"kind": "duplicate_write"}, latency=8.0)
    call = send(rt, "t", UPDATE, at=1.0)
    assert kinds(drain(rt)) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert call.status is CallStatus.TIMED_OUT
    assert [w.time for w in rt.backend.writes] == [9.0, 9.0 + DUPLICATE_DELAY]

    rt = faulty("update", {"kind": "http_500"}, latency=8.0)
    send(rt, "t", UPDATE, at=1.0)
    assert kinds(drain(rt)) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert rt.backend.writes == []


def test_on_call_hits_only_that_call_and_the_first_fault_wins() -> None:
    faults = [
        {"kind": "http_500", "on_call": 2},
        {"kind": "timeout", "on_call": 2},
        {"kind": "empty_result", "on_call": 3},
    ]
    rt = runtime({"t": stateful("get", faults=faults)})
    for number in range(1, 5):
        send(rt, "t", {"order_id": "A1"}, call_id=f"c{number}", at=float(number * 20))
    drain(rt)
    assert [call.fault for call in rt.calls] == [
        None,
        FaultKind.HTTP_500,
        FaultKind.EMPTY_RESULT,
        None,
    ]


def rate_hits(seed: tuple[object, ...], rate: float) -> list[int]:
    faults = [FaultSpec(kind=FaultKind.HTTP_500, rate=rate)]
    return [n for n in range(1, 61) if pick_fault(faults, seed, "crm", n) is not None]


def test_rate_faults_are_seeded() -> None:
    hits = rate_hits((1, "conv"), 0.5)
    assert 15 < len(hits) < 45
    assert rate_hits((1, "conv"), 0.5) == hits
    assert rate_hits((2, "conv"), 0.5) != hits
    assert rate_hits((1, "conv"), 0.0) == []
    assert rate_hits((1, "conv"), 1.0) == list(range(1, 61))


def test_rate_faults_in_the_runtime_follow_pick_fault() -> None:
    seed = (5, "conv")
    rt = runtime(
        {"crm": spec({"kind": "fixed"}, faults=[{"kind": "http_500", "rate": 0.5}])}, seed=seed
    )
    for number in range(1, 21):
        send(rt, "crm", call_id=f"c{number}", at=float(number * 20))
    drain(rt)
    failed = [call.number for call in rt.calls if call.status is CallStatus.FAILED]
    assert failed == [n for n in rate_hits(seed, 0.5) if n <= 20]
    assert failed
    assert all(
        isinstance(call.error, ToolErrorKind) == (call.number in failed) for call in rt.calls
    )


def test_rate_faults_draw_per_fault_index() -> None:
    first = [FaultSpec(kind=FaultKind.HTTP_500, rate=0.5)]
    both = [FaultSpec(kind=FaultKind.TIMEOUT, on_call=99), *first]
    one = [n for n in range(1, 41) if pick_fault(first, (1,), "crm", n)]
    two = [n for n in range(1, 41) if pick_fault(both, (1,), "crm", n)]
    # The same rate fault at another position in the list draws from another stream.
    assert one != two


def test_error_event_carries_the_call_id() -> None:
    rt = faulty("update", {"kind": "http_500"})
    send(rt, "t", UPDATE, call_id="xyz", at=1.0)
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolError)
    assert event.call_id == "xyz"
