"""Every model error of the caller, the judge and a prompt agent is stored with its call and
shown — `polygon show RUN`, `polygon show RUN --conversation ID`, report.json, `--json` —
and no such call is a pass; a run in which nothing was exercised exits 3 (docs/cli.md)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

# Long enough that a screen line must shorten it, and with its cause at the very end.
LONG_CAUSE = "x" * 900 + " the real cause: slot 0 is busy"


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeLLMServer]]:
    started: list[FakeLLMServer] = []

    def start(*rules: Rule) -> FakeLLMServer:
        started.append(FakeLLMServer(list(rules)).start())
        return started[-1]

    yield start
    for server in started:
        server.stop()


def _head() -> str:
    head = EXAMPLE_SUITE.read_text().split("\nscenarios:", 1)[0]
    return head.replace("agent.py:", f"{EXAMPLE_SUITE.parent / 'agent.py'}:")


LLM_CALLERS = """
scenarios:
  - id: change-quantity
    caller: llm
    expect: {outcome: success, backend: {orders: {"5590": {quantity: 3}}}}
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590", quantity: 3}}
  - id: ask-only
    caller: llm
    persona: {goal: Ask about order 5590., facts: {order_id: "5590"}}
"""

SCRIPTED = """
scenarios:
  - id: change-quantity
    expect: {outcome: success}
    persona: {goal: Change the quantity of order 5590 to 3.}
    script:
      - say: Please change order 5590 to 3 items.
