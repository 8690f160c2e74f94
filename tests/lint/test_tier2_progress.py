"""A configured logprobs endpoint is a slow step of its own on the progress bar: a CPU server
may take minutes for tier 2, and the bar shows the wait."""

from __future__ import annotations

from polygon_voice.lint import lint
from polygon_voice.testing import FakeLLMServer, Rule
from tests.lint.test_logprobs import CHECK, TEXT, env

Steps = list[tuple[str, int, int]]


def test_asking_the_logprobs_endpoint_is_a_step() -> None:
    steps: Steps = []
    with FakeLLMServer([Rule(logprobs={**CHECK, "*": -0.5})]) as server:
        report = lint(TEXT, max_tier=2, env=env(server), on_step=lambda *s: steps.append(s))
    assert report.tiers_run == [1, 2]
    assert steps == [("tier 2: asking the logprobs endpoint", 0, 1), ("done", 1, 1)]


def test_a_failing_endpoint_still_closes_its_step() -> None:
    steps: Steps = []
    with FakeLLMServer([Rule(error=500, message="boom")]) as server:
        report = lint(TEXT, max_tier=2, env=env(server), on_step=lambda *s: steps.append(s))
    assert [s.tier for s in report.tiers_skipped if s.failed] == [2]
    assert steps[-1] == ("done", 1, 1)
