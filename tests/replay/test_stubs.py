"""The replay's stubs: recorded outcomes for the same call, a clear error for anything else."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from polygon_voice.model import CallStatus, StatusChange, ToolCall
from polygon_voice.model.events import ToolErrorKind
from polygon_voice.replay.stubs import (
    NO_RECORD,
    RecordedAnswers,
    ReplayStub,
    normal_form,
    short_args,
)
from polygon_voice.tools.backend import Backend, WriteContext


def recorded(tool: str, args: dict[str, Any], result: Any, *, failed: str = "") -> ToolCall:
    status = CallStatus.FAILED if failed else CallStatus.COMPLETED
    return ToolCall(
        call_id=f"r-{tool}-{len(str(args))}",
        tool=tool,
        args=args,
        status=status,
        history=[StatusChange(status=status, time=0.0)],
        result=None if failed else result,
        error=ToolErrorKind.TIMEOUT if failed else None,
        error_message=failed,
    )


def stub(tool: str, calls: list[ToolCall]) -> tuple[ReplayStub, list[dict[str, Any]]]:
    notes: list[dict[str, Any]] = []
    answers = RecordedAnswers.of(calls)
    return ReplayStub(tool, answers, lambda kind, data: notes.append(data)), notes


def run(replay: ReplayStub, args: dict[str, Any]) -> Any:
    return replay.run(args, Backend({}), WriteContext("c1", 0.0), True)


def test_the_same_arguments_in_any_form_get_the_recorded_results_in_order() -> None:
    calls = [
        recorded("get", {"id": "5590", "opts": {"a": 1, "b": [1, 2]}}, {"n": 1}),
        recorded("get", {"opts": {"b": [1.0, 2], "a": "1"}, "id": 5590}, {"n": 2}),
    ]
    replay, notes = stub("get", calls)
    same = {"opts": {"a": 1, "b": [1, 2]}, "id": 5590.0}
    assert run(replay, same).value == {"n": 1}
    assert run(replay, same).value == {"n": 2}
    third = run(replay, same)  # one call more than the record made
    assert third.error is ToolErrorKind.NOT_FOUND
    assert third.message.startswith(NO_RECORD)
    assert [n["served"] for n in notes] == ["recorded", "recorded", "error"]


def test_other_arguments_and_unused_tools_get_the_error() -> None:
    calls = [recorded("get", {"id": "5590"}, {"n": 1})]
    replay, notes = stub("get", calls)
    wrong = run(replay, {"id": "5591"})
    assert wrong.error is ToolErrorKind.NOT_FOUND
    assert "no (or no further) call" not in wrong.message  # names the reason plainly
    assert notes[-1]["args"] == '{"id": "5591"}'
    never, never_notes = stub("delete", calls)
    outcome = run(never, {"id": "5590"})
    assert "never used this tool" in outcome.message
    assert never_notes[-1]["reason"] == "the recorded call never used this tool"


def test_a_recorded_failure_is_served_as_that_failure() -> None:
    replay, _ = stub("pay", [recorded("pay", {"x": 1}, None, failed="gateway timed out")])
    outcome = run(replay, {"x": 1})
    assert (outcome.error, outcome.message) == (ToolErrorKind.TIMEOUT, "gateway timed out")


def test_ids_with_leading_zeros_and_booleans_stay_themselves() -> None:
    assert normal_form("0012") != normal_form(12)
    assert normal_form(True) != normal_form(1)
    assert normal_form("12") == normal_form(12.0)
    assert len(short_args({"text": "x" * 5000})) <= 300


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(st.dictionaries(st.text(), json_values, max_size=5))
def test_any_arguments_are_matched_against_themselves(args: dict[str, Any]) -> None:
    replay, _ = stub("t", [recorded("t", args, {"ok": True})])
    assert run(replay, dict(reversed(list(args.items())))).value == {"ok": True}
