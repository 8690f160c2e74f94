"""Small builders shared by the tools tests."""

from __future__ import annotations

from typing import Any

from polygon_voice.model import Event, PrepareToolCall, ToolCall, ToolSpec
from polygon_voice.tools import Backend, ToolRuntime, ToolSet

SEED = (7, "conv-1")
ORDERS = {
    "A1": {"item": "pizza", "qty": 2},
    "B2": {"item": "pasta", "qty": 1},
    "C3": {"item": "salad", "qty": 4},
}


def spec(stub: dict[str, Any], **extra: Any) -> ToolSpec:
    """A tool with latency 1 s and timeout 10 s unless given."""
    return ToolSpec.model_validate({"stub": stub, "latency": 1.0, "timeout": 10.0, **extra})


def stateful(op: str, fields: list[str] | None = None, **extra: Any) -> ToolSpec:
    """A stateful tool over the `orders` collection keyed by `order_id`."""
    stub = {"kind": "stateful", "collection": "orders", "op": op, "key": "order_id"}
    return spec({**stub, "fields": fields}, **extra)


def runtime(
    tools: dict[str, ToolSpec],
    records: dict[str, dict[str, dict[str, Any]]] | None = None,
    seed: tuple[object, ...] = SEED,
) -> ToolRuntime:
    """A runtime over a fresh backend (the orders collection by default)."""
    backend = Backend({"orders": ORDERS} if records is None else records)
    return ToolSet(tools).open(backend, seed_parts=seed)


def send(
    rt: ToolRuntime,
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    call_id: str = "c1",
    at: float = 0.0,
    key: str | None = None,
) -> ToolCall:
    """Prepare and send a call at `at`."""
    action = PrepareToolCall(call_id=call_id, tool=tool, args=args or {}, idempotency_key=key)
    call = rt.prepare(action, at)
    rt.send(call_id, at)
    return call


def drain(rt: ToolRuntime) -> list[tuple[float, Event]]:
    """Every remaining event."""
    return rt.advance(float("inf"))


def kinds(events: list[tuple[float, Event]]) -> list[tuple[float, str]]:
    """(time, kind) of each event, errors as their error kind."""
    return [(at, getattr(event, "error", event.kind)) for at, event in events]


def statuses(call: ToolCall) -> list[tuple[str, float]]:
    """The call's status history as (status, time)."""
    return [(change.status.value, change.time) for change in call.history]
