"""The failure-mode matrix: every subtype of SPEC 9.1 as a generated case."""

from __future__ import annotations

import json

import yaml

from polygon_voice.scenario import load_suite
from polygon_voice.scenario.failure_modes import failure_mode_matrix, failure_modes_suite
from polygon_voice.suites import builtin_suite_path
from tests.cli.conftest import Polygon


def test_the_shipped_suite_is_what_the_generators_make() -> None:
    base_path, shipped_path = builtin_suite_path("three-layer"), builtin_suite_path("failure-modes")
    assert base_path is not None
    assert shipped_path is not None
    base = yaml.safe_load(base_path.read_text())
    assert yaml.safe_load(shipped_path.read_text()) == failure_modes_suite(base)
    assert len(load_suite(shipped_path).suite.scenarios) == len(failure_mode_matrix())


def test_every_subtype_has_a_case() -> None:
    cases = failure_mode_matrix()
    setups = [c["setup"] for c in cases]
    stages = {s.get("interrupt_stage") for s in setups if "interrupt_stage" in s}
    assert {"mid_speech", "during_tool_prep", "after_tool_fired"} <= stages
    assert any(s.get("noise") for s in setups)
    fields = {s.get("field") for s in setups}
    assert {"order_number", "delivery_date", "quantity", "execute"} <= fields
    faults = {s.get("fault") for s in setups}
    assert faults >= {
        "timeout",
        "empty_result",
        "wrong_record",
        "http_500",
        "late_success",
        "duplicate_write",
    }
    assert any(c["category"] == "state_conflict" for c in cases)
    assert any(s.get("combined_with") == "tool_error" for s in setups)
    assert len({c["id"] for c in cases}) == len(cases)


def test_the_robust_agent_survives_the_whole_matrix(polygon: Polygon) -> None:
    code, _, err = polygon("run", "failure-modes", "--agent", "reference:robust", "--out", "fm")
    assert code == 0, err
    report = json.loads((polygon.workdir / "fm" / "report.json").read_text())
    assert report["e2e_integrity"] == {"passed": 16, "total": 16}
    assert report["release_gate"]["passed"] is True


def test_the_flawed_agent_fails_the_matrix_for_named_reasons(polygon: Polygon) -> None:
    polygon("run", "failure-modes", "--agent", "reference:flawed", "--out", "fm")
    report = json.loads((polygon.workdir / "fm" / "report.json").read_text())
    causes = {c["id"]: c["root_cause"] for c in report["cases"]}
    assert causes["fm-int-background-noise"] == "noise_taken_as_interruption"
    assert causes["fm-te-timeout"] == "confirmed_before_result"  # confirmed; nothing ever landed
    assert causes["fm-combo-correction-during-retry"] == "stale_tool_args"
    assert causes["fm-int-before-finished"] is None
    assert "unclassified" not in causes.values()
