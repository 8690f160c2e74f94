"""Imported calls judged as they are stored: the stages of a simulated call, real-call rules,
verdict counts in the summary, judge failures kept apart, and rejudging an imported run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.imports.convert import import_entry
from polygon_voice.imports.judging import (
    REAL_CALLER,
    CallJudging,
    declared_tools,
    scenario_for,
    scenario_key,
)
from polygon_voice.imports.run import ImportOptions, import_calls
from polygon_voice.judge import Judging
from polygon_voice.model import Expect
from polygon_voice.store import Store
from polygon_voice.testing import FakeLLMServer
from tests.cli.conftest import Polygon
from tests.judge.judge_model import judge_failing_first


def chat(call_id: str, day: str, *, tool: bool = True, said: str | None = None) -> dict[str, Any]:
    """An OpenAI-messages call: the caller asks to move to Friday, the agent moves to `day`."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Move me to Friday please."}]
    if tool:
        arguments = json.dumps({"day": day})
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "reschedule", "arguments": arguments}}]},
            {"role": "tool", "tool_call_id": "c1", "content": '{"ok": true}'},
        ]  # fmt: skip
    messages.append({"role": "assistant", "content": said or f"Done, you are on {day} now."})
    return {"id": call_id, "messages": messages}


def write_calls(folder: Path, *calls: dict[str, Any]) -> Path:
    path = folder / "calls.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return path


MOVED_TO_FRIDAY = {"outcome": "success", "tools": {"called": [{"tool": "reschedule",
                   "args": {"day": "friday"}}]}}  # fmt: skip


def write_expect(folder: Path, entries: dict[str, Any]) -> Path:
    path = folder / "expect.json"
    path.write_text(json.dumps(entries))
    return path


def imported(polygon: Polygon, *args: str, code: int = 0) -> dict[str, Any]:
    status, out, err = polygon("import", *args, "--json")
    assert status == code, err + out
    summary: dict[str, Any] = json.loads(out)
    return summary


def shown(polygon: Polygon, run_id: str) -> dict[str, dict[str, Any]]:
    status, out, err = polygon("show", run_id, "--json")
    assert status == 0, err
    return {c["id"]: c for c in json.loads(out)["conversations"]}


def test_an_expectation_that_holds_passes_and_one_that_does_not_fails(
    polygon: Polygon, tmp_path: Path
) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"), chat("broken", "monday"))
    expect = write_expect(tmp_path, {"kept": {"expect": MOVED_TO_FRIDAY},
                                     "broken": {"expect": MOVED_TO_FRIDAY}})  # fmt: skip
    summary = imported(polygon, str(calls), "--expect", str(expect))
    assert summary["judged"] == 2
    assert summary["with_expectation"] == 2
    assert summary["expectations"] == {"met": 1, "not_met": 1, "not_exercised": 0}
    assert summary["verdicts"] == {"pass": 1, "warn": 0, "fail": 1, "unscored": 0}
    calls_shown = shown(polygon, summary["run_id"])
    assert calls_shown["kept"]["judgement"]["verdict"] == "pass"
    assert calls_shown["broken"]["judgement"]["verdict"] == "fail"
    failed = [c for c in calls_shown["broken"]["expect"]["checks"] if not c["passed"]]
    assert [c["name"] for c in failed] == ["called"]
    assert "monday" in failed[0]["why"]


def test_a_call_without_an_expectation_is_never_a_pass(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("plain", "friday"))
    summary = imported(polygon, str(calls))
    assert summary["with_expectation"] == 0
    [call] = shown(polygon, summary["run_id"]).values()
    judgement = call["judgement"]
    assert judgement["verdict"] == "unscored"
    goal = judgement["criteria"]["goal_achievement"]
    assert goal["status"] == "not_applicable"
    assert "real call" in goal["reason"]
    assert call.get("expect") is None


