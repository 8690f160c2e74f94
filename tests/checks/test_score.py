"""Scoring a case and summing a run up: counts, the fix list, end-to-end integrity."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.checks import LAYERS, summarise
from polygon_voice.checks.gate import GATE_CHECKS
from polygon_voice.model import AXES, AxisVerdict, CaseScore, RootCause
from tests.checks.cases import (
    corr04_opening,
    corr04_robust_trace,
    failed_axes,
    int01_trace,
    int03_inflight_trace,
    scenario,
    score,
    te05_trace,
    te08_trace,
)
from tests.checks.trace_builder import TraceBuilder


def synthetic(case_id: str, cause: str | None) -> CaseScore:
    """A case score with a given root cause (every axis failing), or a passing one."""
    passed = cause is None
    return CaseScore(
        case_id=case_id,
        category="correction",
        axes={name: AxisVerdict(passed=passed, why="-") for name in AXES},
        e2e=passed,
        root_cause=None if cause is None else RootCause(cause=cause, layer=LAYERS[cause]),
    )


def test_summarise_counts_axes_e2e_causes_and_gate() -> None:
    scores = [
        score(corr04_robust_trace().build(), scenario("corr-04")),  # passes
        score(int01_trace(rollback=True).build(), scenario("int-01")),  # AX-6 holds only
        score(int03_inflight_trace().build(), scenario("int-03")),  # AX-1, AX-2 hold
        score(te08_trace().build(), scenario("te-08")),  # AX-6 fails only
        score(te05_trace(retry_key="k", first_key="k").build(), scenario("te-05")),  # passes
    ]

    summary = summarise(scores)

    assert summary.total == 5
    assert summary.axes() == {
        "captured": {"passed": 4, "total": 5},
        "active_state_correct": {"passed": 4, "total": 5},
        "tool_args_correct": {"passed": 3, "total": 5},
        "stale_write_prevented": {"passed": 3, "total": 5},
        "backend_correct": {"passed": 3, "total": 5},
        "confirmation_matches_backend": {"passed": 3, "total": 5},
    }
    report = summary.as_report()
    assert report["e2e_integrity"] == {"passed": 2, "total": 5}
    assert report["root_causes"] == [
        {"cause": "inflight_call_not_cancelled", "count": 1, "layer": "execution",
         "cases": ["int-03"]},
        {"cause": "noise_taken_as_interruption", "count": 1, "layer": "conversation",
         "cases": ["int-01"]},
        {"cause": "confirmed_before_result", "count": 1, "layer": "state", "cases": ["te-08"]},
    ]  # fmt: skip
    assert summary.breaks == {
        "corr-04": [],
        "int-01": ["REL-1"],
        "int-03": ["REL-1", "REL-2", "REL-4"],
        "te-08": ["REL-2", "REL-4"],
        "te-05": [],
    }
    assert report["release_gate"] == summary.gate()
    assert not report["release_gate"]["passed"]


def test_summarise_nothing() -> None:
    summary = summarise([])

    assert summary.as_report() == {
        "axes": {name: {"passed": 0, "total": 0} for name in AXES},
        "e2e_integrity": {"passed": 0, "total": 0},
        "root_causes": [],
        # No case was exercised: the gate proves nothing, so it does not pass.
        "release_gate": {
            "passed": False,
            "checks": [
                {"id": check, "name": name, "passed": True, "cases": []}
                for check, name in GATE_CHECKS.items()
            ],
        },
        "not_exercised": [],
    }


def test_fix_list_reproduces_the_published_one_from_any_order() -> None:
    # docs/three-layer.md: the flawed agent's fix list.
    published = [
        ("stale_tool_args", 10),
        ("unchecked_tool_result", 4),
        ("inflight_call_not_cancelled", 3),
        ("noise_taken_as_interruption", 2),
        ("unsafe_retry_after_backend_error", 2),
        ("confirmed_before_result", 1),
        ("missing_idempotency_key", 1),
    ]
    scores = [synthetic(f"{cause}-{n}", cause) for cause, count in published for n in range(count)]
    scores += [synthetic(f"ok-{n}", None) for n in range(7)]
    random.Random(7).shuffle(scores)

    rows = summarise(scores).fix_list()

    assert [(r["cause"], r["count"]) for r in rows] == published
    assert all(r["layer"] == LAYERS[r["cause"]].value for r in rows)
    assert sum(r["count"] for r in rows) == 23


def test_fix_list_largest_group_first() -> None:
    scores = [
        synthetic("a", "missing_idempotency_key"),
        synthetic("b", "unclassified"),
        synthetic("c", "unclassified"),
        synthetic("d", "unclassified"),
        synthetic("e", "stale_tool_args"),
        synthetic("f", "missing_idempotency_key"),
    ]

    rows = summarise(scores).fix_list()

    assert [(r["cause"], r["count"], r["cases"]) for r in rows] == [
        ("unclassified", 3, ["b", "c", "d"]),
        ("missing_idempotency_key", 2, ["a", "f"]),
        ("stale_tool_args", 1, ["e"]),
    ]


def test_fix_list_ties_follow_the_order_of_the_causes() -> None:
    # One case per cause, given in reverse: the documented order breaks every tie.
    causes = list(LAYERS)
    scores = [synthetic(cause, cause) for cause in reversed(causes)]

    rows = summarise(scores).fix_list()

    assert [r["cause"] for r in rows] == causes
    assert causes == [
        "stale_tool_args",
        "unchecked_tool_result",
        "inflight_call_not_cancelled",
        "noise_taken_as_interruption",
        "unsafe_retry_after_backend_error",
        "confirmed_before_result",
        "missing_idempotency_key",
        "wrong_field_or_record",
        "success_claimed_without_write",
        "request_dropped",
        "call_broken_off",
        "unclassified",
    ]


# --- end-to-end integrity: true exactly when all six axes hold ---------------------------------


@st.composite
def corr04_variants(draw: st.DrawFn) -> TraceBuilder:
    """corr-04 ("5590 to 2 items" -> "I meant 5599"), with any mix of the flaws the axes look
    for, and of the things a robust agent does."""
    builder = corr04_opening()
    if draw(st.booleans()):  # background noise over the read-back ...
        builder.barge_in(None, at=9.5)
        if draw(st.booleans()):  # ... taken as an interruption
            builder.state("quantity", 1, version=3, at=9.5)
    builder.barge_in("Sorry, I meant order 5599.", at=11.0, end=13.0, point="during_tool_prep")
    captured = draw(st.booleans())
    if captured:
        builder.state("order_id", "5599", version=4, at=13.0)
    stale = {"order_id": "5590", "quantity": 2}
    if draw(st.booleans()):  # the stale call is dropped in time
        builder.call("update_order-2", "update_order", stale, version=2, prepared=11.0,
                     cancelled=13.0)  # fmt: skip
    else:  # ... or it goes out and writes order 5590
        builder.call("update_order-2", "update_order", stale, version=2, prepared=11.0,
                     sent=13.0, completed=16.0)  # fmt: skip
        builder.write("orders", "5590", "quantity", 2, 2, call="update_order-2", at=16.0)
    if draw(st.booleans()):  # a new call for 5599
        version = draw(st.sampled_from([2, 4]))
        key = draw(st.sampled_from([None, "corr-04:new"]))
        builder.call("update_order-3", "update_order", {"order_id": "5599", "quantity": 2},
                     version=version, key=key, sent=13.1, completed=16.1)  # fmt: skip
        builder.write("orders", "5599", "quantity", 1, 2, call="update_order-3", at=16.1)
        if draw(st.booleans()):  # delivered twice
            builder.write("orders", "5599", "quantity", 2, 2, call="update_order-3", at=16.15)
    if draw(st.booleans()):
        builder.call("lookup_order-4", "lookup_order", {"order_id": "5599"}, sent=16.2,
                     completed=16.5)  # fmt: skip
    said = draw(st.sampled_from(["2 items", "1 item", "all set"]))
    builder.agent(f"Done: order 5599 now has {said}.", at=draw(st.sampled_from([14.0, 16.5])))
    if draw(st.booleans()):
        builder.state("quantity", draw(st.sampled_from([2, 3])), version=5, at=17.0)
    return builder


@settings(max_examples=150, deadline=None)
@given(corr04_variants())
def test_e2e_iff_all_six_axes_hold(builder: TraceBuilder) -> None:
    scored = score(builder.build(), scenario("corr-04"))
    failed = failed_axes(scored)

    assert list(scored.axes) == list(AXES)
    assert scored.e2e is (not failed)
    assert (scored.root_cause is None) is scored.e2e
    if scored.root_cause is not None:
        assert scored.root_cause.layer is LAYERS[scored.root_cause.cause]
        if scored.root_cause.cause == "unclassified":
            assert scored.root_cause.evidence == {"failed_axes": failed}
    assert ("REL-1" in scored.gate_breaks) is ("stale_write_prevented" in failed)
    assert ("REL-2" in scored.gate_breaks) is ("confirmation_matches_backend" in failed)


def test_one_failing_axis_is_enough_to_lose_e2e() -> None:
    only_state = score(
        corr04_robust_trace().state("quantity", 3, version=4, at=25.0).build(), scenario("corr-04")
    )
    only_confirmation = score(te08_trace().build(), scenario("te-08"))

    assert failed_axes(only_state) == ["active_state_correct"]
    assert failed_axes(only_confirmation) == ["confirmation_matches_backend"]
    assert not only_state.e2e
    assert not only_confirmation.e2e


def test_score_is_keyed_by_the_case() -> None:
    scored = score(TraceBuilder("int-01").build(), scenario("int-01"))

    assert (scored.case_id, scored.category, scored.stage) == ("int-01", "interruption", "checks")
