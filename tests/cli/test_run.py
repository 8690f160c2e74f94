"""`polygon run`, `runs`, `show` and `schema` end to end on the example suite."""

from __future__ import annotations

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
