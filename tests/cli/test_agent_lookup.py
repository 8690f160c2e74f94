"""`--agent` finds the user's code where the user put it: the `polygon` command as installed,
run from the user's folder (not `python -m`, which would put that folder on the path itself)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import ROOT

POLYGON = Path(sys.executable).parent / "polygon"

# A robust agent written by the user: the reference one under the user's own names.
ROBUST = (
    "from polygon_voice.agents.reference import RobustAgent\n\n\n"
    "class Agent(RobustAgent):\n"
    '    """Our phone agent."""\n'
)
ECHO_SUITE = (
    "name: echo\nagent: echo.py:EchoAgent\nscenarios:\n  - {id: one, script: [{say: Hi}]}\n"
)


def polygon(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed `polygon` command, run in `folder` with its own database there."""
    if not POLYGON.exists():
        pytest.skip("the polygon command is not installed beside this Python")
    env = {**os.environ, "COLUMNS": "200", "POLYGON_DB": str(folder / "polygon.db")}
    env.pop("PYTHONPATH", None)  # only what a user's shell would have
    return subprocess.run(
        [str(POLYGON), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=180
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def echo_agent(says: str) -> str:
    return (
        "from polygon_voice.model import CallStarted, EndCall, Say\n\n\n"
        "class EchoAgent:\n"
        "    async def respond(self, event):\n"
        "        if isinstance(event, CallStarted):\n"
        f"            yield Say(text={says!r})\n"
        "            yield EndCall()\n"
    )


def first_agent_turn(out: Path) -> str:
    call = json.loads((out / "transcripts.jsonl").read_text().splitlines()[0])
    return str(call["turns"][0]["text"])


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_readme_commands_for_plugging_in_an_agent_run_verbatim(tmp_path: Path) -> None:
    section = readme_section("Plugging in your agent")
    code = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    commands = re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert code is not None
    assert commands is not None
    write(tmp_path / "echo.py", code.group(1))
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "bot.py", ROBUST)
    lines = [line.split("#")[0].strip() for line in commands.group(1).strip().splitlines()]
    assert "polygon run three-layer --agent mypkg.bot:Agent --gate" in lines
    for line in lines:
        result = polygon(tmp_path, *shlex.split(line)[1:])
        assert result.returncode == 0, f"{line}\n{result.stdout}\n{result.stderr}"
        assert "Traceback" not in result.stderr  # with --gate, 0 means the gate passed


def test_a_file_agent_with_a_built_in_suite_is_taken_from_the_current_folder(
    tmp_path: Path,
) -> None:
    write(tmp_path / "bots" / "tuning.py", "NAME = 'from the sibling module'\n")
    write(
        tmp_path / "bots" / "bot.py",
        ROBUST.replace("class Agent", "import tuning\n\n\nclass Agent")
        + "    label = tuning.NAME\n",
    )
    result = polygon(tmp_path, "run", "three-layer", "--agent", "bots/bot.py:Agent", "--gate")
    assert result.returncode == 0, result.stderr  # loaded, sibling and all, and the gate passed


def test_a_file_agent_is_looked_for_here_first_then_beside_the_suite(tmp_path: Path) -> None:
    write(tmp_path / "suites" / "echo.yaml", ECHO_SUITE)
    write(tmp_path / "suites" / "echo.py", echo_agent("beside the suite"))
    result = polygon(tmp_path, "run", "suites/echo.yaml", "--out", "first")
    assert result.returncode == 0, result.stderr
    assert first_agent_turn(tmp_path / "first") == "beside the suite"

    write(tmp_path / "echo.py", echo_agent("in the current folder"))
    result = polygon(
        tmp_path, "run", "suites/echo.yaml", "--agent", "echo.py:EchoAgent", "--out", "second"
    )
    assert result.returncode == 0, result.stderr
    assert first_agent_turn(tmp_path / "second") == "in the current folder"


def test_a_missing_file_agent_lists_the_places_looked_and_exits_2(tmp_path: Path) -> None:
    write(tmp_path / "suites" / "echo.yaml", ECHO_SUITE)
    result = polygon(tmp_path, "run", "suites/echo.yaml", "--agent", "nowhere.py:Agent")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())  # the terminal may wrap the line
    assert f"the current folder: {tmp_path / 'nowhere.py'}" in message
    assert f"the suite's folder: {tmp_path / 'suites' / 'nowhere.py'}" in message
    assert "Traceback" not in result.stderr


def test_a_misspelt_class_gets_did_you_mean_and_exits_2(tmp_path: Path) -> None:
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "bot.py", ROBUST)
    result = polygon(tmp_path, "run", "three-layer", "--agent", "mypkg/bot.py:Agnet")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "mypkg/bot.py has no 'Agnet'; did you mean 'Agent'?" in message
    assert "_polygon_agent_" not in message
    assert "Traceback" not in result.stderr


def test_a_syntax_error_in_the_agent_shows_file_and_line_and_exits_2(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "class Agent:\n\n    def respond(self, event:\n        return []\n")
    result = polygon(tmp_path, "run", "three-layer", "--agent", "bot.py:Agent")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "importing bot.py failed: bot.py:3: SyntaxError:" in message
    assert "def respond(self, event:" in message
    assert "Traceback" not in result.stderr
