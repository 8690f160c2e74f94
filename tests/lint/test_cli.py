"""`polygon lint` end to end, and tier 4 against the fake LLM server."""

from __future__ import annotations

import json
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
