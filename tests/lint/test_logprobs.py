"""Tier 2 from an endpoint's prompt log-probabilities, against the fake LLM server."""

from __future__ import annotations

import pytest

from polygon_voice.lint import LintError, lint
from polygon_voice.testing import FakeLLMServer, Rule

TEXT = "Log the widget in the flux capacitor ledger. Ask for the order number."


def env(server: FakeLLMServer) -> dict[str, str]:
    return {
        "POLYGON_LINT_LOGPROBS_BASE_URL": server.base_url,
        "POLYGON_LINT_LOGPROBS_MODEL": "tiny",
        "POLYGON_LINT_LOGPROBS_API_KEY": "sk-test",
    }


def test_surprisal_comes_from_the_endpoints_token_logprobs() -> None:
    # "capacitor" costs 12 nats (17 bits), every other token 0.5 nats (0.7 bits).
    rule = Rule(logprobs={"capacitor": -12.0, "*": -0.5})
    with FakeLLMServer([rule], api_key="sk-test") as server:
        report = lint(TEXT, max_tier=2, env=env(server))
        sent = server.requests[0]
    assert report.tiers_run == [1, 2]
    found = report.axes["ambiguity"].findings
    assert [(f.kind, TEXT[f.start : f.end]) for f in found] == [("surprising-word", "capacitor")]
    assert "17 bits under tiny" in found[0].message
    assert sent.path.endswith("/v1/completions")
    assert {k: sent.body[k] for k in ("echo", "logprobs", "max_tokens", "model")} == {
        "echo": True,
        "logprobs": 1,
        "max_tokens": 0,
        "model": "tiny",
    }


def test_a_sentence_of_costly_words_is_unusual_phrasing() -> None:
    with FakeLLMServer([Rule(logprobs={"*": -7.0})]) as server:  # 10 bits a word
        report = lint(TEXT, max_tier=2, env=env(server))
    kinds = [f.kind for f in report.axes["ambiguity"].findings]
    assert kinds == ["unusual-phrasing", "unusual-phrasing"]


def test_a_failing_endpoint_skips_tier_two_and_says_why() -> None:
    with FakeLLMServer([Rule(error=500)]) as server:
        report = lint(TEXT, max_tier=2, env=env(server))
    assert report.tiers_run == [1]
    assert "logprobs endpoint failed" in report.tiers_skipped[0].reason
    assert "sk-test" not in report.tiers_skipped[0].reason


def test_half_a_configuration_is_an_error() -> None:
    with pytest.raises(LintError, match="POLYGON_LINT_LOGPROBS_MODEL"):
        lint(TEXT, env={"POLYGON_LINT_LOGPROBS_BASE_URL": "http://127.0.0.1:9/v1"})
