"""`polygon run`'s progress bar: model requests in flight for every role, the agent's too, and
how long the oldest has been waiting once a slow server keeps it."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from polygon_voice.api.events import RequestCounts
from polygon_voice.cli.run_view import _LiveStatus
from polygon_voice.testing import FakeLLMServer, Rule
from tests.agents.test_prompt_agent import write_agent
from tests.cli.conftest import Polygon

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")


def status_with(counts: RequestCounts) -> str:
    status = _LiveStatus()
    status.activity = lambda: counts
    return f"{status}"


def test_the_oldest_requests_wait_is_shown_once_it_is_long() -> None:
    assert status_with(RequestCounts(1, 3, 0, 0, 84.4)) == "model: 1 in flight (84 s), 3 sent"
    assert status_with(RequestCounts(2, 5, 1, 0, 1.2)) == "model: 2 in flight, 5 sent, 1 retried"
    assert status_with(RequestCounts(0, 5, 0, 0, None)) == "model: 0 in flight, 5 sent"
    waiting = RequestCounts(1, 4, 0, 0, 120.0, waiting=3)
    assert status_with(waiting) == "model: 1 in flight (120 s), 3 waiting, 4 sent"
    assert status_with(RequestCounts()) == ""  # nothing sent yet: nothing said


def test_the_prompt_agents_requests_show_while_a_run_waits_for_them(
    polygon: Polygon, tmp_path: Path
) -> None:
    (polygon.workdir / "suite.yaml").write_text(
        "name: slow\nscenarios:\n  - {id: hello, script: [{say: hi}]}\n"
    )
    with FakeLLMServer([Rule(role="agent", text="Hello.", latency=1.5)]) as server:
        agent = write_agent(tmp_path, server.base_url)
        command = [sys.executable, "-m", "polygon_voice", "run", "suite.yaml"]
        command += ["--agent", f"prompt:{agent}", "--db", str(polygon.db)]
        env = {**os.environ, "TERM": "xterm", "COLUMNS": "200"}
        screen = on_a_terminal(command, polygon.workdir, env)
    assert "model: 1 in flight, 1 sent" in screen


def on_a_terminal(command: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What `command` writes to a pseudo-terminal, without colours and cursor moves."""
    main, child = pty.openpty()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=child, stderr=child)
    os.close(child)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 0.1)
        if ready:
            try:
                data = os.read(main, 65536)
            except OSError:  # the child side closed: all is read
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=10)
    os.close(main)
    return ANSI.sub("", b"".join(chunks).decode("utf-8", "replace"))
