"""Probes in a run: their own pass (PROBE-3), report.json, trends by wording, the LLM runner."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml

from polygon_voice.llm import LLMClient, RoleConfig
from polygon_voice.probes import Probe
from polygon_voice.probes.llm import ask_probe
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon
from tests.judge.calls import good_call

FIELDS = {"id", "hash", "polarity", "yes", "no", "na", "compliance", "ci_low", "ci_high"}


def _run(polygon: Polygon, out: str, *args: str) -> dict[str, object]:
    code, _, err = polygon("run", str(EXAMPLE_SUITE), "--out", out, *args)
    assert code == 0, err
    return json.loads((polygon.workdir / out / "report.json").read_text())  # type: ignore[no-any-return]


def _probe_file(path: Path, question: str) -> Path:
    probe = {"id": "promise", "question": question, "polarity": "guardrail"}
    path.write_text(yaml.safe_dump({"probes": [{**probe, "rule": "promise_without_tool_call"}]}))
    return path


def test_probes_cannot_move_the_verdict(polygon: Polygon) -> None:
    probed = _run(polygon, "with")
    # Probes on vs off (PROBE-3), each in its own database: the same judgements and summary.
    plain = Polygon(polygon.workdir, str(polygon.workdir / "other.db"))
    other = _run(plain, "without", "--no-probes")
    assert "probes" in probed
    assert "probes" not in other
    judgements = [c["judgement"] for c in probed["conversations"]]  # type: ignore[attr-defined]
    again = [c["judgement"] for c in other["conversations"]]  # type: ignore[attr-defined]
    assert judgements == again
    assert probed["summary"] == other["summary"]


def test_report_lists_probe_compliance_and_answers(polygon: Polygon) -> None:
    report = _run(polygon, "r")
    rows = report["probes"]
    assert isinstance(rows, list)
    assert len(rows) == 4
    for row in rows:
        assert set(row) == FIELDS
        if row["compliance"] is None:
            assert row["yes"] + row["no"] == 0
            assert row["ci_low"] is None
        else:
            assert 0 <= row["ci_low"] <= row["compliance"] <= row["ci_high"] <= 1
    first = report["conversations"][0]["probes"]  # type: ignore[index]
    assert {a["source"] for a in first} == {"deterministic"}
    assert all("evidence" in a and "answer" in a for a in first)


def test_a_reworded_probe_starts_a_new_series(polygon: Polygon) -> None:
    _run(polygon, "a", "--probes", str(_probe_file(polygon.workdir / "a.yaml", "Promised?")))
    _run(polygon, "b", "--probes", str(_probe_file(polygon.workdir / "b.yaml", "Promised  it?")))
    code, out, err = polygon("probes", "trend", "promise")
    assert code == 0, err
    assert "reworded" in out
    assert "2 series" in out


def test_llm_probe_runner_against_the_fake_server() -> None:
    probe = Probe("reason", "Did the agent explain itself?", "desired")
    reply = {"answer": "yes", "evidence": "Done: order 5590 now has 3 items.", "turn": 3}
    with FakeLLMServer([Rule(structured=True, json_=reply)]) as server:
        client = LLMClient(
            RoleConfig(role="judge", model="fake", base_url=server.base_url, max_retries=0)
        )
        found = asyncio.run(ask_probe(client, probe, good_call()))
        asked = server.requests[0]
    assert (found.answer, found.turn, found.source) == ("yes", 3, "llm")
    assert found.hash == probe.hash
    assert found.complied is True
    assert "Did the agent explain itself?" in json.dumps(asked.body)


def test_llm_probe_failure_is_not_counted() -> None:
    probe = Probe("reason", "Did the agent explain itself?", "desired")
    with FakeLLMServer([Rule(error=500)]) as server:
        client = LLMClient(
            RoleConfig(role="judge", model="fake", base_url=server.base_url, max_retries=0)
        )
        found = asyncio.run(ask_probe(client, probe, good_call()))
    assert found.answer == "not_applicable"
    assert found.reason.startswith("unanswered")
