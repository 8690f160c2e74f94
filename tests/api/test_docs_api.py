"""docs/api.md's examples run as written, in order, in an empty folder; and every public name
is documented there."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import polygon_voice
from tests.cli.conftest import ROOT

API_DOC = ROOT / "docs" / "api.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", API_DOC.read_text(), flags=re.DOTALL)


def test_the_examples_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("POLYGON_DB", raising=False)
    blocks = python_blocks()
    assert len(blocks) >= 6
    namespace: dict[str, object] = {"__name__": "docs_api_example"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for number, block in enumerate(blocks, 1):
            code = compile(block, f"docs/api.md example {number}", "exec")
            exec(code, namespace)  # the documentation's own code
    output = printed.getvalue()
    assert "no-such-suite.yaml" in output  # the error example printed its message
    assert "v2-check" in output
    assert (tmp_path / "results.db").exists()
    assert os.listdir(tmp_path / ".polygon" / "runs")  # the first example wrote its report


def test_every_public_name_is_documented() -> None:
    text = API_DOC.read_text()
    missing = [name for name in polygon_voice.__all__ if f"`{name}" not in text]
    assert missing == []


def test_the_cli_doc_run_commands_work_as_written(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "cli.md").read_text()
    block = text.split("## Running a suite", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("  #")[0].strip() for line in block.strip().splitlines()]
    assert len(commands) == 5
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    polygon = f"{shlex.quote(sys.executable)} -m polygon_voice"
    env = {**os.environ, "POLYGON_DB": str(tmp_path / "docs.db"), "COLUMNS": "200"}
    for command in commands:
        assert command.startswith("polygon ")
        result = subprocess.run(
            ["bash", "-c", polygon + command.removeprefix("polygon")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, (command, result.stderr)
    assert json.loads((tmp_path / "results.json").read_text())["exit_code"] == 0
