"""The call lifecycle on the virtual clock: scheduling, statuses, cancel, protocol errors."""

from __future__ import annotations

import pytest

from polygon_voice.model import CallStatus, PrepareToolCall, ToolErrorKind, ToolResult
from polygon_voice.tools import ToolUsageError
from tests.tools.helpers import drain, kinds, runtime, send, spec, stateful, statuses

UPDATE = {"order_id": "A1", "qty": 9}


def test_a_normal_call_writes_and_answers_at_its_latency() -> None:
    rt = runtime({"upd": stateful("update", latency=2.0)})
    call = rt.prepare(PrepareToolCall(call_id="c1", tool="upd", args=UPDATE, state_version=4), 1.0)
    assert call.status is CallStatus.PREPARED
    assert (call.number, call.state_version) == (1, 4)
    assert rt.next_due() is None
    assert not rt.awaiting()
    rt.send("c1", 1.5)
    assert call.status is CallStatus.SENT
    assert rt.awaiting()
    assert rt.next_due() == 3.5
    assert rt.advance(3.4) == []
    assert rt.backend.writes == []
    events = rt.advance(3.5)
    assert kinds(events) == [(3.5, "tool_result")]
    assert [w.time for w in rt.backend.writes] == [3.5]
    assert statuses(call) == [("prepared", 1.0), ("sent", 1.5), ("completed", 3.5)]
    assert call.result == {"item": "pizza", "qty": 9, "order_id": "A1"}
    assert not rt.awaiting()
    assert rt.next_due() is None


def test_a_call_slower_than_its_timeout_times_out_and_never_writes() -> None:
    rt = runtime({"upd": stateful("update", latency=12.0, timeout=5.0)})
    call = send(rt, "upd", UPDATE, at=1.0)
    assert kinds(drain(rt)) == [(6.0, ToolErrorKind.TIMEOUT)]
    assert call.status is CallStatus.TIMED_OUT
    assert call.error is ToolErrorKind.TIMEOUT
    assert "5 s" in call.error_message
    assert call.fault is None
    assert rt.backend.writes == []


def test_events_come_in_time_then_scheduling_order() -> None:
    rt = runtime({"slow": spec({"kind": "fixed"}, latency=3.0), "fast": spec({"kind": "fixed"})})
    send(rt, "slow", call_id="s", at=0.0)
    send(rt, "fast", call_id="f1", at=2.0)
    send(rt, "fast", call_id="f2", at=2.0)
    events = drain(rt)
    assert [(at, getattr(e, "call_id", "?")) for at, e in events] == [
        (3.0, "s"),
        (3.0, "f1"),
        (3.0, "f2"),
    ]


def test_advance_applies_writes_of_other_calls_in_time_order() -> None:
    rt = runtime({"upd": stateful("update", latency=2.0), "get": stateful("get", latency=3.0)})
    send(rt, "get", {"order_id": "A1"}, call_id="g", at=0.0)
    send(rt, "upd", UPDATE, call_id="u", at=0.5)
    drain(rt)
    # The read runs at 3.0, after the write landed at 2.5.
    assert rt.call("g").result == {"item": "pizza", "qty": 9, "order_id": "A1"}


def test_numbers_count_calls_per_tool() -> None:
    rt = runtime({"a": spec({"kind": "fixed"}), "b": spec({"kind": "fixed"})})
    for call_id, tool in [("1", "a"), ("2", "b"), ("3", "a"), ("4", "a")]:
        rt.prepare(PrepareToolCall(call_id=call_id, tool=tool), 0.0)
    assert [(c.call_id, c.number) for c in rt.calls] == [("1", 1), ("2", 1), ("3", 2), ("4", 3)]


def test_cancel_before_the_write_lands_writes_nothing_and_delivers_nothing() -> None:
    rt = runtime({"upd": stateful("update", latency=2.0)})
    call = send(rt, "upd", UPDATE, at=1.0)
    rt.cancel("c1", 2.0)
    assert call.status is CallStatus.CANCELLED
    assert not rt.awaiting()
    assert rt.next_due() is None
    assert drain(rt) == []
    assert rt.backend.writes == []
    assert statuses(call) == [("prepared", 1.0), ("sent", 1.0), ("cancelled", 2.0)]


def test_cancel_after_the_write_landed_keeps_the_write() -> None:
    faults = [{"kind": "late_success", "on_call": 1, "delay": 3.0}]
    rt = runtime({"upd": stateful("update", latency=2.0, faults=faults)})
    call = send(rt, "upd", UPDATE, at=1.0)
    assert rt.advance(3.0) == []
    rt.cancel("c1", 4.0)
    assert drain(rt) == []
    assert call.status is CallStatus.CANCELLED
    assert call.result is None
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 9}
    assert [w.time for w in rt.backend.writes] == [3.0]


