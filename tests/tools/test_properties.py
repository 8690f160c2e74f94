"""Invariants of the runtime over random call sequences (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.model import CallStatus, PrepareToolCall, ToolResult
from tests.tools.helpers import runtime, stateful

KINDS = ["timeout", "empty_result", "wrong_record", "http_500", "late_success", "duplicate_write"]
FINISHED = {CallStatus.COMPLETED, CallStatus.FAILED, CallStatus.TIMED_OUT, CallStatus.CANCELLED}

moves = st.lists(
    st.tuples(
        st.sampled_from(["send", "cancel", "advance"]),
        st.floats(min_value=0.0, max_value=3.0),
        st.integers(min_value=1, max_value=5),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(moves=moves, seed=st.integers(0, 10_000))
def test_every_sent_call_gets_exactly_one_first_outcome(
    moves: list[tuple[str, float, int]], seed: int
) -> None:
    faults = [{"kind": kind, "rate": 0.15, "delay": 4.0} for kind in KINDS]
    latency = {"distribution": "uniform", "low": 0.1, "high": 6.0}
    rt = runtime(
        {"upd": stateful("update", latency=latency, timeout=4.0, faults=faults)}, seed=(seed,)
    )
    now, sent, delivered = 0.0, [], []
    for index, (move, step, qty) in enumerate(moves):
        now += step
        if move == "send":
            call_id = f"c{index}"
            action = PrepareToolCall(
                call_id=call_id, tool="upd", args={"order_id": "A1", "qty": qty}
            )
            rt.prepare(action, now)
            rt.send(call_id, now)
            sent.append(call_id)
        elif move == "cancel" and sent:
            rt.cancel(sent[qty % len(sent)], now)
        else:
            delivered += rt.advance(now)
    delivered += rt.advance(float("inf"))
    times = [at for at, _ in delivered]
    assert times == sorted(times)
    assert not rt.awaiting()
    assert rt.next_due() is None
    for call in rt.calls:
        assert call.status in FINISHED
        mine = [e for _, e in delivered if getattr(e, "call_id", None) == call.call_id]
        late = [e for e in mine if isinstance(e, ToolResult) and e.late]
        assert len(mine) - len(late) == (0 if call.status is CallStatus.CANCELLED else 1)
        assert len(late) == (0 if call.late_result_at is None else 1)
        if late:
            assert call.status is CallStatus.TIMED_OUT
    versions = [write.version for write in rt.backend.writes]
    assert versions == sorted(versions)
