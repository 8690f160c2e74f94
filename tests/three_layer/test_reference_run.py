"""The published reference run (SPEC 9.4, 9.5) reproduced from the scoring of real traces."""

from __future__ import annotations

import json

import pytest

from polygon_voice.model import CaseCategory
from polygon_voice.scenario import load_suite
from polygon_voice.suites import builtin_suite_path
from tests.cli.conftest import Polygon

PUBLISHED_AXES = {
    "captured": 24,
    "active_state_correct": 24,
    "tool_args_correct": 11,
    "stale_write_prevented": 8,
    "backend_correct": 8,
    "confirmation_matches_backend": 7,
}
PUBLISHED_CAUSES = [
    ("stale_tool_args", 10),
    ("unchecked_tool_result", 4),
    ("inflight_call_not_cancelled", 3),
    ("noise_taken_as_interruption", 2),
    ("unsafe_retry_after_backend_error", 2),
    ("confirmed_before_result", 1),
    ("missing_idempotency_key", 1),
]


def run_report(polygon: Polygon, agent: str, *extra: str) -> tuple[int, dict[str, object]]:
    code, _, err = polygon("run", "three-layer", "--agent", agent, "--out", agent, *extra)
    assert code in (0, 1), err
    return code, json.loads((polygon.workdir / agent / "report.json").read_text())


def test_the_suite_has_30_cases_evenly_split() -> None:
    path = builtin_suite_path("three-layer")
    assert path is not None
    suite = load_suite(path).suite
    categories = [s.category for s in suite.scenarios]
    assert len(categories) == 30
    for category in (CaseCategory.CORRECTION, CaseCategory.INTERRUPTION, CaseCategory.TOOL_ERROR):
        assert categories.count(category) == 10
    negations = [s for s in suite.scenarios if s.expected and not s.expected.should_execute]
    assert len(negations) == 2


def test_the_flawed_agent_reproduces_the_published_table(polygon: Polygon) -> None:
    _, report = run_report(polygon, "reference:flawed")
    axes = report["axes"]
    assert isinstance(axes, dict)
    assert {name: axes[name]["passed"] for name in PUBLISHED_AXES} == PUBLISHED_AXES
    assert all(axes[name]["total"] == 30 for name in PUBLISHED_AXES)
    assert report["e2e_integrity"] == {"passed": 7, "total": 30}
    causes = report["root_causes"]
    assert isinstance(causes, list)
    assert [(c["cause"], c["count"]) for c in causes] == PUBLISHED_CAUSES
    assert sum(c["count"] for c in causes) == 23
    layers = {c["cause"]: c["layer"] for c in causes}
    assert layers["stale_tool_args"] == "execution"
    assert layers["noise_taken_as_interruption"] == "conversation"
    assert layers["missing_idempotency_key"] == "state"
    cases = report["cases"]
    assert isinstance(cases, list)
    assert sum(c["e2e"] for c in cases) == 7
    assert all(c["root_cause"] is None for c in cases if c["e2e"])


def test_the_reference_axes_fit_the_published_pattern(polygon: Polygon) -> None:
    _, report = run_report(polygon, "reference:flawed")
    order = list(PUBLISHED_AXES)
    patterns: dict[str, set[str]] = {}
    for case in report["cases"]:  # type: ignore[union-attr]
        marks = "".join("1" if case[name] else "0" for name in order)
        patterns.setdefault(case["root_cause"] or "pass", set()).add(marks)
    assert patterns == {
        "pass": {"111111"},
        "stale_tool_args": {"110000"},
        "inflight_call_not_cancelled": {"110000"},
        "noise_taken_as_interruption": {"000000"},
        "unchecked_tool_result": {"000000"},
        "unsafe_retry_after_backend_error": {"111000"},
        "missing_idempotency_key": {"111000"},
        "confirmed_before_result": {"111110"},
    }


def test_the_robust_agent_passes_every_case_and_the_gate(polygon: Polygon) -> None:
    code, report = run_report(polygon, "reference:robust", "--gate")
    assert code == 0
    assert report["e2e_integrity"] == {"passed": 30, "total": 30}
    assert report["root_causes"] == []
    gate = report["release_gate"]
    assert isinstance(gate, dict)
    assert gate["passed"] is True
    assert [c["id"] for c in gate["checks"]] == ["REL-1", "REL-2", "REL-3", "REL-4"]


def test_the_gate_fails_the_flawed_agent_and_names_the_cases(polygon: Polygon) -> None:
    code, report = run_report(polygon, "reference:flawed", "--gate")
    assert code == 1
    gate = report["release_gate"]
    assert isinstance(gate, dict)
    broken = {c["id"]: c["cases"] for c in gate["checks"]}
    assert "te-07" in broken["REL-3"]
    assert "corr-04" in broken["REL-1"]
    assert all(not c["passed"] for c in gate["checks"])
    code, out, _ = polygon("gate", str(report["run_id"]))
    assert code == 1
    assert "REL-1" in out
    assert "corr-04" in out


@pytest.mark.parametrize(
    ("agent", "expected_code"), [("reference:robust", 0), ("reference:flawed", 1)]
)
def test_polygon_gate_exit_codes(polygon: Polygon, agent: str, expected_code: int) -> None:
    _, report = run_report(polygon, agent)
    code, _, _ = polygon("gate", str(report["run_id"])[:8])
    assert code == expected_code


def test_gate_refuses_a_run_without_cases(polygon: Polygon) -> None:
    from tests.cli.conftest import EXAMPLE_SUITE

    polygon("run", str(EXAMPLE_SUITE), "--out", "plain")
    run_id = json.loads((polygon.workdir / "plain" / "report.json").read_text())["run_id"]
    code, _, err = polygon("gate", run_id)
    assert code == 2
    assert "no three-layer cases" in err


def test_demo_prints_both_columns_and_the_fix_list(polygon: Polygon) -> None:
    result = polygon.subprocess("demo", "--out", "demo")
    assert result.returncode == 0, result.stderr
    assert "reference:flawed" in result.stdout
    assert "reference:robust" in result.stdout
    assert "24 / 30" in result.stdout
    assert "7 / 30" in result.stdout
    assert "stale_tool_args" in result.stdout
    for agent in ("flawed", "robust"):
        assert (polygon.workdir / "demo" / agent / "report.json").exists()
    assert "Open in a browser: demo/report.html" in result.stdout
    assert (polygon.workdir / "demo" / "report.html").is_file()


def test_show_prints_a_case_with_its_axes_and_root_cause(polygon: Polygon) -> None:
    _, report = run_report(polygon, "reference:flawed")
    code, out, _ = polygon("show", str(report["run_id"]), "--conversation", "corr-04")
    assert code == 0
    assert "Three-layer outcome of corr-04: not end-to-end" in out
    assert "stale_tool_args" in out
    assert "breaks REL-1, REL-2, REL-4" in out
