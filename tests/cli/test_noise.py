"""`polygon noise` and `polygon run --noise` end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from polygon_voice.cli import app
from polygon_voice.noise import distort, read_digits
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

SAID = "Мой код 5590, мне нужно пятьдесят коробок."


def noise(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["noise", *args])
    return result.exit_code, result.stdout, result.stderr


def test_noise_prints_what_the_agent_hears() -> None:
    code, out, _ = noise(SAID, "--lang", "ru", "--level", "0.7", "--seed", "4")
    assert code == 0
    assert out == distort(SAID, 0.7, "ru", 4).heard + "\n"


def test_noise_as_json_lists_every_edit() -> None:
    code, out, _ = noise(SAID, "--lang", "ru", "--level", "1", "--seed", "3", "--json")
    assert code == 0
    record = json.loads(out)
    assert set(record) == {"said", "heard", "edits", "wer"}
    assert record["said"] == SAID
    assert record["wer"] > 0
    kinds = {edit["kind"] for edit in record["edits"]}
    assert "filler" in kinds  # at level 1 every utterance starts with one
    assert kinds <= {"drop", "digits", "soundalike", "filler"}
    for edit in record["edits"]:
        assert set(edit) == {"kind", "position", "from", "to"}
        if edit["kind"] == "digits":
            assert read_digits(edit["to"], "ru") in ("5590", "50")


def test_noise_at_level_zero_prints_the_text_as_said() -> None:
    code, out, _ = noise("My code is 5590.", "--level", "0")
    assert (code, out) == (0, "My code is 5590.\n")


def test_noise_defaults_to_english_at_half_level_seed_zero() -> None:
    _, out, _ = noise("My code is 5590, I need fifty boxes.")
    assert out == distort("My code is 5590, I need fifty boxes.", 0.5, "en", 0).heard + "\n"


def test_noise_refuses_an_unsupported_language() -> None:
    code, _, err = noise("bonjour", "--lang", "fr")
    assert code == 2
    assert "does not support language 'fr'; supported: de, en, hr, ru" in err


def test_noise_refuses_a_level_above_one() -> None:
    code, _, err = noise("hello", "--level", "1.5")
    assert code == 2
    assert "--level" in err


def test_noise_without_the_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wordfreq", None)
    code, _, err = noise("hello", "--level", "0.5")
    assert code == 2
    assert "pip install 'polygon-voice[noise]'" in err


def test_noise_from_a_shell_prints_unicode_json(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "polygon_voice", "noise", SAID, "--lang", "ru", "--json"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        cwd=tmp_path,
        timeout=120,
        check=True,
    )
    assert json.loads(done.stdout) == distort(SAID, 0.5, "ru", 0).model_dump()
    assert "пятьдесят" in done.stdout  # not \\u-escaped


def run_report(polygon: Polygon, *args: str) -> dict[str, Any]:
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--out", "report", *args)
    assert code == 0, err
    report: dict[str, Any] = json.loads((polygon.workdir / "report" / "report.json").read_text())
    return report


def transcripts(polygon: Polygon) -> list[dict[str, Any]]:
    lines = (polygon.workdir / "report" / "transcripts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def caller_turns(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in conversation["turns"] if t["speaker"] == "caller"]


def test_run_with_noise_keeps_said_and_heard_and_reports_the_rate(polygon: Polygon) -> None:
    report = run_report(polygon, "--noise", "1", "--seed", "2")
    assert report["noise"] == 1.0
    rates = {c["id"]: c["wer"] for c in report["conversations"]}
    assert rates["silent-caller"] is None  # no caller turn
    assert all(rate > 0 for cid, rate in rates.items() if cid != "silent-caller")
    for conversation in transcripts(polygon):
        for turn in caller_turns(conversation):
            assert turn["heard"] != turn["text"]  # level 1: always a filler at least


def test_run_without_noise_hears_everything_as_said(polygon: Polygon) -> None:
    report = run_report(polygon)
    assert report["noise"] is None
    assert {c["wer"] for c in report["conversations"]} == {0.0, None}
    for conversation in transcripts(polygon):
        assert all(t["heard"] == t["text"] for t in caller_turns(conversation))


def test_show_prints_the_word_error_rate(polygon: Polygon) -> None:
    report = run_report(polygon, "--noise", "0.8")
    run_id = report["run_id"]
    code, out, _ = polygon("show", run_id, "--conversation", "change-quantity")
    assert code == 0
    rate = next(c["wer"] for c in report["conversations"] if c["id"] == "change-quantity")
    assert f"word error rate, caller said vs agent heard: {rate:.3f}" in out
    assert "agent heard:" in out


def test_a_noisy_run_replays_byte_for_byte(polygon: Polygon, tmp_path: Path) -> None:
    first = polygon.subprocess("run", str(EXAMPLE_SUITE), "--noise", "0.6", "--out", "one")
    second = polygon.subprocess(
        "run", str(EXAMPLE_SUITE), "--noise", "0.6", "--out", "two", env={"PYTHONHASHSEED": "9"}
    )
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    one = (tmp_path / "one" / "transcripts.jsonl").read_bytes()
    assert one == (tmp_path / "two" / "transcripts.jsonl").read_bytes()
    assert b'"heard"' in one


def test_run_refuses_noise_in_a_language_without_word_lists(
    polygon: Polygon, tmp_path: Path
) -> None:
    suite = tmp_path / "french.yaml"
    text = EXAMPLE_SUITE.read_text().replace("language: en", "language: fr")
    suite.write_text(text)
    (tmp_path / "agent.py").write_text((EXAMPLE_SUITE.parent / "agent.py").read_text())
    code, _, err = polygon("run", str(suite), "--noise", "0.3")
    assert code == 2
    assert "scenario 'change-quantity'" in err
    assert "supported: de, en, hr, ru" in err
    code, out, _ = polygon("runs")
    assert "order-line" not in out  # refused before any run was stored
    assert polygon("run", str(suite), "--out", "ok")[0] == 0  # no noise: any language


def test_resume_keeps_the_noise_level_of_the_run(polygon: Polygon) -> None:
    report = run_report(polygon, "--noise", "0.4")
    run_id = report["run_id"]
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--resume", run_id, "--noise", "0.9")
    assert code == 2
    assert "started with --noise 0.4" in err
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--resume", run_id, "--out", "again")
    assert code == 0, err
    again = json.loads((polygon.workdir / "again" / "report.json").read_text())
    assert again["noise"] == 0.4
