"""The versioned backend and stateful stubs: get, update, create, delete, idempotency (TOOL-4)."""

from __future__ import annotations

from polygon_voice.model import CallStatus, ToolError, ToolErrorKind, ToolResult
from polygon_voice.tools import Backend, WriteContext
from tests.tools.helpers import ORDERS, drain, runtime, send, stateful


def test_backend_copies_its_records_and_starts_at_version_one() -> None:
    records = {"orders": {"A1": {"tags": ["hot"]}}}
    backend = Backend(records)
    records["orders"]["A1"]["tags"].append("changed")
    got = backend.get("orders", "A1")
    assert got == {"tags": ["hot"]}
    assert got is not None
    got["tags"].append("mutated")
    assert backend.get("orders", "A1") == {"tags": ["hot"]}
    assert backend.version("orders", "A1") == 1
    assert backend.version("orders", "nope") == 0
    assert backend.get("orders", "nope") is None
    assert backend.get("nope", "A1") is None


def test_get_answers_fields_plus_the_key() -> None:
    rt = runtime({"get": stateful("get")})
    send(rt, "get", {"order_id": "B2"})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolResult)
    assert event.result == {"item": "pasta", "qty": 1, "order_id": "B2"}
    assert rt.backend.writes == []


def test_get_takes_an_integer_key_and_answers_none_when_missing() -> None:
    rt = runtime({"get": stateful("get")}, {"orders": {"12": {"qty": 1}}})
    send(rt, "get", {"order_id": 12}, call_id="a")
    send(rt, "get", {"order_id": 13}, call_id="b")
    results = [event for _, event in drain(rt)]
    assert [getattr(event, "result", "?") for event in results] == [
        {"qty": 1, "order_id": "12"},
        None,
    ]
    assert rt.calls[1].status is CallStatus.COMPLETED


def test_update_logs_every_field_with_one_shared_version() -> None:
    rt = runtime({"upd": stateful("update")})
    send(rt, "upd", {"order_id": "A1", "qty": 3, "note": "no onions"}, at=2.0)
    [(at, event)] = drain(rt)
    assert at == 3.0
    assert isinstance(event, ToolResult)
    assert event.result == {"item": "pizza", "qty": 3, "note": "no onions", "order_id": "A1"}
    writes = rt.backend.writes
    assert [(w.field, w.old, w.new, w.version, w.op) for w in writes] == [
        ("qty", 2, 3, 2, "update"),
        ("note", None, "no onions", 2, "update"),
    ]
    assert [w.seq for w in writes] == [0, 1]
    assert {(w.collection, w.record, w.time, w.call_id) for w in writes} == {
        ("orders", "A1", 3.0, "c1")
    }
    assert rt.backend.version("orders", "A1") == 2
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 3, "note": "no onions"}


def test_update_logs_unchanged_values_too() -> None:
    rt = runtime({"upd": stateful("update")})
    send(rt, "upd", {"order_id": "A1", "qty": 2})
    drain(rt)
    [write] = rt.backend.writes
    assert (write.old, write.new, write.version) == (2, 2, 2)


def test_update_writes_only_the_listed_fields() -> None:
    tool = stateful("update", fields=["qty", "absent"])
    rt = runtime({"upd": tool})
    send(rt, "upd", {"order_id": "A1", "qty": 5, "item": "ignored"})
    drain(rt)
    assert [w.field for w in rt.backend.writes] == ["qty"]
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 5}


def test_update_of_a_missing_record_fails_not_found_and_writes_nothing() -> None:
    rt = runtime({"upd": stateful("update")})
    call = send(rt, "upd", {"order_id": "Z9", "qty": 1})
    [(at, event)] = drain(rt)
    assert at == 1.0
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.NOT_FOUND
    assert "Z9" in event.message
    assert call.status is CallStatus.FAILED
    assert rt.backend.writes == []
    assert rt.backend.version("orders", "Z9") == 0


def test_missing_key_argument_fails_invalid_arguments() -> None:
    rt = runtime({"upd": stateful("update")})
    send(rt, "upd", {"qty": 1})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.INVALID_ARGUMENTS
    assert "order_id" in event.message


def test_create_with_a_key_writes_each_field_at_version_one() -> None:
    rt = runtime({"new": stateful("create")})
    send(rt, "new", {"order_id": "D4", "item": "soup", "qty": 1})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolResult)
    assert event.result == {"item": "soup", "qty": 1, "order_id": "D4"}
    assert [(w.field, w.old, w.new, w.version, w.op) for w in rt.backend.writes] == [
        ("item", None, "soup", 1, "create"),
        ("qty", None, 1, 1, "create"),
    ]
    assert rt.backend.version("orders", "D4") == 1


