"""`polygon lint` end to end, and tier 4 against the fake LLM server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polygon_voice.cli import app
from polygon_voice.testing import FakeLLMServer, Rule
from tests.lint.test_axes import BAD, ROOT

BAD_FILE = ROOT / "examples" / "prompts" / "bad_prompt.md"


def polygon(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["lint", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def no_judge(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "POLYGON_JUDGE_MODEL",
        "POLYGON_BASE_URL",
        "POLYGON_JUDGE_BASE_URL",
        "POLYGON_LINT_LOGPROBS_BASE_URL",
        "POLYGON_LINT_LOGPROBS_MODEL",
        "POLYGON_LINT_TIMEOUT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # the judge's response cache stays in the test's folder


def test_json_has_the_documented_shape() -> None:
    code, out, _ = polygon(str(BAD_FILE), "--max-tier", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data["axes"]) == {
        "overload",
        "diluted_attention",
        "contradiction",
        "ambiguity",
        "redundancy",
    }
    finding = data["axes"]["contradiction"]["findings"][0]
    assert {"start", "end", "line", "tier", "message"} <= set(finding)
    assert data["tiers_run"] == [1, 2]


def test_fail_above_sets_the_exit_code_for_ci() -> None:
    assert polygon(str(BAD_FILE), "--max-tier", "1", "--fail-above", "0.5")[0] == 1
    good = str(ROOT / "examples" / "order_line" / "prompt.md")
    assert polygon(good, "--fail-above", "0.1")[0] == 0


def test_prompt_text_is_printed_as_text_not_markup(tmp_path: Path) -> None:
    path = tmp_path / "p.md"
    path.write_text("[bold red]Always[/] respond appropriately.\n", encoding="utf-8")
    code, out, _ = polygon(str(path), "--max-tier", "1")
    assert code == 0
    assert "[bold red]Always[/] respond appropriately." in out
    assert "tier 2 (surprisal) skipped: --max-tier 1" in out


def test_a_missing_file_is_a_plain_error() -> None:
    code, _, err = polygon("no/such/prompt.md")
    assert code == 2
    assert "cannot read" in err


def test_the_judge_tier_reads_structured_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    quote = "use your judgment about\nthe amount"
    answer = {
        "findings": [
            {"axis": "ambiguity", "quote": quote, "message": "No limit on the discount."},
            {"axis": "overload", "quote": "not in the prompt", "message": "misquoted"},
        ]
    }
    with FakeLLMServer([Rule(role="judge", json=answer)]) as server:
        monkeypatch.setenv("POLYGON_BASE_URL", server.base_url)
        monkeypatch.setenv("POLYGON_JUDGE_MODEL", "fake")
        code, out, _ = polygon(str(BAD_FILE), "--json")
        sent = server.requests[0].body
    assert code == 0
    data = json.loads(out)
    # Tier 3 runs too where the `embeddings` extra is installed (as in CI).
    assert [t for t in data["tiers_run"] if t != 3] == [1, 2, 4]
    judged = [f for f in data["axes"]["ambiguity"]["findings"] if f["tier"] == 4]
    assert [BAD[f["start"] : f["end"]] for f in judged] == [quote]
    assert not [f for f in data["axes"]["overload"]["findings"] if f["tier"] == 4]
    assert sent["response_format"]["type"] == "json_schema"
    assert "CANDIDATES" in sent["messages"][-1]["content"]  # tiers 1-2 handed to the judge


def _lint_process(
    path: Path, server: FakeLLMServer, *args: str
) -> subprocess.CompletedProcess[str]:
    # In the test's own folder (the autouse fixture's), never beside a shipped example.
    config = Path.cwd() / "llm.yaml"
    config.write_text(f"llm:\n  judge: {{model: fake, base_url: '{server.base_url}', "
                      "max_retries: 0}\n", encoding="utf-8")  # fmt: skip
    environ = {k: v for k, v in os.environ.items() if not k.startswith("POLYGON_")}
    command = [sys.executable, "-m", "polygon_voice", "lint", str(path), "--llm-config",
               str(config), *args]  # fmt: skip
    # A hang fails here with TimeoutExpired, not by blocking CI.
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)


def test_a_failing_judge_keeps_the_other_tiers_and_says_why(tmp_path: Path) -> None:
    with FakeLLMServer([Rule(role="judge", error=500)]) as server:
        done = _lint_process(BAD_FILE, server, "--json")
        asked = server.request_count
    assert done.returncode == 0, done.stderr  # the scores of tiers 1-3 stand
    assert asked == 1
    data = json.loads(done.stdout)
    assert data["tiers_run"][:2] == [1, 2]
    assert data["axes"]["contradiction"]["findings"]  # tier 1's findings are kept
    skipped = {s["tier"]: s["reason"] for s in data["tiers_skipped"]}
    assert skipped[4].startswith("judge model failed:")
    assert "500" in skipped[4]
    assert "warning: tier 4 skipped: judge model failed" in done.stderr


def test_a_failing_judge_is_shown_in_the_text_output(tmp_path: Path) -> None:
    config = tmp_path / "llm.yaml"
    with FakeLLMServer([Rule(role="judge", error=500)]) as server:
        config.write_text(f"llm:\n  judge: {{model: fake, base_url: '{server.base_url}', "
                          "max_retries: 0}\n", encoding="utf-8")  # fmt: skip
        code, out, err = polygon(str(BAD_FILE), "--llm-config", str(config))
    assert code == 0, err
    assert "tier 4 (judge) skipped: judge model failed" in out
    assert "contradiction" in out


def test_a_judge_past_the_lint_timeout_is_abandoned(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer([Rule(role="judge", hang=30)]) as server:
        monkeypatch.setenv("POLYGON_BASE_URL", server.base_url)
        monkeypatch.setenv("POLYGON_JUDGE_MODEL", "fake")
        monkeypatch.setenv("POLYGON_LINT_TIMEOUT", "0.5")
        began = time.monotonic()
        code, out, err = polygon(str(BAD_FILE), "--json")
        took = time.monotonic() - began
        in_flight = server.stats()["in_flight"]
    assert code == 0
    assert took < 10
    assert in_flight <= 1  # one abandoned request, no retries piled on behind it
    reason = {s["tier"]: s["reason"] for s in json.loads(out)["tiers_skipped"]}[4]
    assert "no answer within 0.5 s (POLYGON_LINT_TIMEOUT)" in reason
    assert "warning: tier 4 skipped" in err


def test_tier_4_asks_a_llama_cpp_server_in_the_form_it_takes(tmp_path: Path) -> None:
    # As before a run: the capability probe (or its cache) settles the form, so tier 4's one
    # request is not first refused as json_schema (with the server's error on the screen).
    with FakeLLMServer([Rule(role="judge", json={"findings": []})], dialect="llamacpp") as server:
        done = _lint_process(BAD_FILE, server, "--json")
        forms = [r.body.get("response_format", {}).get("type") for r in server.requests]
        probed = len(server.probes)
    assert done.returncode == 0, done.stderr
    assert forms == ["json_object"]
    assert probed >= 1
    assert "refused structured output" not in done.stderr
    assert 4 in json.loads(done.stdout)["tiers_run"]
