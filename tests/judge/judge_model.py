"""The judge role on the fake LLM server, failing its first request for good and answering the
rest: how a command that judges many calls is seen to meet a judge model that failed for one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from polygon_voice.judge.rubric import V2
from polygon_voice.testing import FakeLLMServer, Rule


def v2_answer(evidence: str) -> dict[str, Any]:
    """The judge's answer: every criterion of rubric v2 scored 4, quoting `evidence`."""
    return {
        "criteria": {
            c.id: {"score": 4, "evidence": evidence, "reason": "fine"} for c in V2.criteria
        }
    }


@contextmanager
def judge_failing_first(monkeypatch: pytest.MonkeyPatch, evidence: str) -> Iterator[FakeLLMServer]:
    """The judge role pointed at a fake server whose first judge request fails with a 400
    (never retried) and whose others answer `v2_answer(evidence)`."""
    rules = [
        Rule(role="judge", call=1, error=400, message="bad"),
        Rule(role="judge", json=v2_answer(evidence)),
    ]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("POLYGON_JUDGE_MODEL", "fake")
        monkeypatch.setenv("POLYGON_JUDGE_BASE_URL", server.base_url)
        yield server
