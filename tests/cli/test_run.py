"""`polygon run`, `runs`, `show` and `schema` end to end on the example suite."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import jsonschema

from polygon_voice.cli import app
from tests.cli.conftest import EXAMPLE_SUITE, Polygon


def test_run_writes_report_and_transcripts(polygon: Polygon, tmp_path: Path) -> None:
    code, out, err = polygon("run", str(EXAMPLE_SUITE), "--out", "report")
    assert code == 0, err
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["suite"] == "order-line"
    assert report["agent"] == "agent.py:OrderLineAgent"
    assert report["seed"] == 0
    assert report["status"] == "finished"
    ids = [c["id"] for c in report["conversations"]]
    assert ids[:3] == ["change-quantity", "change-date-step-by-step", "correction-during-tool-prep"]
    assert len(ids) == 9
    by_id = {c["id"]: c for c in report["conversations"]}
    assert by_id["change-quantity"]["end_reason"] == "agent_hangup"
    assert by_id["crm-down"]["end_reason"] == "transferred"
    assert by_id["silent-caller"]["end_reason"] == "caller_hangup"
    assert all(c["turns"] > 0 for c in report["conversations"])
    assert report["summary"]["conversations"] == 9
    lines = (tmp_path / "report" / "transcripts.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ids
    assert report["run_id"] in out


def test_the_stored_run_can_be_listed_and_shown(polygon: Polygon) -> None:
    code, _, _ = polygon("run", str(EXAMPLE_SUITE), "--out", "report")
    assert code == 0
    report = json.loads((polygon.workdir / "report" / "report.json").read_text())
    run_id = report["run_id"]
    code, out, _ = polygon("runs")
    assert code == 0
    assert run_id[:8] in out
    code, out, _ = polygon("show", run_id[:6], "--conversation", "crm-timeout-then-retry")
    assert code == 0
    assert "Order 5590, change it to 10." in out
    assert "timed_out" in out
    assert "orders/5590.quantity: 2 -> 10" in out
    code, _, err = polygon("show", run_id, "--conversation", "nope")
    assert code == 2
    assert "nope" in err


def test_the_example_correction_builds_the_second_call_on_the_new_version(
    polygon: Polygon,
) -> None:
    code, _, _ = polygon("run", str(EXAMPLE_SUITE), "--out", "report")
    assert code == 0
    lines = (polygon.workdir / "report" / "transcripts.jsonl").read_text().splitlines()
    call = next(json.loads(x) for x in lines if '"correction-during-tool-prep"' in x)
    first, second = call["tool_calls"]
    assert first["status"] == "prepared"  # built from 5590, never sent: the caller corrected it
    assert first["args"]["order_id"] == "5590"
    assert second["args"]["order_id"] == "5599"
    assert second["state_version"] > first["state_version"]
    assert [w["record"] for w in call["backend_writes"]] == ["5599"]


def test_schema_is_a_json_schema_for_suites(polygon: Polygon) -> None:
    result = polygon.runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert "scenarios" in schema["properties"]


def test_run_json_is_one_document_with_every_call(polygon: Polygon) -> None:
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--json", "--scenario", "change-*")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing but the document on stdout
    assert [c["id"] for c in data["calls"]] == ["change-quantity", "change-date-step-by-step"]
    assert data["verdicts"] == {"pass": 2}
    assert data["exit_code"] == 0
    assert data["failures"] == []
    assert {p["id"] for p in data["probes"]} >= {"promise_without_tool_call"}
    assert Path(polygon.workdir, data["report"]).exists()
    assert data["calls"][0]["expect_met"] is True


def test_quiet_prints_only_the_final_line(polygon: Polygon) -> None:
    result = polygon.subprocess("run", str(EXAMPLE_SUITE), "--quiet")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("Run ")
    assert "9 calls, pass" in lines[0]


def test_probes_are_summarised_after_a_run(polygon: Polygon) -> None:
    code, out, _ = polygon("run", str(EXAMPLE_SUITE))
    assert code == 0
    assert "Probes" in out
    assert "promise_without_tool_call" in out


def test_run_help_names_every_builtin_suite_and_no_spec_codes(polygon: Polygon) -> None:
    from polygon_voice.suites import BUILTIN_SUITES

    for command in ("run", "rejudge", "demo"):
        result = polygon.runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0
        for code in ("RUB-", "REL-", "PROBE-", "READ-", "GATE-"):
            assert code not in result.stdout, (command, code)
        if command == "run":
            for name in BUILTIN_SUITES:
                assert name in result.stdout
            for option in ("--fail-on", "--min-composite", "--scenario", "--json", "--quiet"):
                assert option in result.stdout


def test_the_command_keeps_the_judges_limits() -> None:
    from polygon_voice.cli import judge as judge_command
    from polygon_voice.cli import runs
    from polygon_voice.judge import DEFAULT_RUBRIC, MAX_JUDGE_REPEATS

    # Copied so `--help` imports no judge; kept equal here.
    assert runs.MAX_JUDGE_REPEATS == MAX_JUDGE_REPEATS
    rubric = inspect.signature(judge_command.rejudge).parameters["rubric"].default
    assert rubric == DEFAULT_RUBRIC


def test_rejudge_takes_a_name_and_refuses_a_taken_or_empty_one(polygon: Polygon) -> None:
    code, out, err = polygon("run", str(EXAMPLE_SUITE), "--quiet")
    assert code == 0, err
    run_id = out.split()[1].rstrip(":")
    code, out, err = polygon("rejudge", run_id, "--rubric", "v2", "--name", "before-fix")
    assert code == 0, err
    assert "Set before-fix of run" in out
    code, _, err = polygon("rejudge", run_id, "--name", "before-fix")
    assert code == 2
    assert "already has a judgement set 'before-fix'" in err
    code, _, err = polygon("rejudge", run_id, "--name", "")
    assert code == 2
    assert "needs a name" in err
    code, out, _ = polygon(
        "show", run_id, "--conversation", "crm-down", "--judgement-set", "before-fix"
    )
    assert code == 0
    assert "v2" in out
