"""A prompt-agent sweep against the fake LLM server: every point's profile reaches the
requests (the server's log), token estimates refuse a point over the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polygon_voice.api import open_store
from polygon_voice.experiments.sweep import SweepOptions, run_sweep
from polygon_voice.experiments.sweep_file import load_sweep
from polygon_voice.testing import FakeLLMServer, Rule

SUITE = """\
name: tiny
scenarios:
  - id: hello
    script:
      - say: "Hi, where is my order 5590?"
      - say: "Thanks, bye."
"""


def folder_with_agent(tmp_path: Path, base_url: str) -> Path:
    (tmp_path / "suite.yaml").write_text(SUITE, encoding="utf-8")
    (tmp_path / "prompt.md").write_text("You are the order line.\n", encoding="utf-8")
    (tmp_path / "prompt_b.md").write_text("You are a terse order line.\n", encoding="utf-8")
    (tmp_path / "agent.yaml").write_text(
        f"model: fake-a\nbase_url: {base_url}\nsystem_prompt: prompt.md\n"
        "params: {temperature: 0.3, top_p: 0.9, max_tokens: 300}\n",
        encoding="utf-8",
    )
    return tmp_path


def sweep_file(folder: Path, extra: str = "") -> Path:
    path = folder / "sweep.yaml"
    path.write_text(
        "name: params\nbase: {agent: 'prompt:agent.yaml'}\nsuite: suite.yaml\n"
        "vary:\n"
        "  model: {values: [fake-b]}\n"
        "  prompt: {values: [prompt_b.md]}\n"
        "  temperature: {values: [0.1, 0.7]}\n"
        "  top_p: {values: [0.5]}\n"
        "  max_tokens: {values: [64]}\n" + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture
def server() -> FakeLLMServer:
    with FakeLLMServer([Rule(text="Your order 5590 is on its way.")]) as fake:
        yield fake


def test_every_swept_parameter_reaches_the_model_requests(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder_with_agent(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        result = run_sweep(load_sweep(sweep_file(tmp_path)), store, SweepOptions())
    assert [o.status for o in result.outcomes] == ["done"] * 7
    seen = {
        (
            r.body["model"],
            r.body.get("temperature"),
            r.body.get("top_p"),
            r.body.get("max_tokens"),
            r.body["messages"][0]["content"].strip(),
        )
        for r in server.requests
    }
    base = ("fake-a", 0.3, 0.9, 300, "You are the order line.")
    assert seen == {
        base,
        ("fake-b", 0.3, 0.9, 300, "You are the order line."),
        ("fake-a", 0.3, 0.9, 300, "You are a terse order line."),
        ("fake-a", 0.1, 0.9, 300, "You are the order line."),
        ("fake-a", 0.7, 0.9, 300, "You are the order line."),
        ("fake-a", 0.3, 0.5, 300, "You are the order line."),
        ("fake-a", 0.3, 0.9, 64, "You are the order line."),
    }
    hashes = {o.profile.hash for o in result.outcomes}
    assert len(hashes) == 7
    # Each point's agent file is written once, under its profile's hash.
    for outcome in result.outcomes:
        written = tmp_path / ".polygon" / "profiles" / outcome.profile.hash / "agent.yaml"
        assert written.is_file()


def test_a_point_over_the_token_limit_is_refused_with_its_estimate(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder_with_agent(tmp_path, server.base_url))
    with open_store(str(tmp_path / "p.db")) as store:
        result = run_sweep(
            load_sweep(sweep_file(tmp_path, "token_limit: 100\n")), store, SweepOptions()
        )
    assert {o.status for o in result.outcomes} == {"refused"}
    first = result.outcomes[0]
    assert first.estimate is not None
    assert first.estimate["source"] == "estimator"
    assert first.estimate["tokens"] > 100
    assert f"about {first.estimate['tokens']:,} tokens (by the estimator)" in (first.reason or "")
    assert "over the token limit of 100" in (first.reason or "")
    assert server.requests == []  # nothing was sent


def test_recorded_usage_of_the_same_profile_sets_the_next_estimate(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder_with_agent(tmp_path, server.base_url))
    path = tmp_path / "one.yaml"
    path.write_text(
        "name: one\nbase: {agent: 'prompt:agent.yaml'}\nsuite: suite.yaml\n"
        "vary: {temperature: {values: [0.3]}}\n",
        encoding="utf-8",
    )
    with open_store(str(tmp_path / "p.db")) as store:
        first = run_sweep(load_sweep(path), store, SweepOptions())
        run_id = first.outcomes[0].run_id
        assert run_id is not None
        usage = store.get_run(run_id).config["llm_usage"]["total"]
        spent = usage["tokens_in"] + usage["tokens_out"]
        assert spent > 0
        # Two trials now (not reusable), a limit just under twice what one trial spent.
        text = path.read_text() + f"trials: 2\ntoken_limit: {2 * spent - 1}\n"
        path.write_text(text, encoding="utf-8")
        second = run_sweep(load_sweep(path), store, SweepOptions())
    [outcome] = second.outcomes
    assert outcome.status == "refused"
    assert outcome.estimate == {"tokens": 2 * spent, "source": "recorded", "calls": 2}
    assert "from recorded usage" in (outcome.reason or "")
    assert json.dumps(outcome.estimate)


def test_hostile_parameter_text_is_escaped_in_the_report_and_the_terminal(
    tmp_path: Path, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from polygon_voice.report.sweep_html import render_sweep_report
    from tests.cli.conftest import Polygon

    monkeypatch.chdir(folder_with_agent(tmp_path, server.base_url))
    hostile = "</td><script>alert(1)</script>\x1b]52;c;eA==\x07"
    path = tmp_path / "hostile.yaml"
    path.write_text(
        "name: hostile\nbase: {agent: 'prompt:agent.yaml'}\nsuite: suite.yaml\n"
        f"vary: {{params: {{stop: {{values: [{json.dumps(hostile)}]}}}}}}\n",
        encoding="utf-8",
    )
    polygon = Polygon(tmp_path)
    code, out, err = polygon("sweep", "hostile.yaml")
    assert code == 0, err
    assert "\x1b" not in out
    assert "\\x1b" in out  # shown, not acted on
    assert any(r.body.get("stop") == hostile for r in server.requests)
    with open_store(str(tmp_path / "polygon.db")) as store:
        [sweep] = store.list_sweeps()
        html = render_sweep_report(store, sweep.id)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
