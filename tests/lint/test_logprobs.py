"""Tier 2 from an endpoint's prompt log-probabilities, against the fake LLM server."""

from __future__ import annotations

import time

import pytest

from polygon_voice.lint import LintError, lint
from polygon_voice.lint.logprobs import CHECK_WORD, LogprobsEndpoint, _echo, _spans, surprisal
from polygon_voice.lint.text import Prompt
from polygon_voice.testing import FakeLLMServer, Rule
from polygon_voice.testing.dialects import Dialect
from tests.lint.test_axes import ROOT

TEXT = "Log the widget in the flux capacitor ledger. Ask for the order number."
GOOD = (ROOT / "examples" / "order_line" / "prompt.md").read_text(encoding="utf-8")
# Any model that reads the prompt finds the check sentence's nonsense word costly.
CHECK = {CHECK_WORD: -20.0}


def env(server: FakeLLMServer, **extra: str) -> dict[str, str]:
    return {
        "POLYGON_LINT_LOGPROBS_BASE_URL": server.base_url,
        "POLYGON_LINT_LOGPROBS_MODEL": "tiny",
        "POLYGON_LINT_LOGPROBS_API_KEY": "sk-test",
        **extra,
    }


def test_surprisal_comes_from_the_endpoints_token_logprobs() -> None:
    # "capacitor" costs 12 nats (17 bits), every other token 0.5 nats (0.7 bits).
    rule = Rule(logprobs={**CHECK, "capacitor": -12.0, "*": -0.5})
    with FakeLLMServer([rule], api_key="sk-test") as server:
        report = lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
        check, sent = server.requests
    assert report.tiers_run == [1, 2]
    found = report.axes["ambiguity"].findings
    assert [(f.kind, TEXT[f.start : f.end]) for f in found] == [("surprising-word", "capacitor")]
    assert "17 bits under tiny" in found[0].message
    assert CHECK_WORD in check.body["prompt"]
    assert sent.path.endswith("/v1/completions")
    assert {k: sent.body[k] for k in ("echo", "logprobs", "max_tokens", "model")} == {
        "echo": True,
        "logprobs": 1,
        "max_tokens": 1,  # 0 is "no limit" to llama.cpp's server
        "model": "tiny",
    }


def test_the_alignment_check_runs_once_per_endpoint_and_model() -> None:
    with FakeLLMServer([Rule(logprobs={**CHECK, "*": -0.5})]) as server:
        lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
        lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
        prompts = [r.body["prompt"] for r in server.requests]
    assert [CHECK_WORD in p for p in prompts] == [True, False, False]


def test_logprobs_shifted_by_one_token_are_realigned() -> None:
    # Every "." costs 20 nats: no finding while it stays on the punctuation, a surprising word
    # after each sentence when the server reports it one token late.
    rule = Rule(logprobs={**CHECK, ".": -20.0, "*": -0.5}, logprobs_shift=1)
    with FakeLLMServer([rule]) as server:
        report = lint(GOOD, max_tier=2, env=env(server), min_confidence=0)
        raw = _echo(LogprobsEndpoint(server.base_url, "tiny"), GOOD)
    assert report.tiers_run == [1, 2]
    assert report.axes["ambiguity"].findings == []  # clean, as docs/lint.md says
    # Taken as sent, the same answer marks words: the realignment is what keeps it clean.
    assert surprisal(Prompt(GOOD), _spans(raw, GOOD), "tiny")


def test_a_misalignment_past_one_token_refuses_the_tier_with_the_reason() -> None:
    rule = Rule(logprobs={**CHECK, "*": -0.5}, logprobs_shift=2)
    with FakeLLMServer([rule]) as server:
        report = lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
        lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
        count = server.request_count
    assert report.tiers_run == [1]
    assert "do not line up with the prompt" in report.tiers_skipped[0].reason
    # The check, and its reading from the next-token alternatives (which the fake does not
    # list); the refusal is remembered: no request per lint.
    assert count == 2


def test_a_server_that_makes_every_token_costly_is_refused() -> None:
    # As llama-cpp-python's server does, scoring each token by the distribution after it:
    # the nonsense word costs no more than "the", and no shift puts that right.
    with FakeLLMServer([Rule(logprobs={"*": -12.0})]) as server:
        report = lint(GOOD, max_tier=2, env=env(server), min_confidence=0)
    assert report.tiers_run == [1]
    assert report.tiers_skipped[0].failed
    assert "do not line up with the prompt" in report.tiers_skipped[0].reason
    assert "ordinary words 17.3" in report.tiers_skipped[0].reason


def test_a_timeout_abandons_the_request_and_skips_tier_two() -> None:
    with FakeLLMServer([Rule(hang=30)]) as server:
        began = time.monotonic()
        report = lint(
            TEXT, max_tier=2, env=env(server, POLYGON_LINT_TIMEOUT="0.5"), min_confidence=0
        )
        took = time.monotonic() - began
    assert took < 5
    assert report.tiers_run == [1]
    assert "timed out" in report.tiers_skipped[0].reason


def test_a_bad_timeout_is_an_error() -> None:
    with pytest.raises(LintError, match="POLYGON_LINT_TIMEOUT"):
        lint(TEXT, env={"POLYGON_LINT_TIMEOUT": "soon", "POLYGON_LINT_LOGPROBS_MODEL": "x",
                        "POLYGON_LINT_LOGPROBS_BASE_URL": "http://127.0.0.1:9/v1"})  # fmt: skip


def test_a_failing_endpoint_skips_tier_two_and_says_why() -> None:
    with FakeLLMServer([Rule(error=500)]) as server:
        report = lint(TEXT, max_tier=2, env=env(server), min_confidence=0)
    assert report.tiers_run == [1]
    assert "logprobs endpoint failed" in report.tiers_skipped[0].reason
    assert "sk-test" not in report.tiers_skipped[0].reason


def test_half_a_configuration_is_an_error() -> None:
    with pytest.raises(LintError, match="POLYGON_LINT_LOGPROBS_MODEL"):
        lint(TEXT, env={"POLYGON_LINT_LOGPROBS_BASE_URL": "http://127.0.0.1:9/v1"})


@pytest.mark.parametrize("dialect", ["llamacpp", "vllm"])
def test_tier_two_completes_on_servers_that_refuse_or_misread_max_tokens_0(
    dialect: Dialect,
) -> None:
    # llama.cpp's server reads max_tokens 0 as "no limit" (the fake then never answers),
    # vLLM refuses it with a 400: either way tier 2 would be lost.
    rule = Rule(logprobs={**CHECK, "capacitor": -12.0, "*": -0.5})
    with FakeLLMServer([rule], dialect=dialect) as server:
        report = lint(TEXT, max_tier=2, env=env(server, POLYGON_LINT_TIMEOUT="5"), min_confidence=0)
    assert report.tiers_run == [1, 2], report.tiers_skipped
    assert [f.kind for f in report.axes["ambiguity"].findings] == ["surprising-word"]