def test_cancel_after_completion_does_not_stop_the_duplicate_write() -> None:
    faults = [{"kind": "duplicate_write", "on_call": 1}]
    rt = runtime({"upd": stateful("update", latency=2.0, faults=faults)})
    send(rt, "upd", UPDATE, at=1.0)
    assert kinds(rt.advance(3.0)) == [(3.0, "tool_result")]
    # The call completed at 3.0, so the cancel is a no-op: the duplicate still lands.
    rt.cancel("c1", 3.01)
    drain(rt)
    assert len(rt.backend.writes) == 2


def test_cancel_of_a_prepared_call_then_send_is_an_error() -> None:
    rt = runtime({"t": spec({"kind": "fixed"})})
    rt.prepare(PrepareToolCall(call_id="c1", tool="t"), 0.0)
    rt.cancel("c1", 0.5)
    assert rt.call("c1").status is CallStatus.CANCELLED
    with pytest.raises(ToolUsageError, match="cancelled"):
        rt.send("c1", 1.0)


def test_cancel_of_a_finished_call_changes_nothing() -> None:
    rt = runtime({"t": spec({"kind": "fixed", "returns": 1})})
    call = send(rt, "t")
    drain(rt)
    before = call.model_dump()
    rt.cancel("c1", 5.0)
    rt.cancel("c1", 6.0)
    assert call.model_dump() == before


def test_cancel_after_a_timeout_leaves_the_in_flight_write() -> None:
    faults = [{"kind": "timeout", "on_call": 1, "write_lands": True}]
    rt = runtime({"upd": stateful("update", latency=8.0, timeout=5.0, faults=faults)})
    call = send(rt, "upd", UPDATE, at=0.0)
    assert kinds(rt.advance(5.0)) == [(5.0, ToolErrorKind.TIMEOUT)]
    rt.cancel("c1", 6.0)
    assert call.status is CallStatus.TIMED_OUT
    drain(rt)
    assert [w.time for w in rt.backend.writes] == [8.0]


def test_results_are_copies() -> None:
    rt = runtime({"get": stateful("get")})
    call = send(rt, "get", {"order_id": "A1"})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolResult)
    event.result["qty"] = 100
    assert call.result == {"item": "pizza", "qty": 2, "order_id": "A1"}
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 2}


def test_call_args_are_a_copy_of_the_action_args() -> None:
    rt = runtime({"upd": stateful("update")})
    args = {"order_id": "A1", "qty": 9, "tags": ["x"]}
    call = send(rt, "upd", args)
    args["tags"].append("later")
    drain(rt)
    assert call.args["tags"] == ["x"]
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 9, "tags": ["x"]}


def test_unknown_tool_lists_the_known_tools() -> None:
    rt = runtime({"get_order": stateful("get"), "book": spec({"kind": "fixed"})})
    with pytest.raises(ToolUsageError, match=r"'cancel'.*known tools: book, get_order"):
        rt.prepare(PrepareToolCall(call_id="c1", tool="cancel"), 0.0)
    assert rt.calls == []


def test_reused_call_id_is_an_error() -> None:
    rt = runtime({"t": spec({"kind": "fixed"})})
    rt.prepare(PrepareToolCall(call_id="c1", tool="t"), 0.0)
    with pytest.raises(ToolUsageError, match="already used"):
        rt.prepare(PrepareToolCall(call_id="c1", tool="t"), 1.0)
    assert len(rt.calls) == 1


def test_unknown_call_id_on_send_and_cancel_is_an_error() -> None:
    rt = runtime({"t": spec({"kind": "fixed"})})
    with pytest.raises(ToolUsageError, match="'nope'"):
        rt.send("nope", 0.0)
    with pytest.raises(ToolUsageError, match="'nope'"):
        rt.cancel("nope", 0.0)


def test_sending_twice_is_an_error() -> None:
    rt = runtime({"t": spec({"kind": "fixed"})})
    send(rt, "t")
    with pytest.raises(ToolUsageError, match="already sent"):
        rt.send("c1", 0.5)
    drain(rt)
    with pytest.raises(ToolUsageError, match="already sent"):
        rt.send("c1", 5.0)


def run_conversation(seed: tuple[object, ...]) -> tuple[list[object], list[object], list[object]]:
    faults = [{"kind": "http_500", "rate": 0.3}, {"kind": "late_success", "rate": 0.3}]
    latency = {"distribution": "lognormal", "median": 1.0, "sigma": 0.8}
    tool = stateful("update", latency=latency, timeout=3.0, faults=faults)
    rt = runtime({"upd": tool}, seed=seed)
    for number in range(12):
        send(rt, "upd", {"order_id": "A1", "qty": number}, call_id=f"c{number}", at=number * 0.7)
    events = [(at, event.model_dump()) for at, event in drain(rt)]
    calls = [call.model_dump() for call in rt.calls]
    writes = [write.model_dump() for write in rt.backend.writes]
    return list(events), list(calls), list(writes)


def test_the_same_seed_gives_the_same_timeline() -> None:
    first = run_conversation((1, "conv"))
    assert run_conversation((1, "conv")) == first
    assert run_conversation((2, "conv")) != first
