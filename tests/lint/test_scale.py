"""Lint scales: the same findings as before on the shipped prompts, linear time, a size limit."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from bench.lint import main as bench_main
from bench.lint import synthetic_prompt
from typer.testing import CliRunner

from polygon_voice.cli import app
from polygon_voice.lint import LintError, lint
from tests.lint.test_axes import ROOT

GOLDEN = Path(__file__).parent / "golden"
# What the rules give on the shipped prompts: first written by the all-pairs rules before the
# pair search was pruned (the same findings), rewritten when a rule changes on purpose.
SHIPPED = {
    "bad_prompt": ROOT / "examples" / "prompts" / "bad_prompt.md",
    "prompt_agent": ROOT / "examples" / "prompt_agent" / "prompt.md",
}


@pytest.mark.parametrize("tier", [1, 2])
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_the_shipped_prompts_give_what_they_gave_before(name: str, tier: int) -> None:
    if tier == 2:
        pytest.importorskip("wordfreq")
    before = json.loads((GOLDEN / f"{name}.tier{tier}.json").read_text(encoding="utf-8"))
    text = SHIPPED[name].read_text(encoding="utf-8")
    assert lint(text, max_tier=tier, env={}).to_json() == before


def test_a_long_prompt_lints_in_linear_time() -> None:
    # 100 KB: the all-pairs rules took over 3 minutes on this (quadratic in sentences); the
    # pruned ones a few seconds. The bound is loose for a slow CI machine, and on CPU time:
    # on a busy machine the wall time is mostly waiting for a core.
    text = synthetic_prompt(100_000, seed=3)
    started = time.process_time()
    report = lint(text, max_tier=1, env={})
    assert time.process_time() - started < 10.0
    # The restatements and flips the generator puts in are found.
    assert report.axes["redundancy"].findings
    assert report.axes["contradiction"].findings


def test_a_prompt_over_the_size_limit_is_refused_with_its_size() -> None:
    text = "Ask for the order number. " * 40  # 1,040 bytes
    with pytest.raises(LintError, match=r"1,040 bytes, over the limit of 1,000 bytes"):
        lint(text, max_bytes=1000, max_tier=1)
    assert lint(text, max_bytes=None, max_tier=1).tiers_run == [1]
    # Bytes, not characters: 400 Cyrillic letters are 800 bytes.
    with pytest.raises(LintError, match="800 bytes"):
        lint("Я" * 400, max_bytes=799, max_tier=1)


def test_the_cli_refuses_a_big_file_in_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "huge.md"
    path.write_text("Ask for the order number. " * 100, encoding="utf-8")  # 2,600 bytes
    result = CliRunner().invoke(app, ["lint", str(path), "--max-bytes", "2000"])
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "huge.md" in message
    assert "2,600 bytes, over the limit of 2,000 bytes (raise it with --max-bytes)" in message
    assert "Traceback" not in result.stderr
    ok = CliRunner().invoke(app, ["lint", str(path), "--max-bytes", "0", "--max-tier", "1"])
    assert ok.exit_code == 0


def test_the_default_limit_is_above_a_megabyte(tmp_path: Path) -> None:
    from polygon_voice.lint.engine import MAX_PROMPT_BYTES

    assert MAX_PROMPT_BYTES > 1_000_000
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * (MAX_PROMPT_BYTES + 1))
    result = CliRunner().invoke(app, ["lint", str(path)])
    assert result.exit_code == 2
    assert f"{MAX_PROMPT_BYTES:,} bytes" in " ".join(result.stderr.split())


def test_the_benchmark_prints_sizes_seconds_and_the_ratio(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "lint.json"
    assert bench_main(["--sizes", "2000,4000", "--max-tier", "1", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "size x2.0 -> time x" in printed
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert [r["size_bytes"] >= s for r, s in zip(rows, (2000, 4000), strict=True)] == [True, True]
    assert all(r["seconds"] > 0 and r["sentences"] > 10 for r in rows)


def test_the_judge_is_sent_at_most_its_share_of_candidates(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import asyncio

    from polygon_voice.lint.judge import MAX_CANDIDATES, judge
    from polygon_voice.lint.text import Prompt
    from polygon_voice.llm import load_llm_config
    from polygon_voice.testing import FakeLLMServer, Rule

    monkeypatch.chdir(tmp_path)  # the judge's response cache stays in the test's folder
    prompt = Prompt("Respond appropriately to the caller.\n" * 300)
    candidates = [
        prompt.finding(
            "ambiguity", s.start, s.end, tier=1, kind="vague-wording", weight=0.1, message="vague"
        )
        for s in prompt.sentences
    ]
    # One weightier candidate late in the prompt is kept although it is past the first 200.
    candidates[-1] = candidates[-1].model_copy(update={"weight": 0.5, "message": "heavy"})
    with FakeLLMServer([Rule(role="judge", json={"findings": []})]) as server:
        env = {"POLYGON_BASE_URL": server.base_url, "POLYGON_JUDGE_MODEL": "fake"}
        asyncio.run(judge(prompt, candidates, load_llm_config(env=env)))
        sent = server.requests[0].body["messages"][-1]["content"]
    listed = json.loads(sent.split("CANDIDATES:\n", 1)[1])
    assert len(listed) == MAX_CANDIDATES == 200
    assert listed[-1]["why"] == "heavy"
    assert [c["line"] for c in listed] == sorted(c["line"] for c in listed)


def test_embeddings_are_skipped_with_the_reason_above_their_size() -> None:
    from polygon_voice.lint.engine import MAX_EMBEDDED_BYTES, _embeddings_unavailable, lint

    text = "Always greet the caller politely and ask for the order number. " * (
        MAX_EMBEDDED_BYTES // 60 + 10
    )
    report = lint(text, max_tier=3, language="en")
    skipped = {s.tier: s.reason for s in report.tiers_skipped}
    assert 3 in skipped
    if _embeddings_unavailable() is None:  # with the extra, the size is the reason
        assert "embeddings run up to 300,000" in skipped[3]