"""


def _config(polygon: Polygon, server: FakeLLMServer, *roles: str) -> Path:
    role = {"model": "fake", "base_url": server.base_url, "max_retries": 0, "cache": False}
    path = polygon.workdir / "llm.json"
    path.write_text(json.dumps({"llm": dict.fromkeys(roles, role)}), "utf-8")
    return path


def _suite(polygon: Polygon, text: str) -> Path:
    path = polygon.workdir / "suite.yaml"
    path.write_text(_head() + text, "utf-8")
    return path


def _run(polygon: Polygon, *args: str) -> tuple[int, dict[str, Any], str]:
    code, out, err = polygon("run", *args, "--out", "out", "--json")
    return code, json.loads(out), err


def _report(polygon: Polygon) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((polygon.workdir / "out" / "report.json").read_text())
    return report


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_a_caller_model_that_answers_500_is_stored_shown_and_never_a_pass(
    polygon: Polygon, serve: Callable[..., FakeLLMServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve(Rule(role="caller", error=500, message=LONG_CAUSE))
    config = _config(polygon, server, "caller")
    code, result, _ = _run(polygon, str(_suite(polygon, LLM_CALLERS)), "--llm-config", str(config))

    assert code == 3  # the caller role failed: infrastructure, and nothing was exercised
    assert result["verdicts"] == {"unscored": 2}
    assert result["not_exercised"] == 2
    for call in result["calls"]:
        assert call["failures"]["caller"].endswith("the real cause: slot 0 is busy")
        assert call["not_exercised"].startswith("the caller model failed: ")
    report = _report(polygon)
    entry = report["conversations"][0]
    assert entry["failures"]["caller"].endswith("slot 0 is busy")  # whole, not cut
    assert (report["summary"]["not_exercised"], report["summary"]["failures"]) == (2, {"caller": 2})
    assert entry["not_exercised"].startswith("the caller model failed: ")

    code, out, _ = polygon("show", result["run_id"])
    assert code == 0
    assert "change-quantity: the caller model failed:" in _flat(out)
    assert "more characters in the stored call" in _flat(out)  # shortened on screen only
    monkeypatch.setattr("polygon_voice.cli.reading.SHOWN_FAILURES", 1)
    _, out, _ = polygon("show", result["run_id"])
    assert f"... and 1 more model failures (polygon show {result['run_id']} --json)" in out
    code, out, _ = polygon("show", result["run_id"], "--conversation", "change-quantity")
    assert "the real cause: slot 0 is busy" in _flat(out)
    assert "not exercised: the caller model failed" in _flat(out)


def test_a_judge_that_answers_500_is_stored_shown_and_unscored(
    polygon: Polygon, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(Rule(role="judge", error=500, message="judge slot busy " + LONG_CAUSE))
    config = _config(polygon, server, "judge")
    code, result, _ = _run(
        polygon, str(_suite(polygon, SCRIPTED)), "--judge", "llm", "--llm-config", str(config)
    )

    assert code == 3
    (call,) = result["calls"]
    assert call["verdict"] == "unscored"
    assert "HTTP 500: judge slot busy" in call["failures"]["judge"]
    assert call["failures"]["judge"].endswith("the real cause: slot 0 is busy")  # whole
    assert call["not_exercised"] is None  # the call played; only its judging failed
    assert "judge slot busy" in _report(polygon)["conversations"][0]["failures"]["judge"]
    _, out, _ = polygon("show", result["run_id"])
    assert "change-quantity: the judge model failed:" in _flat(out)


def test_a_prompt_agent_whose_model_answers_500_fails_its_call(
    polygon: Polygon, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(Rule(role="agent", error=500, message="agent model down"), Rule(error=500))
    (polygon.workdir / "prompt.md").write_text("You are an order line agent.\n", "utf-8")
    agent = polygon.workdir / "agent.yaml"
    agent.write_text(
        f"model: fake\nbase_url: {server.base_url}\nsystem_prompt: prompt.md\n"
        "llm_config: llm.yaml\n",
        "utf-8",
    )
    (polygon.workdir / "llm.yaml").write_text("llm:\n  agent: {max_retries: 0}\n", "utf-8")
    code, result, _ = _run(polygon, str(_suite(polygon, SCRIPTED)), "--agent", f"prompt:{agent}")

    assert code == 3
    (call,) = result["calls"]
    assert call["end_reason"] == "error"
    assert call["verdict"] == "fail"  # the agent broke the call (gate agent_error)
    assert "agent_error" in call["gates_failed"]
    assert "agent model down" in call["failures"]["agent"]
    assert call["not_exercised"] is None
    _, out, _ = polygon("show", result["run_id"])
    assert "change-quantity: the agent's model or service could not be reached:" in _flat(out)


def test_a_run_in_which_no_call_was_exercised_exits_3(
    polygon: Polygon, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(Rule(role="caller", json={"say": "", "end_call": True}))
    config = _config(polygon, server, "caller")
    suite = str(_suite(polygon, LLM_CALLERS))
    code, result, err = _run(polygon, suite, "--llm-config", str(config))

    assert code == 3  # nothing was tested: no green run
    assert result["failures"] == []  # the model answered; no endpoint failed
    assert result["verdicts"] == {"unscored": 2}
    assert [c["not_exercised"] for c in result["calls"]] == [
        "the caller hung up before saying anything"
    ] * 2
    assert "nothing was tested" in _flat(err)

    code, out, _ = polygon("run", suite, "--llm-config", str(config), "--out", "out2")
    assert code == 3
    assert "Not exercised: 2 of 2 call(s)" in _flat(out)
    assert "the caller hung up before saying anything (2)" in _flat(out)


def test_the_progress_status_counts_not_exercised_calls_apart() -> None:
    from polygon_voice.cli.run_view import _LiveStatus
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.runner import RunTally

    def judged(verdict: str, *reasons: str) -> Judgement:
        return Judgement.model_construct(
            verdict=verdict, reasons=list(reasons), prompt=None, raw_answers=[], errors=[],
            composite=None,
        )  # fmt: skip

    tally = RunTally()
    tally.add_judgement(judged("unscored", "not exercised: the caller hung up before saying"))
    tally.add_judgement(judged("unscored", "too little scored: goal_achievement"))
    status = _LiveStatus()
    status.tally = tally
    assert f"{status}" == "unscored 2 · not exercised 1"


def test_the_closing_line_counts_the_calls_not_exercised(
    polygon: Polygon, serve: Callable[..., FakeLLMServer]
) -> None:
    server = serve(Rule(role="caller", error=500, message="caller down"))
    config = _config(polygon, server, "caller")
    suite = _suite(polygon, LLM_CALLERS)
    code, out, _ = polygon("run", str(suite), "--llm-config", str(config), "--out", "out")

    assert code == 3
    closing = next(line for line in out.splitlines() if line.startswith("Run "))
    assert "2 calls, unscored 2 (2 not exercised)" in closing
