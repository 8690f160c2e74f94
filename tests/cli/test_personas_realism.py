"""Marking personas unrealistic on the command line, and runs that leave their scenarios out."""

from __future__ import annotations

from typing import Any

import pytest

from polygon_voice.store import PersonaRecord, Store
from tests.cli.conftest import Polygon
from tests.cli.test_personas import ORDER_PROMPT, _suite, _transcripts, stored


@pytest.fixture
def personas(polygon: Polygon) -> list[PersonaRecord]:
    (polygon.workdir / "prompt.md").write_text(ORDER_PROMPT.read_text())
    code, _, err = polygon("personas", "generate", "--prompt", "prompt.md", "--n", "3")
    assert code == 0, err
    return stored(polygon)


def _run_config(polygon: Polygon) -> dict[str, Any]:
    with Store(f"sqlite:///{polygon.db}") as store:
        return store.list_runs()[0].config


def test_mark_list_and_show(polygon: Polygon, personas: list[PersonaRecord]) -> None:
    target = personas[1]
    code, out, _ = polygon("personas", "mark", target.id[:6], "--note", "nobody talks like this")
    assert code == 0
    assert f"{target.id} ({target.persona.name}) is marked unrealistic" in out
    code, out, _ = polygon("personas", "list")
    rows = {line.split()[1]: line for line in out.splitlines() if "│ p-" in line}
    assert "UNREALISTIC" in rows[target.id]
    assert sum("UNREALISTIC" in row for row in rows.values()) == 1
    _, out, _ = polygon("personas", "list", "--realism", "unrealistic")
    assert [line.split()[1] for line in out.splitlines() if "│ p-" in line] == [target.id]
    _, out, _ = polygon("personas", "list", "--realism", "realistic")
    listed = [line.split()[1] for line in out.splitlines() if "│ p-" in line]
    assert listed == [personas[0].id, personas[2].id]
    _, out, _ = polygon("personas", "show", target.id)
    assert "UNREALISTIC" in out
    assert "nobody talks like this" in out
    code, out, _ = polygon("personas", "mark", target.id, "--realistic")
    assert code == 0
    assert "is realistic again" in out
    _, out, _ = polygon("personas", "list")
    assert "UNREALISTIC" not in out


def test_mark_an_unknown_persona(polygon: Polygon, personas: list[PersonaRecord]) -> None:
    code, _, err = polygon("personas", "mark", "p-nothere")
    assert code == 2
    assert "no persona with id 'p-nothere'" in err


def test_a_run_leaves_out_the_scenarios_of_unrealistic_personas(
    polygon: Polygon, personas: list[PersonaRecord]
) -> None:
    suite = _suite(polygon, "scripted", with_script=True)
    assert polygon("personas", "mark", personas[0].id, "--note", "robotic")[0] == 0
    code, _, err = polygon("run", str(suite), "--out", "out")
    assert code == 0, err
    assert (
        f"scenario generated-1 left out: its persona {personas[0].id} is marked unrealistic "
        "(robotic)" in " ".join(err.split())
    )
    assert [call["scenario_id"] for call in _transcripts(polygon, "out")] == [
        "generated-2",
        "generated-3",
    ]
    config = _run_config(polygon)
    assert config["unrealistic_left_out"] == [
        {"scenario": "generated-1", "persona": personas[0].id, "note": "robotic"}
    ]
    assert [link["persona"] for link in config["personas"]] == [p.id for p in personas[1:]]


def test_include_unrealistic_runs_them_all(polygon: Polygon, personas: list[PersonaRecord]) -> None:
    suite = _suite(polygon, "scripted", with_script=True)
    assert polygon("personas", "mark", personas[0].id)[0] == 0
    code, _, err = polygon("run", str(suite), "--out", "out", "--include-unrealistic")
    assert code == 0, err
    assert "left out" not in err
    assert len(_transcripts(polygon, "out")) == 3
    assert "unrealistic_left_out" not in _run_config(polygon)


def test_a_suite_left_without_scenarios_is_an_error(
    polygon: Polygon, personas: list[PersonaRecord]
) -> None:
    suite = _suite(polygon, "scripted", with_script=True)
    for record in personas:
        assert polygon("personas", "mark", record.id)[0] == 0
    code, _, err = polygon("run", str(suite), "--out", "out")
    assert code == 2
    assert "every scenario is played by a persona marked unrealistic" in " ".join(err.split())
    assert not (polygon.workdir / "out").exists()


def test_sample_skips_unrealistic_personas(polygon: Polygon, personas: list[PersonaRecord]) -> None:
    for record in personas[:2]:
        assert polygon("personas", "mark", record.id)[0] == 0
    _, out, _ = polygon("personas", "sample", "3")
    assert out.count("╭─ p-") == 1
    assert personas[2].id in out
    _, out, _ = polygon("personas", "sample", "3", "--include-unrealistic")
    assert out.count("╭─ p-") == 3
    assert polygon("personas", "mark", personas[2].id)[0] == 0
    code, _, err = polygon("personas", "sample", "3")
    assert code == 1
    assert "every stored persona is marked unrealistic" in err