def test_create_without_a_key_takes_the_next_integer_key() -> None:
    records = {"orders": {"7": {"qty": 1}, "x": {"qty": 2}}}
    rt = runtime({"new": stateful("create")}, records)
    send(rt, "new", {"qty": 5}, call_id="a")
    send(rt, "new", {"qty": 6}, call_id="b", at=0.5)
    drain(rt)
    assert [call.result for call in rt.calls] == [
        {"qty": 5, "order_id": "8"},
        {"qty": 6, "order_id": "9"},
    ]
    assert rt.backend.get("orders", "9") == {"qty": 6}


def test_create_of_an_existing_key_fails_and_writes_nothing() -> None:
    rt = runtime({"new": stateful("create")})
    send(rt, "new", {"order_id": "A1", "qty": 9})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.INVALID_ARGUMENTS
    assert "already exists" in event.message
    assert rt.backend.writes == []


def test_delete_logs_one_star_write_and_leaves_touched() -> None:
    rt = runtime({"del": stateful("delete"), "upd": stateful("update")})
    send(rt, "upd", {"order_id": "B2", "qty": 2}, call_id="u")
    send(rt, "del", {"order_id": "A1"}, call_id="d")
    events = drain(rt)
    assert isinstance(events[1][1], ToolResult)
    assert events[1][1].result is None
    delete = rt.backend.writes[-1]
    assert (delete.field, delete.old, delete.new, delete.version, delete.op) == (
        "*",
        ORDERS["A1"],
        None,
        2,
        "delete",
    )
    assert rt.backend.get("orders", "A1") is None
    assert rt.backend.version("orders", "A1") == 2
    assert rt.backend.touched() == {"orders": {"B2": {"item": "pasta", "qty": 2}}}


def test_delete_of_a_missing_record_fails_not_found() -> None:
    rt = runtime({"del": stateful("delete")})
    send(rt, "del", {"order_id": "nope"})
    [(_, event)] = drain(rt)
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.NOT_FOUND
    assert rt.backend.writes == []


def test_recreated_record_continues_its_versions() -> None:
    backend = Backend({"orders": {"A1": {"qty": 1}}})
    ctx = WriteContext(call_id="x", time=1.0)
    backend.delete("orders", "A1", ctx)
    backend.create("orders", "A1", {"qty": 2}, ctx)
    assert backend.version("orders", "A1") == 3
    assert [w.version for w in backend.writes] == [2, 3]


def test_touched_lists_only_written_records_with_their_final_state() -> None:
    rt = runtime({"upd": stateful("update"), "new": stateful("create")})
    send(rt, "upd", {"order_id": "C3", "qty": 1}, call_id="a")
    send(rt, "new", {"order_id": "E5", "qty": 2}, call_id="b")
    drain(rt)
    touched = rt.backend.touched()
    assert touched == {"orders": {"C3": {"item": "salad", "qty": 1}, "E5": {"qty": 2}}}
    touched["orders"]["C3"]["qty"] = 99
    assert rt.backend.get("orders", "C3") == {"item": "salad", "qty": 1}


def test_idempotency_key_seen_before_writes_nothing_and_answers_the_first_response() -> None:
    rt = runtime({"upd": stateful("update")})
    send(rt, "upd", {"order_id": "A1", "qty": 3}, call_id="a", key="k1")
    send(rt, "upd", {"order_id": "A1", "qty": 8}, call_id="b", at=5.0, key="k1")
    events = drain(rt)
    assert [w.field for w in rt.backend.writes] == ["qty"]
    assert rt.backend.writes[0].idempotency_key == "k1"
    first, second = (event for _, event in events)
    assert isinstance(first, ToolResult)
    assert isinstance(second, ToolResult)
    assert second.result == first.result == {"item": "pizza", "qty": 3, "order_id": "A1"}
    assert rt.backend.get("orders", "A1") == {"item": "pizza", "qty": 3}
    assert rt.backend.version("orders", "A1") == 2


def test_idempotency_replays_a_failure_too() -> None:
    rt = runtime({"upd": stateful("update"), "new": stateful("create")})
    send(rt, "upd", {"order_id": "Q1", "qty": 3}, call_id="a", key="k")
    send(rt, "new", {"order_id": "Q1", "qty": 1}, call_id="b", at=2.0)
    send(rt, "upd", {"order_id": "Q1", "qty": 3}, call_id="c", at=4.0, key="k")
    drain(rt)
    assert [call.status for call in rt.calls] == [
        CallStatus.FAILED,
        CallStatus.COMPLETED,
        CallStatus.FAILED,
    ]
    assert rt.calls[2].error is ToolErrorKind.NOT_FOUND
    assert rt.backend.get("orders", "Q1") == {"qty": 1}


def test_writes_without_a_key_are_never_deduplicated() -> None:
    rt = runtime({"upd": stateful("update")})
    send(rt, "upd", {"order_id": "A1", "qty": 3}, call_id="a")
    send(rt, "upd", {"order_id": "A1", "qty": 3}, call_id="b", at=5.0)
    drain(rt)
    assert [(w.call_id, w.version) for w in rt.backend.writes] == [("a", 2), ("b", 3)]
