"""The code shown in the README runs as shown."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.conftest import ROOT, Polygon


def readme_block(containing: str) -> str:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    return next(block for block in blocks if containing in block)


def test_the_readme_agent_runs(polygon: Polygon) -> None:
    (polygon.workdir / "echo.py").write_text(readme_block("class EchoAgent"))
    suite = polygon.workdir / "suite.yaml"
    suite.write_text("name: echo\nscenarios:\n  - {id: one, script: [{say: Where is my order}]}\n")
    code, _, err = polygon("run", str(suite), "--agent", "echo.py:EchoAgent", "--out", "out")
    assert code == 0, err
    line = (polygon.workdir / "out" / "transcripts.jsonl").read_text().splitlines()[0]
    call = json.loads(line)
    assert [t["text"] for t in call["turns"]] == [
        "Hello, how can I help?",
        "Where is my order",
        "You said: Where is my order. Goodbye!",
    ]
    assert call["end"]["reason"] == "agent_hangup"


def test_the_readme_quick_start_is_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in quick.strip().splitlines()]
    assert commands == ["python3 dev.py demo", "python3 dev.py test"]
    assert Path(ROOT / "dev.py").exists()
