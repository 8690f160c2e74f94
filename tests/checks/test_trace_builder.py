"""The hand-built traces look like the engine's where the checks read them."""

from __future__ import annotations

from polygon_voice.model import CallStatus, Speaker
from tests.checks.cases import corr04_robust_trace, corr04_stale_trace, scenario, view
from tests.checks.trace_builder import TraceBuilder


def test_the_send_entry_carries_the_version_current_when_the_call_went_out() -> None:
    result = corr04_stale_trace().build()
    case_view = view(result, scenario("corr-04"))
    (update,) = [c for c in result.tool_calls if c.tool == "update_order"]

    assert update.state_version == 2
    assert case_view.version_at_send(update) == 3  # the correction at 13.0 came first
    assert case_view.sent_at(update) == 13.0


def test_an_update_at_the_instant_of_an_event_is_the_response_to_it() -> None:
    result = (
        TraceBuilder("x")
        .state("quantity", 3, version=1, at=5.0)
        .barge_in(None, at=9.0)
        .state("quantity", 2, version=2, at=9.0)
        .build()
    )
    case_view = view(result, scenario("int-01"))

    responses = list(case_view.responses_to("barge_in"))

    assert responses == [(9.0, [{"kind": "update_state", "field": "quantity", "value": 2,
                                 "version": 2}])]  # fmt: skip


def test_trace_entries_carry_the_version_before_their_own_update() -> None:
    result = TraceBuilder("x").state("a", 1, version=1, at=1.0).state("b", 2, version=2, at=1.0)
    trace = result.build().trace

    updates = [e for e in trace if e.kind == "update_state"]

    assert [(e.data["version"], e.state_version) for e in updates] == [(1, None), (2, 1)]
    assert [e.seq for e in trace] == list(range(len(trace)))


def test_call_lifecycle_and_writes() -> None:
    result = corr04_robust_trace().build()
    calls = {c.call_id: c for c in result.tool_calls}

    assert calls["update_order-2"].status is CallStatus.CANCELLED
    assert [h.status for h in calls["update_order-2"].history] == [
        CallStatus.PREPARED,
        CallStatus.CANCELLED,
    ]
    assert calls["update_order-3"].status is CallStatus.COMPLETED
    assert calls["update_order-3"].number == 2
    (write,) = result.backend_writes
    assert (write.record, write.old, write.new, write.version) == ("5599", 1, 2, 2)
    assert write.idempotency_key == "corr-04:v3"


def test_worded_barge_in_is_a_caller_turn_with_the_event_at_its_end() -> None:
    result = TraceBuilder("x").barge_in("Make that 7 items.", at=11.0, end=13.0).build()

    (turn,) = result.turns
    (event,) = [e for e in result.trace if e.kind == "barge_in"]

    assert (turn.speaker, turn.barge_in, turn.start) == (Speaker.CALLER, True, 11.0)
    assert (event.time, event.data["text"]) == (13.0, "Make that 7 items.")
