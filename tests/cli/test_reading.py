"""Reading stored runs as a user does: `runs`, `show`, `gate`, `compare`, `probes` — their
tables at any width, piped or on a terminal, and their `--json` documents."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import EXAMPLE_SUITE

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Reader:
    """The `polygon` command run as a separate process on one database, piped or on a pty."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.db = str(workdir / "polygon.db")

    def _command(self, args: tuple[str, ...]) -> list[str]:
        # `probes list` reads probe files only: it has no database option.
        db = [] if args[:2] == ("probes", "list") else ["--db", self.db]
        return [sys.executable, "-m", "polygon_voice", *args, *db]

    def piped(self, *args: str, columns: int = 60) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "COLUMNS": str(columns)}
        env.pop("FORCE_COLOR", None)
        env.pop("TTY_COMPATIBLE", None)
        return subprocess.run(
            self._command(args), cwd=self.workdir, env=env, capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip

    def terminal(self, *args: str, columns: int = 60) -> tuple[int, str]:
        """Run with stdout and stderr on a pseudo-terminal of `columns` columns."""
        env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
        env.pop("NO_COLOR", None)
        leader, follower = pty.openpty()
        process = subprocess.Popen(
            self._command(args), cwd=self.workdir, env=env, stdin=subprocess.DEVNULL,
            stdout=follower, stderr=follower,
        )  # fmt: skip
        os.close(follower)
        chunks: list[bytes] = []
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                process.kill()
                raise AssertionError("the command hung on the terminal")
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        code = process.wait(timeout=60)
        text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
        return code, ANSI.sub("", text)

    def json(self, *args: str) -> Any:
        done = self.piped(*args, "--json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # the whole of stdout is one JSON document


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Reader:
    """A database with two runs of the example suite (seeds 0 and 1), each with its files."""
    workdir = tmp_path_factory.mktemp("reading")
    made = Reader(workdir)
    for seed in ("0", "1"):
        done = made.piped("run", str(EXAMPLE_SUITE), "--seed", seed, "--out", f"out{seed}")
        assert done.returncode == 0, done.stderr
    return made


def report(reader: Reader, seed: str = "0") -> dict[str, Any]:
    return dict(json.loads((reader.workdir / f"out{seed}" / "report.json").read_text()))


def test_show_has_a_verdict_and_a_composite_per_call_from_the_stored_judgement(
    reader: Reader,
) -> None:
    stored = report(reader)
    done = reader.piped("show", stored["run_id"])
    assert done.returncode == 0, done.stderr
    header = next(line for line in done.stdout.splitlines() if "conversation" in line)
    assert re.search(r"\bverdict\b.*\bcomposite\b", header)
    for entry in stored["conversations"]:
        row = next(line for line in done.stdout.splitlines() if f" {entry['id']} " in line)
        judged = entry["judgement"]
        assert f" {judged['verdict']} " in row
        assert f" {judged['composite']:.1f} " in row


def test_piped_output_is_full_width_whatever_columns_says(reader: Reader) -> None:
    stored = report(reader)
    done = reader.piped("show", stored["run_id"], columns=60)
    assert "…" not in done.stdout
    title = done.stdout.splitlines()[0]
    assert f"Run {stored['run_id']}: order-line with agent.py:OrderLineAgent (seed 0" in title
    for entry in stored["conversations"]:  # each id whole on its row, the table unfolded
        assert re.search(rf"│ {re.escape(entry['id'])} +│", done.stdout)
    assert max(len(line) for line in done.stdout.splitlines()) > 60


def test_a_narrow_terminal_gets_every_id_whole_within_its_width(reader: Reader) -> None:
    stored = report(reader)
    for args in (("runs",), ("show", stored["run_id"])):
        code, shown = reader.terminal(*args, columns=60)
        assert code == 0, shown
        lines = shown.splitlines()
        assert lines
        assert max(len(line) for line in lines) <= 60
        assert "…" not in shown
        assert any(stored["run_id"] in line for line in lines)
    whole_lines = {line.strip("• ").strip() for line in lines}
    assert {e["id"] for e in stored["conversations"]} <= whole_lines
    wide_code, wide = reader.terminal("show", stored["run_id"], columns=160)
    assert wide_code == 0
    assert "┃ conversation" in wide  # wide enough: the table itself


def test_runs_json_lists_each_run_with_its_report_header(reader: Reader) -> None:
    listed = reader.json("runs")["runs"]
    by_id = {run["run_id"]: run for run in listed}
    for seed in ("0", "1"):
        stored = report(reader, seed)
        run = by_id[stored["run_id"]]
        assert run["seed"] == int(seed)
        assert run["conversation_count"] == len(stored["conversations"])
        header = {k: v for k, v in stored.items() if k in run}
        assert header == {k: run[k] for k in header}


def test_show_json_gives_report_json_conversation_entries(reader: Reader) -> None:
    stored = report(reader)
    shown = reader.json("show", stored["run_id"])
    assert shown["run_id"] == stored["run_id"]
    assert shown["judgement_set"] == ""
    assert shown["judgement_sets"] == [""]
    assert shown["conversations"] == stored["conversations"]


def test_show_conversation_json_is_the_entry_and_the_whole_call(reader: Reader) -> None:
    stored = report(reader)
    entry = next(e for e in stored["conversations"] if e["id"] == "crm-timeout-then-retry")
    shown = reader.json("show", stored["run_id"], "-c", "crm-timeout-then-retry")
    lines = (reader.workdir / "out0" / "transcripts.jsonl").read_text().splitlines()
    transcript = next(json.loads(line) for line in lines if '"crm-timeout-then-retry"' in line)
    assert shown["conversation"] == transcript
    assert {k: shown[k] for k in entry} == entry
    assert shown["case"] is None  # not a three-layer case


def test_show_scenario_filters_by_glob_and_says_when_nothing_matches(reader: Reader) -> None:
    stored = report(reader)
    run_id = stored["run_id"]
    done = reader.piped("show", run_id, "--scenario", "crm-*", "-s", "wants-*")
    assert done.returncode == 0, done.stderr
    shown_ids = set(re.findall(r"^│ ([a-z-]+) +│", done.stdout, re.MULTILINE))
    assert shown_ids == {"crm-timeout-then-retry", "crm-down", "wants-a-person"}
    filtered = reader.json("show", run_id, "--scenario", "crm-*")
    assert [e["id"] for e in filtered["conversations"]] == ["crm-timeout-then-retry", "crm-down"]
    missing = reader.piped("show", run_id, "--scenario", "nothing-*")
    assert missing.returncode == 2
    assert "nothing-*" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_an_unknown_judgement_set_is_an_error_naming_the_sets(reader: Reader) -> None:
    done = reader.piped("show", report(reader)["run_id"], "--judgement-set", "nope")
    assert done.returncode == 2
    assert "nope" in done.stderr
    assert "''" in done.stderr
    assert done.stdout == ""


def test_gate_json_without_cases_exits_2_and_prints_no_document(reader: Reader) -> None:
    done = reader.piped("gate", report(reader)["run_id"], "--json")
    assert done.returncode == 2
    assert done.stdout == ""
    assert "no three-layer cases" in done.stderr


def test_gate_json_of_a_failing_three_layer_run_exits_1(tmp_path: Path) -> None:
    reader = Reader(tmp_path)
    ran = reader.piped("run", "three-layer", "--agent", "reference:flawed", "--out", "out")
    assert ran.returncode == 0, ran.stderr
    stored = json.loads((tmp_path / "out" / "report.json").read_text())
    done = reader.piped("gate", stored["run_id"], "--json")
    assert done.returncode == 1
    gate = json.loads(done.stdout)
    assert gate["run_id"] == stored["run_id"]
    assert gate["passed"] is False
    assert gate["checks"] == stored["release_gate"]["checks"]
    assert gate["not_exercised"] == stored["not_exercised"]


def test_compare_json_is_compare_json_and_the_bar_stays_off_stdout(reader: Reader) -> None:
    ids = [report(reader, seed)["run_id"] for seed in ("0", "1")]
    done = reader.piped("compare", *ids, "--out", "cmp", "--json")
    assert done.returncode == 0, done.stderr
    written = json.loads((reader.workdir / "cmp" / "compare.json").read_text())
    assert json.loads(done.stdout) == written
    assert "comparing" not in done.stdout + done.stderr  # not a terminal: no bar


def test_compare_shows_a_progress_bar_on_a_terminal_unless_quiet(reader: Reader) -> None:
    ids = [report(reader, seed)["run_id"] for seed in ("0", "1")]
    code, shown = reader.terminal("compare", *ids, columns=120)
    assert code == 0, shown
    assert re.search(r"comparing .*\d+/\d+", shown)
    assert "Scorecards" in shown
    code, quiet = reader.terminal("compare", *ids, "--quiet", columns=120)
    assert code == 0
    assert "comparing" not in quiet
    assert "Scorecards" in quiet


def test_probes_list_and_trend_json(reader: Reader) -> None:
    probes = reader.json("probes", "list")["probes"]
    assert probes
    assert {p["answered_by"] for p in probes} == {"deterministic"}
    probe = probes[0]
    assert set(probe) == {"id", "question", "polarity", "applies_when", "hash", "answered_by"}
    trend = reader.json("probes", "trend", probe["id"])
    assert trend["probe_id"] == probe["id"]
    assert trend["series"] == 1
    runs = [report(reader, seed)["run_id"] for seed in ("0", "1")]
    assert [p["run_id"] for p in trend["points"]] == runs  # oldest first
    stored = next(p for p in report(reader)["probes"] if p["id"] == probe["id"])
    first = trend["points"][0]
    assert {k: first[k] for k in ("yes", "no", "na", "compliance", "ci_low", "ci_high")} == {
        k: stored[k] for k in ("yes", "no", "na", "compliance", "ci_low", "ci_high")
    }
    unknown = reader.piped("probes", "trend", "no-such-probe", "--json")
    assert unknown.returncode == 1
    assert unknown.stdout == ""


def test_help_texts_name_no_spec_codes() -> None:
    codes = re.compile(r"\b(RUB|PROBE|READ|REL|GATE|CMP|AX)-\d")
    for args in (("show",), ("gate",), ("runs",), ("compare",), ("probes", "promote"),
                 ("probes", "trend"), ("probes", "list")):  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "polygon_voice", *args, "--help"],
            capture_output=True, text=True, timeout=60,
            env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert not codes.search(done.stdout), (args, done.stdout)


RESULTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "results.md"


def documented(command: str) -> list[str]:
    """The quoted key names in the paragraph of docs/results.md that documents `command`."""
    paragraphs = RESULTS_DOC.read_text().split("\n\n")
    text = next(p for p in paragraphs if p.startswith(f"`{command} --json`"))
    return re.findall(r'"([a-z_]+)"', text)


def test_the_documented_json_shapes_are_the_printed_ones(reader: Reader) -> None:
    probes = reader.json("probes", "list")
    assert documented("polygon probes list") == ["probes", *probes["probes"][0]]
    trend = reader.json("probes", "trend", probes["probes"][0]["id"])
    assert documented("polygon probes trend PROBE_ID") == [*trend, *trend["points"][0]]
    assert list(reader.json("runs")) == documented("polygon runs")
    header = report(reader)
    run = reader.json("runs")["runs"][0]
    assert list(run) == [*(k for k in header if k in run), "conversation_count"]


@pytest.mark.skipif(shutil.which("jq") is None, reason="the docs' pipelines need jq")
def test_the_docs_jq_pipelines_run(reader: Reader) -> None:
    stored = report(reader)
    ids = [stored["run_id"], report(reader, "1")["run_id"]]
    docs = RESULTS_DOC.parent
    lines = [
        line
        for name in ("results.md", "compare.md")
        for line in (docs / name).read_text().splitlines()
        if "--json | jq" in line
    ]
    assert len(lines) == 2
    for line in lines:
        command = line.replace("RUN_ID", ids[0]).replace("FLAWED_ID", ids[0])
        command = command.replace("ROBUST_ID", ids[1])
        polygon = f"{sys.executable} -m polygon_voice"
        command = command.replace("polygon ", f"{polygon} ", 1).replace(
            " --json", f" --json --db {reader.db}", 1
        )
        done = subprocess.run(
            command, shell=True, cwd=reader.workdir, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, (command, done.stderr)
        if "select" in command:  # the calls that did not pass, one id a line
            failing = [
                e["id"] for e in stored["conversations"] if e["judgement"]["verdict"] != "pass"
            ]
            assert done.stdout.split() == failing
        else:  # one object per scorecard
            cards = [json.loads(c) for c in re.findall(r"\{.*?\}", done.stdout, re.DOTALL)]
            assert [c["run_id"] for c in cards] == ids
            assert all(isinstance(c["mean"], float) for c in cards)
