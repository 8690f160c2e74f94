"""Argument checking against the tool's JSON Schema, and configuration errors."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.model import CallStatus, ToolError, ToolErrorKind
from polygon_voice.tools import Backend, ToolConfigError, ToolSet
from tests.tools.helpers import drain, runtime, send, spec, stateful, statuses

ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string"},
        "qty": {"type": "integer", "minimum": 1},
        "lines": {"type": "array", "items": {"type": "object", "required": ["sku"]}},
    },
    "required": ["order_id"],
    "additionalProperties": False,
}


def test_invalid_arguments_are_recorded_with_their_path() -> None:
    rt = runtime({"upd": stateful("update", parameters=ORDER_SCHEMA)})
    call = send(rt, "upd", {"qty": "two", "lines": [{"sku": "a"}, {}]})
    assert call.args_valid is False
    assert call.arg_errors == [
        "$: 'order_id' is a required property",
        "$.lines[1]: 'sku' is a required property",
        "$.qty: 'two' is not of type 'integer'",
    ]


def test_invalid_call_fails_after_its_latency_writes_nothing_and_ignores_faults() -> None:
    tool = stateful(
        "update", parameters=ORDER_SCHEMA, latency=2.0, faults=[{"kind": "http_500", "on_call": 1}]
    )
    rt = runtime({"upd": tool})
    call = send(rt, "upd", {"order_id": "A1", "qty": 0}, at=1.0)
    [(at, event)] = drain(rt)
    assert at == 3.0
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.INVALID_ARGUMENTS
    assert "$.qty: 0 is less than the minimum of 1" in event.message
    assert call.fault is None
    assert call.status is CallStatus.FAILED
    assert statuses(call) == [("prepared", 1.0), ("sent", 1.0), ("failed", 3.0)]
    assert rt.backend.writes == []


def test_a_slow_invalid_call_times_out() -> None:
    rt = runtime({"upd": stateful("update", parameters=ORDER_SCHEMA, latency=20.0, timeout=5.0)})
    send(rt, "upd", {})
    [(at, event)] = drain(rt)
    assert at == 5.0
    assert isinstance(event, ToolError)
    assert event.error is ToolErrorKind.TIMEOUT


def test_valid_arguments_pass() -> None:
    rt = runtime({"upd": stateful("update", parameters=ORDER_SCHEMA)})
    call = send(rt, "upd", {"order_id": "A1", "qty": 2})
    assert (call.args_valid, call.arg_errors) == (True, [])


def check(schema: dict[str, Any], args: dict[str, Any]) -> list[str]:
    rt = runtime({"t": spec({"kind": "fixed"}, parameters=schema)})
    return send(rt, "t", args).arg_errors


def test_the_schema_draft_comes_from_its_dollar_schema() -> None:
    # prefixItems exists only since 2019-09: draft-07 ignores it, the default 2020-12 does not.
    body = {"properties": {"pair": {"prefixItems": [{"type": "integer"}]}}}
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", **body}
    assert check(draft7, {"pair": ["x"]}) == []
    assert check(body, {"pair": ["x"]}) == ["$.pair[0]: 'x' is not of type 'integer'"]


def test_an_unknown_schema_draft_is_a_config_error() -> None:
    with pytest.raises(ToolConfigError, match="unknown JSON Schema draft"):
        ToolSet({"t": spec({"kind": "fixed"}, parameters={"$schema": "https://x.example/s"})})


def test_an_invalid_schema_is_a_config_error_naming_the_tool() -> None:
    with pytest.raises(ToolConfigError, match="tool 'bad'"):
        ToolSet({"bad": spec({"kind": "fixed"}, parameters={"type": "objekt"})})


def test_fields_listing_the_key_is_a_config_error() -> None:
    with pytest.raises(ToolConfigError, match="key argument"):
        ToolSet({"t": stateful("update", fields=["order_id", "qty"])})


def test_wrong_record_on_a_stateless_stub_needs_a_record() -> None:
    faults = [{"kind": "wrong_record", "on_call": 1}]
    with pytest.raises(ToolConfigError, match="needs 'record'"):
        ToolSet({"t": spec({"kind": "fixed", "returns": 1}, faults=faults)})
    given = [{"kind": "wrong_record", "on_call": 1, "record": None}]
    ToolSet({"t": spec({"kind": "fixed", "returns": 1}, faults=given)})


def test_open_rejects_a_backend_without_the_stateful_collection() -> None:
    toolset = ToolSet({"upd": stateful("update")})
    with pytest.raises(ToolConfigError, match=r"'orders'.*it has: bookings"):
        toolset.open(Backend({"bookings": {}}), seed_parts=(1,))
    toolset.open(Backend({"orders": {}}), seed_parts=(1,))


def test_send_of_an_invalid_call_still_counts_its_number() -> None:
    rt = runtime({"upd": stateful("update", parameters=ORDER_SCHEMA)})
    send(rt, "upd", {}, call_id="a")
    second = send(rt, "upd", {"order_id": "A1"}, call_id="b")
    assert second.number == 2
    drain(rt)
    assert [call.status for call in rt.calls] == [CallStatus.FAILED, CallStatus.COMPLETED]