def test_every_stage_of_a_simulated_call_is_stored(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    expect = write_expect(tmp_path, {"kept": {"expect": MOVED_TO_FRIDAY}})
    probes = tmp_path / "probes.yaml"
    probes.write_text(
        "probes:\n  - id: promise\n    rule: promise_without_tool_call\n"
        "    question: Did the agent say something was done before a tool confirmed it?\n"
        "    polarity: guardrail\n"
    )
    summary = imported(polygon, str(calls), "--expect", str(expect), "--probes", str(probes))
    with Store(f"sqlite:///{polygon.db}") as store:
        stages = {
            stage
            for stage in ("expect", "conversation_checks", "judge", "probes", "checks")
            if store.get_stage_result(summary["run_id"], "kept", stage) is not None
        }
        record = store.get_run(summary["run_id"])
    assert stages == {"expect", "conversation_checks", "judge", "probes"}
    assert record.config["judge"] == "deterministic"
    assert record.config["rubric"] == "v3"


def test_judge_none_stores_the_calls_unjudged(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    summary = imported(polygon, str(calls), "--judge", "none")
    assert summary["judged"] == 0
    with Store(f"sqlite:///{polygon.db}") as store:
        assert store.get_stage_result(summary["run_id"], "kept", "judge") is None


def test_a_forbidden_phrase_fails_a_real_call(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("rude", "friday", said="Done, you idiot."))
    summary = imported(polygon, str(calls), "--forbidden-phrase", "idiot")
    assert summary["verdicts"]["fail"] == 1
    [call] = shown(polygon, summary["run_id"]).values()
    assert "forbidden_phrase" in call["judgement"]["gates_failed"]


def test_the_summary_line_counts_verdicts_and_expectations(
    polygon: Polygon, tmp_path: Path
) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"), chat("plain", "friday"))
    expect = write_expect(tmp_path, {"kept": {"expect": MOVED_TO_FRIDAY}})
    code, out, err = polygon("import", str(calls), "--expect", str(expect))
    assert code == 0, err
    assert "2 imported, 0 skipped, 0 failed" in out
    assert "judged 2: pass 1, unscored 1; 1 with an expectation (1 met)" in out


def test_llm_judge_without_a_model_is_a_setup_error_before_anything_is_read(
    polygon: Polygon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("POLYGON_JUDGE_MODEL", "POLYGON_MODEL", "POLYGON_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    calls = write_calls(tmp_path, chat("kept", "friday"))
    code, _out, err = polygon("import", str(calls), "--judge", "llm")
    assert code == 2
    assert "judge model" in err
    code, out, _err = polygon("runs", "--json")
    assert json.loads(out)["runs"] == []


def test_an_unknown_judge_is_refused(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    code, _out, err = polygon("import", str(calls), "--judge", "oracle")
    assert code == 2
    assert "deterministic, llm, none" in err


class _BrokenJudge:
    name = "broken"

    def score(self, given: object, rubric: object) -> dict[str, object]:
        raise RuntimeError("judge bug")


def test_a_judge_that_raises_keeps_the_call_stored_and_says_so(tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"), chat("other", "friday"))
    judging = CallJudging(Judging(judge=_BrokenJudge()))  # type: ignore[arg-type]
    with Store(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        summary = import_calls(store, ImportOptions((str(calls),)), None, judging)
        assert summary.imported == 2
        assert summary.judged == 0
        assert len(summary.judge_failures) == 2
        assert "judge bug" in summary.judge_failures[0].message
        assert "stored, not judged" in summary.judge_failures[0].message
        assert store.conversation_ids(summary.run_id or "") == {"kept", "other"}
        assert store.get_stage_result(summary.run_id or "", "kept", "judge") is None
        # The expectation-free call still has no expect stage; nothing half-written.
        assert store.get_stage_result(summary.run_id or "", "kept", "expect") is None


@pytest.fixture
def judge_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The judge role on a fake server: its first request fails for good, the rest answer."""
    with judge_failing_first(monkeypatch, evidence="Friday") as server:
        yield server


def test_the_llm_judge_judges_imported_calls_and_a_model_failure_is_exit_3(
    polygon: Polygon, tmp_path: Path, judge_model: FakeLLMServer
) -> None:
    calls = write_calls(tmp_path, chat("first", "friday"), chat("second", "friday"))
    summary = imported(polygon, str(calls), "--judge", "llm", "--rubric", "v2", code=3)
    assert summary["imported"] == 2
    assert summary["judged"] == 2
    [failure] = summary["judge_failures"]
    assert "first" in failure["message"]
    judged = shown(polygon, summary["run_id"])
    assert judged["first"]["judgement"]["verdict"] == "unscored"
    second = judged["second"]["judgement"]
    assert second["judge"] == "llm"
    assert second["criteria"]["factual_accuracy"]["status"] != "scored"
    assert [r.role for r in judge_model.requests].count("judge") == 2


def test_rejudge_rebuilds_the_scenarios_of_an_imported_run(
    polygon: Polygon, tmp_path: Path
) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"), chat("broken", "monday"))
    expect = write_expect(tmp_path, {"kept": {"expect": MOVED_TO_FRIDAY},
                                     "broken": {"expect": MOVED_TO_FRIDAY}})  # fmt: skip
    run_id = imported(polygon, str(calls), "--expect", str(expect))["run_id"]
    code, out, err = polygon("rejudge", run_id)
    assert code == 0, err
    assert "v3:deterministic:1" in out
    code, _out, err = polygon("rejudge", run_id, "--rubric", "v2")
    assert code == 0, err
    with Store(f"sqlite:///{polygon.db}") as store:
        first = dict(store.iter_stage_results(run_id, "judge"))
        again = dict(store.iter_stage_results(run_id, "judge", "v3:deterministic:1"))
        older = dict(store.iter_stage_results(run_id, "judge", "v2:deterministic:1"))
    # Judged again the same way, the rebuilt scenarios give the import's own verdicts.
    assert {k: j["verdict"] for k, j in again.items()} == {"kept": "pass", "broken": "fail"}
    assert {k: j["verdict"] for k, j in first.items()} == {"kept": "pass", "broken": "fail"}
    assert {j["rubric_version"] for j in older.values()} == {"v2"}
    assert {j["rubric_version"] for j in first.values()} == {"v3"}  # the own set is untouched


def test_rejudge_of_an_imported_run_with_the_llm_judge(
    polygon: Polygon, tmp_path: Path, judge_model: FakeLLMServer
) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    run_id = imported(polygon, str(calls))["run_id"]
    code, out, err = polygon("rejudge", run_id, "--judge", "llm", "--rubric", "v2")
    # The fake model's first answer is an error: that call is unscored, an exit 3.
    assert code == 3, err + out
    code, out, err = polygon("rejudge", run_id, "--judge", "llm", "--rubric", "v2")
    assert code == 0, err + out
    with Store(f"sqlite:///{polygon.db}") as store:
        [(_, judgement)] = list(store.iter_stage_results(run_id, "judge", "v2:llm:1#2"))
    assert judgement["judge"] == "llm"
    assert judgement["criteria"]["goal_achievement"]["score"] is not None


def test_the_scenario_of_an_imported_call(tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("odd id/with space", "friday"))
    with Store(f"sqlite:///{tmp_path / 'db.sqlite'}") as store:
        summary = import_calls(store, ImportOptions((str(calls),)))
        [result] = list(store.iter_conversations(summary.run_id or ""))
    expect = Expect.model_validate(
        {"tools": {"called": [{"tool": "reschedule"}], "not_called": [{"tool": "refund"}]}}
    )
    scenario = scenario_for(result, expect)
    assert scenario.id == "odd id/with space"  # a real id is kept as it is, not refused
    assert scenario.persona is REAL_CALLER
    assert scenario.persona.facts == {}
    assert scenario.persona.goal == ""
    assert scenario.expect is expect
    assert list(declared_tools(result, expect)) == ["reschedule", "refund"]
    assert import_entry(result) is not None


@pytest.mark.parametrize(
    ("key", "wanted"),
    [
        ("customer.number", "+15550100"),
        ("analysis.intent", "cancel"),
        ("tags.1", "vip"),
        ("flag", "true"),
        ("count", "3"),
        ("customer", None),  # an object is no scenario id
        ("customer.missing", None),
        ("tags.9", None),
        ("empty", None),
        ("nothing", None),
    ],
)
def test_scenario_key_reads_a_scalar_at_a_dotted_path(key: str, wanted: str | None) -> None:
    metadata = {
        "customer": {"number": "+15550100"},
        "analysis": {"intent": "cancel"},
        "tags": ["new", "vip"],
        "flag": True,
        "count": 3,
        "empty": "  ",
        "nothing": None,
    }
    assert scenario_key(metadata, key) == wanted
