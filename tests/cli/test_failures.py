"""Bad suites, crashing and hanging agents, interrupted runs: clear errors, nothing lost."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.cli.conftest import Polygon

AGENT = """
import asyncio
from polygon_voice.model import CallStarted, EndCall, Say


class Moody:
    def __init__(self, context):
        self.context = context

    async def respond(self, event):
        if self.context.scenario_id == "crash":
            raise RuntimeError("the agent fell over")
        if self.context.scenario_id == "hang":
            await asyncio.sleep(3600)
        yield Say(text="Hello, goodbye.")
        yield EndCall()
"""

SUITE = """
name: moods
agent: agent.py:Moody
settings: {agent_turn_timeout: 0.3}
scenarios:
  - {id: fine-1, script: [{say: hi}]}
  - {id: crash, script: [{say: hi}]}
  - {id: fine-2, script: [{say: hi}]}
  - {id: hang, script: [{say: hi}]}
  - {id: fine-3, script: [{say: hi}]}
"""


def write_suite(folder: Path, suite: str = SUITE, agent: str = AGENT) -> Path:
    (folder / "agent.py").write_text(agent)
    path = folder / "suite.yaml"
    path.write_text(textwrap.dedent(suite))
    return path


def test_crashing_and_hanging_agents_end_only_their_own_call(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir)
    code, _, err = polygon("run", str(suite), "--out", "out", "--concurrency", "2")
    assert code == 0
    report = json.loads((polygon.workdir / "out" / "report.json").read_text())
    ends = {c["id"]: (c["end_reason"], c["end_message"]) for c in report["conversations"]}
    assert ends["crash"][0] == "error"
    assert "RuntimeError: the agent fell over" in ends["crash"][1]
    assert ends["hang"][0] == "error"
    assert "within 0.3s" in ends["hang"][1]
    for fine in ("fine-1", "fine-2", "fine-3"):
        assert ends[fine] == ("agent_hangup", "")
    assert "the agent fell over" in err


def test_a_malformed_suite_gets_one_clear_error(polygon: Polygon) -> None:
    bad = polygon.workdir / "bad.yaml"
    bad.write_text(
        "name: broken\nscenarios:\n  - id: a\n    script:\n      - barge_in: {at: mid_sentence}\n"
    )
    result = polygon.subprocess("run", str(bad))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "bad.yaml:5:" in result.stderr
    assert "scenarios[0].script[0].barge_in.at" in result.stderr
    assert "mid_sentence" in result.stderr


def test_a_missing_suite_file_is_named(polygon: Polygon) -> None:
    code, _, err = polygon("run", "nowhere.yaml")
    assert code == 2
    assert "nowhere.yaml" in err


def test_an_unknown_agent_is_a_clear_error(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir)
    code, _, err = polygon("run", str(suite), "--agent", "no_such_module:Agent")
    assert code == 2
    assert "no_such_module" in err


def test_a_run_without_an_agent_says_how_to_name_one(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir, SUITE.replace("agent: agent.py:Moody\n", ""))
    code, _, err = polygon("run", str(suite))
    assert code == 2
    assert "--agent" in err


def test_resume_runs_only_the_missing_calls(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir)
    code, _, _ = polygon("run", str(suite), "--out", "first")
    assert code == 0
    run_id = json.loads((polygon.workdir / "first" / "report.json").read_text())["run_id"]
    # Simulate a run killed after two calls: drop the others from the store.
    from sqlalchemy import text

    from polygon_voice.store import Store, resolve_db_url

    store = Store(resolve_db_url(str(polygon.db)))
    with store._engine.begin() as connection:
        connection.execute(
            text("DELETE FROM conversations WHERE run_id = :r AND idx >= 2"), {"r": run_id}
        )
    code, out, _ = polygon("run", str(suite), "--resume", run_id[:8], "--out", "second")
    assert code == 0
    assert "2 calls already stored" in out
    report = json.loads((polygon.workdir / "second" / "report.json").read_text())
    assert report["run_id"] == run_id
    assert [c["id"] for c in report["conversations"]] == [
        "fine-1",
        "crash",
        "fine-2",
        "hang",
        "fine-3",
    ]
    first = (polygon.workdir / "first" / "transcripts.jsonl").read_text()
    second = (polygon.workdir / "second" / "transcripts.jsonl").read_text()
    assert first == second


def test_resume_refuses_a_changed_suite(polygon: Polygon) -> None:
    suite = write_suite(polygon.workdir)
    polygon("run", str(suite), "--out", "first")
    run_id = json.loads((polygon.workdir / "first" / "report.json").read_text())["run_id"]
    suite.write_text(suite.read_text() + "\n# edited\n")
    code, _, err = polygon("run", str(suite), "--resume", run_id)
    assert code == 2
    assert "different version" in err


def test_a_tool_over_a_missing_collection_is_refused_before_the_run(polygon: Polygon) -> None:
    suite = SUITE + textwrap.dedent(
        """
        tools:
          lookup: {stub: {kind: stateful, collection: orders, op: get, key: id}}
        """
    )
    path = write_suite(polygon.workdir, suite)
    code, _, err = polygon("run", str(path))
    assert code == 2
    assert "orders" in err
    assert "suite.yaml" in err
    code, out, _ = polygon("runs")
    assert "moods" not in out  # nothing was started


def test_ctrl_c_stops_the_run_with_130_and_says_how_to_resume(polygon: Polygon) -> None:
    import os
    import signal
    import sqlite3
    import subprocess
    import sys
    import time

    suite = write_suite(
        polygon.workdir, SUITE.replace("agent_turn_timeout: 0.3", "agent_turn_timeout: 60")
    )
    command = [sys.executable, "-m", "polygon_voice", "run", str(suite), "--concurrency", "1"]
    process = subprocess.Popen(
        [*command, "--db", str(polygon.db)],
        cwd=polygon.workdir,
        env={**os.environ, "COLUMNS": "200"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    stored = 0
    while stored < 3 and time.monotonic() < deadline:  # fine-1, crash, fine-2; then `hang`
        time.sleep(0.2)
        try:
            with sqlite3.connect(polygon.db) as connection:
                stored = connection.execute("SELECT count(*) FROM conversations").fetchone()[0]
        except sqlite3.Error:
            continue
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted; finished calls are stored" in err
    assert "--resume" in err
    assert "Traceback" not in err
