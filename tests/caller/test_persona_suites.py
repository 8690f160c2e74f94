"""Persona suites end to end through `polygon run`: the example and a four-language suite."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from polygon_voice.scenario import load_suite
from tests.cli.conftest import ROOT, Polygon

EXAMPLE = ROOT / "examples" / "order_line" / "personas.yaml"
LANGUAGES = Path(__file__).parent / "languages.yaml"
# How a call with each intended outcome ends against an agent that handles it.
ENDS = {
    "success": "agent_hangup",
    "refusal": "agent_hangup",
    "callback": "agent_hangup",
    "transfer": "transferred",
}


def run(polygon: Polygon, suite: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    code, _, err = polygon("run", str(suite), "--out", "out")
    assert code == 0, err
    out = polygon.workdir / "out"
    report = json.loads((out / "report.json").read_text())
    calls = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    return report, {c["scenario_id"]: c for c in calls}


def outcomes(suite: Path) -> dict[str, str]:
    return {s.id: s.persona.intended_outcome.value for s in load_suite(suite).suite.scenarios}


def test_the_example_persona_suite_plays_every_caller_to_its_intended_end(
    polygon: Polygon,
) -> None:
    report, calls = run(polygon, EXAMPLE)
    kinds = {s.persona.type for s in load_suite(EXAMPLE).suite.scenarios}
    assert len(kinds) == 6
    assert set(outcomes(EXAMPLE).values()) == set(ENDS)
    for scenario, outcome in outcomes(EXAMPLE).items():
        assert calls[scenario]["end"]["reason"] == ENDS[outcome], scenario
    assert report["summary"]["conversations"] == len(calls)


def test_the_example_success_callers_get_their_change_written(polygon: Polygon) -> None:
    _, calls = run(polygon, EXAMPLE)
    written = {c: [w["record"] for w in calls[c]["backend_writes"]] for c in calls}
    assert written["cooperative-success"] == ["5590"]
    assert written["confused-success"] == ["5599"]
    assert written["busy-refusal"] == written["chatty-callback"] == []


def test_a_persona_with_a_scripted_event_cuts_in_at_its_point(polygon: Polygon) -> None:
    _, calls = run(polygon, EXAMPLE)
    turns = calls["chatty-success-with-event"]["turns"]
    cut_in = [t["text"] for t in turns if t["barge_in"]]
    assert cut_in == ["Oh, and will it still come on time?"]


def test_persona_callers_in_german_croatian_and_russian(polygon: Polygon) -> None:
    _, calls = run(polygon, LANGUAGES)
    for scenario, outcome in outcomes(LANGUAGES).items():
        call = calls[scenario]
        assert call["end"]["reason"] == ENDS[outcome], scenario
        assert call["language"] == scenario[:2]
        said = " ".join(t["text"] for t in call["turns"] if t["speaker"] == "caller")
        if call["language"] == "ru":
            assert not re.search(r"[A-Za-z]", said), said
