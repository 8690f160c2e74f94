"""`polygon import` as a user meets it: summary, one error line per bad record, exit codes,
and the imported run listed, shown and reported like any other."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

import polygon_voice.cli.imports  # noqa: F401 - registers the command
from polygon_voice.cli.app import app
from tests.cli.conftest import Polygon
from tests.imports.conftest import transcripts

CHAT = [
    {"role": "system", "content": "You are a booking agent."},
    {"role": "user", "content": "Move me to Friday."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
     "function": {"name": "reschedule", "arguments": "{\"day\":\"fri\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "{\"ok\":true}"},
    {"role": "assistant", "content": "Done, you're on Friday."},
]  # fmt: skip


@pytest.fixture
def calls(tmp_path: Path) -> Path:
    """A folder of good records in four formats."""
    folder = tmp_path / "calls"
    folder.mkdir()
    (folder / "chat.json").write_text(json.dumps(CHAT))
    chats = [{"id": f"conv-{n}", "messages": CHAT} for n in range(3)]
    (folder / "chats.jsonl.gz").write_bytes(
        gzip.compress("".join(json.dumps(c) + "\n" for c in chats).encode())
    )
    (folder / "turns.csv").write_text("call_id,speaker,text\nx1,agent,Hi\nx1,caller,Hello\n")
    (folder / "call.txt").write_text("Agent: Hello\nCaller: Hi, a table for two\n")
    return folder


def test_a_good_folder_imports_every_call_and_says_which_format(
    polygon: Polygon, calls: Path
) -> None:
    code, out, err = polygon("import", str(calls), "--name", "october")
    assert code == 0, err
    assert "6 imported, 0 skipped, 0 failed" in out
    assert "chats.jsonl.gz: openai (3 records)" in err
    assert "turns.csv: csv (1 record)" in err
    assert "call.txt: lines (1 record)" in err
    code, out, _err = polygon("runs", "--json")
    [run] = json.loads(out)["runs"]
    assert run["suite"] == "october"


def test_bad_records_get_one_error_line_each_and_the_rest_are_stored(
    polygon: Polygon, calls: Path
) -> None:
    (calls / "bad.jsonl").write_text(
        '{"id": "b1", "messages": [{"role": "user", "content": 5}]}\n'
        "{broken\n"
        '{"nothing": "known"}\n'
    )
    code, out, err = polygon("import", str(calls))
    assert code == 1
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 3
    assert any("bad.jsonl:1: messages[0].content: expected text" in line for line in lines)
    assert any("bad.jsonl:2: not valid JSON" in line for line in lines)
    assert any("bad.jsonl:3: matches no known format" in line for line in lines)
    assert "6 imported, 0 skipped, 3 failed" in out


def test_a_call_id_seen_twice_is_an_error_naming_both_sources(
    polygon: Polygon, tmp_path: Path
) -> None:
    path = tmp_path / "dup.jsonl"
    path.write_text("".join(json.dumps({"id": "same", "messages": CHAT}) + "\n" for _ in "ab"))
    code, _out, err = polygon("import", str(path))
    assert code == 1
    assert f"dup.jsonl:2: call_id: call 'same' is imported twice: first from {path}:1" in err
    code, out, _err = polygon("import", str(path), "--json")
    data = json.loads(out)
    assert data["imported"] == 1
    assert data["failed"] == 1
    [failure] = data["failures"]
    assert failure["source"] == f"{path}:2"
    assert failure["field"] == "call_id"
    assert f"first from {path}:1" in failure["message"]


def test_nothing_readable_is_exit_2_and_stores_no_run(polygon: Polygon, tmp_path: Path) -> None:
    code, _out, err = polygon("import", str(tmp_path / "missing.json"))
    assert code == 2
    assert "no such file or folder" in err
    code, out, _err = polygon("runs", "--json")
    assert json.loads(out)["runs"] == []


def test_an_unknown_format_is_exit_2_with_the_names(polygon: Polygon, calls: Path) -> None:
    code, _out, err = polygon("import", str(calls), "--format", "nope")
    assert code == 2
    assert "openai" in err
    assert "csv" in err


def test_a_forced_format_and_an_agent_label(polygon: Polygon, tmp_path: Path) -> None:
    path = tmp_path / "call.txt"
    path.write_text("Maya: Hello, clinic\nJohn: Hi, I need to move my appointment\n")
    code, out, err = polygon("import", str(path), "--format", "lines", "--agent-label", "Maya")
    assert code == 0, err
    assert "1 imported" in out


def test_stdin(polygon: Polygon) -> None:
    result = polygon.runner.invoke(
        app,
        ["import", "-", "--db", str(polygon.db), "--json"],
        input=json.dumps({"id": "s1", "messages": CHAT}),
    )
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["imported"] == 1


def test_the_imported_run_is_shown_and_reported(polygon: Polygon, calls: Path) -> None:
    code, out, _err = polygon("import", str(calls), "--json")
    run_id = json.loads(out)["run_id"]
    code, out, err = polygon("show", run_id)
    assert code == 0, err
    assert "conv-1" in out
    code, out, err = polygon("show", run_id, "--conversation", "conv-1", "--json")
    assert code == 0, err
    conversation = json.loads(out)["conversation"]
    assert conversation["tool_calls"][0]["result"] == {"ok": True}
    assert conversation["trace"][0]["kind"] == "import"
    code, _out, err = polygon("report", run_id, "--html", str(polygon.workdir / "r.html"))
    assert code == 0, err
    assert "conv-1" in (polygon.workdir / "r.html").read_text()


def test_a_runs_own_transcripts_import_as_a_run_of_kind_imported(played: Polygon) -> None:
    code, out, err = played("import", str(transcripts(played)), "--json")
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    code, out, _err = played("runs", "--json")
    assert run_id in out
    code, out, err = played("show", run_id, "--json")
    assert code == 0, err


def test_every_vendor_fixture_is_detected_as_its_own_format(polygon: Polygon) -> None:
    fixtures = Path(__file__).parent / "fixtures"
    folders = sorted(p for p in fixtures.iterdir() if p.is_dir())
    code, out, err = polygon("import", str(fixtures), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["failed"] == 0
    assert data["also_matched"] == {}
    for name, counts in data["formats"].items():
        assert list(counts) == [Path(name).parent.name]
    assert {Path(name).parent.name for name in data["formats"]} == {p.name for p in folders}


def test_the_command_runs_as_a_user_runs_it(polygon: Polygon, calls: Path) -> None:
    done = polygon.subprocess("import", str(calls / "call.txt"))
    assert done.returncode == 0, done.stderr
    assert "1 imported, 0 skipped, 0 failed" in done.stdout
    listing = subprocess.run(
        [sys.executable, "-m", "polygon_voice", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "import" in listing.stdout.split("demo")[0]


def test_each_call_keeps_where_it_was_read(tmp_path: Path) -> None:
    from polygon_voice.imports.convert import import_entry
    from polygon_voice.imports.run import ImportOptions, import_calls
    from polygon_voice.store import Store

    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{n}", "messages": CHAT}) + "\n" for n in (1, 2)))
    store = Store(f"sqlite:///{tmp_path / 'p.db'}")
    summary = import_calls(store, ImportOptions(paths=(str(path),)))
    assert summary.run_id is not None
    sources = {
        r.id: (import_entry(r) or {}).get("source")
        for r in store.iter_conversations(summary.run_id)
    }
    assert sources == {"c1": f"{path}:1", "c2": f"{path}:2"}
