"""The API the pytest plugin needed, usable on its own: a suite built from scenarios on another
suite's tools, the results of some scenarios of a run, one stored call read whole, the root
causes' names."""

from __future__ import annotations

from pathlib import Path

import pytest

from polygon_voice import (
    InputError,
    Scenario,
    build_suite,
    read_conversation,
    root_causes,
    run_suite,
)

CHANGE = {
    "id": "three-items",
    "script": [{"say": "Please change order 5590 to 3 items."}, {"say": "Thanks, bye."}],
    "expect": {"backend": {"orders": {"5590": {"quantity": 3}}}},
}


def test_build_suite_plays_written_scenarios_on_the_base_suites_tools(tmp_path: Path) -> None:
    other = Scenario.model_validate({"id": "bye", "script": [{"say": "Bye."}]})
    suite = build_suite([CHANGE, other], "three-layer", name="mine")
    assert suite.name == "mine"
    assert [s.id for s in suite.scenarios] == ["three-items", "bye"]
    assert "update_order" in suite.tools
    assert suite.backend["orders"]["5590"]["quantity"] == 2
    result = run_suite(
        suite, agent="reference:robust", db=str(tmp_path / "r.db"), write_files=False
    )
    assert result.calls[0].expect_met is True


def test_build_suite_names_the_scenario_and_field_that_is_wrong() -> None:
    with pytest.raises(InputError, match=r"scenarios\.1 \(b\)\.script\.0\.sey: Extra inputs"):
        build_suite([CHANGE, {"id": "b", "script": [{"sey": "hi"}]}], "three-layer")
    with pytest.raises(InputError, match="non-empty list"):
        build_suite([])
    with pytest.raises(InputError, match="non-empty list"):
        build_suite(CHANGE)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"no-such\.yaml: file not found"):
        build_suite([CHANGE], "no-such.yaml")


def test_only_counts_the_summary_over_the_chosen_scenarios(tmp_path: Path) -> None:
    run = run_suite(
        "three-layer",
        agent="reference:flawed",
        scenarios=("corr-0[3-5]",),
        db=str(tmp_path / "r.db"),
        write_files=False,
    )
    whole = {check["id"]: check["cases"] for check in run.gate["checks"]}  # type: ignore[index]
    assert whole["REL-1"] == ["corr-04", "corr-05"]
    part = run.only(["corr-04"])
    assert [call.id for call in part.calls] == ["corr-04"]
    checks = {check["id"]: check["cases"] for check in part.gate["checks"]}  # type: ignore[index]
    assert checks["REL-1"] == ["corr-04"]
    assert part.expectations == {"met": 0, "not_met": 1, "not_exercised": 0}
    assert part.run_id == run.run_id
    assert run.only(["corr-03"]).verdicts == {"pass": 1}
    assert run.only(["no-such"]).calls == ()


def test_read_conversation_gives_the_stored_call(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    run = run_suite("three-layer", agent="reference:robust", scenarios=("te-01",), db=db)
    record = read_conversation(run.run_id[:6], "te-01", db=db)
    assert record.turns[0].speaker == "agent"
    assert record.tool_calls
    with pytest.raises(InputError, match="te-02"):
        read_conversation(run.run_id, "te-02", db=db)
    with pytest.raises(InputError, match="no run"):
        read_conversation("ffffffff", "te-01", db=db)


def test_root_causes_name_each_cause_and_its_layer() -> None:
    causes = root_causes()
    assert causes["inflight_call_not_cancelled"] == "execution"
    assert causes["noise_taken_as_interruption"] == "conversation"
    assert causes["unclassified"] is None
    assert set(causes.values()) == {"execution", "conversation", "state", None}
