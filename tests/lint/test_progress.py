"""Tiers 3-4 report their slow steps: a progress bar on a terminal, nothing when piped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.lint import engine, lint
from polygon_voice.llm import load_llm_config
from polygon_voice.testing import FakeLLMServer, Rule
from tests.lint.test_axes import BAD, ROOT

BAD_FILE = ROOT / "examples" / "prompts" / "bad_prompt.md"
NO_FINDINGS: dict[str, Any] = {"findings": []}
# Hides the `embeddings` extra from the process (find_spec answers None), so tier 3 is
# skipped as on an install without it and the test needs no model.
HIDE_EMBEDDINGS = 'import sys\nsys.modules["sentence_transformers"] = None\n'
Steps = list[tuple[str, int, int]]


def _recorder() -> tuple[Steps, Any]:
    steps: Steps = []

    def on_step(description: str, done: int, total: int) -> None:
        steps.append((description, done, total))

    return steps, on_step


def _judge_env(server: FakeLLMServer) -> dict[str, str]:
    return {"POLYGON_BASE_URL": server.base_url, "POLYGON_JUDGE_MODEL": "fake"}


class _FakeModel:
    """Stands in for the sentence model: one unit vector per sentence, all different."""

    def encode(self, sentences: list[str], **_options: Any) -> Any:
        import numpy as np

        vectors = np.eye(max(len(sentences), 384), 384, dtype=np.float32)
        return vectors[: len(sentences)]


def test_tiers_1_and_2_report_no_steps() -> None:
    steps, on_step = _recorder()
    lint(BAD, max_tier=2, on_step=on_step)
    assert steps == []


def test_tiers_3_and_4_report_each_step_then_done(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("numpy")
    from polygon_voice.lint import embeddings

    monkeypatch.chdir(tmp_path)  # the judge's response cache stays in the test's folder
    monkeypatch.setattr(engine, "_embeddings_unavailable", lambda: None)
    monkeypatch.setattr(embeddings, "_model", _FakeModel)
    steps, on_step = _recorder()
    with FakeLLMServer([Rule(role="judge", json=NO_FINDINGS)]) as server:
        settings = load_llm_config(env=_judge_env(server))
        report = lint(BAD, settings=settings, on_step=on_step)
    assert report.tiers_run == [1, 2, 3, 4] or report.tiers_run == [1, 3, 4]
    assert steps == [
        ("tier 3: loading the embedding model", 0, 3),
        ("tier 3: embedding the sentences", 1, 3),
        ("tier 4: asking the judge model", 2, 3),
        ("done", 3, 3),
    ]


def _lint_in_subprocess(tmp_path: Path, server: FakeLLMServer, *args: str, terminal: bool) -> str:
    """`polygon lint` with stderr on a pseudo-terminal (or a pipe); what stderr showed."""
    (tmp_path / "sitecustomize.py").write_text(HIDE_EMBEDDINGS)
    env = {
        **os.environ,
        **_judge_env(server),
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
    }
    for name in ("NO_COLOR", "CI", "TERM_PROGRAM"):
        env.pop(name, None)
    command = [sys.executable, "-m", "polygon_voice", "lint", str(BAD_FILE), "--json", *args]
    if not terminal:
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stderr
    leader, follower = os.openpty()
    with subprocess.Popen(
        command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=follower
    ) as process:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=120) == 0
    os.close(leader)
    return shown.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_judge_tier_shows_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    # The judge answers after a moment, so the bar is drawn while it waits.
    rule = Rule(role="judge", json=NO_FINDINGS, latency=0.8)
    with FakeLLMServer([rule]) as server:
        shown = _lint_in_subprocess(tmp_path, server, terminal=True)
    assert "tier 4: asking the judge model" in shown
    assert "0/1" in shown


def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    rule = Rule(role="judge", json=NO_FINDINGS, latency=0.3)
    with FakeLLMServer([rule]) as server:
        shown = _lint_in_subprocess(tmp_path, server, terminal=False)
    assert "tier 4" not in shown
    assert "asking the judge" not in shown


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_tiers_1_and_2_draw_nothing_on_a_terminal(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(role="judge", json=NO_FINDINGS)]) as server:
        shown = _lint_in_subprocess(tmp_path, server, "--max-tier", "2", terminal=True)
    assert "tier" not in shown
    assert "\x1b[?25l" not in shown  # a live display would hide the cursor first
