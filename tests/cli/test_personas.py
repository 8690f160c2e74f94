"""`polygon personas` end to end, and suites that run stored personas (with and without a model)."""

from __future__ import annotations

import importlib.util
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from polygon_voice.model import Outcome, Persona
from polygon_voice.scenario import load_suite
from polygon_voice.store import PersonaRecord, Store
from polygon_voice.testing import FakeLLMServer, Rule, load_script
from tests.cli.conftest import ROOT, Polygon

ORDER_PROMPT = ROOT / "examples" / "order_line" / "prompt.md"
AGENT = ROOT / "examples" / "order_line" / "agent.py"
LLM_VARIABLES = (
    "POLYGON_BASE_URL",
    "POLYGON_API_KEY",
    "POLYGON_CALLER_MODEL",
    "POLYGON_CALLER_BASE_URL",
    "POLYGON_CALLER_API_KEY",
)


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """No caller model unless a test configures one (the developer's shell may set one)."""
    for name in LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def prompt(polygon: Polygon) -> Path:
    """A copy of the order line's prompt that a test may edit."""
    path = polygon.workdir / "prompt.md"
    path.write_text(ORDER_PROMPT.read_text())
    return path


def stored(polygon: Polygon) -> list[PersonaRecord]:
    with Store(f"sqlite:///{polygon.db}") as store:
        return store.list_personas()


def test_generate_without_a_model_stores_personas_from_the_prompt(
    polygon: Polygon, prompt: Path
) -> None:
    code, out, err = polygon("personas", "generate", "--prompt", "prompt.md", "--n", "6")
    assert code == 0, err
    records = stored(polygon)
    assert len(records) == 6
    assert "6 of 6 personas stored" in out
    for record in records:
        assert record.id in out
        assert record.generator == "deterministic"
        assert record.prompt_path == str(prompt.resolve())
        assert len(record.prompt_hash) == 16
        assert "order_id" in record.persona.facts
    assert [r.persona.type.value for r in records] == [
        "cooperative",
        "busy",
        "distrustful",
        "confused",
        "aggressive",
        "chatty",
    ]
    # A second batch continues the first: new personas, not the same ones again.
    code, _, _ = polygon("personas", "generate", "--prompt", "prompt.md", "--n", "2")
    assert code == 0
    again = stored(polygon)
    assert len(again) == 8
    assert again[6].persona != records[0].persona


def test_generate_refuses_bad_input(polygon: Polygon, prompt: Path) -> None:
    code, _, err = polygon("personas", "generate", "--prompt", "nope.md")
    assert code == 2
    assert "cannot read the prompt file nope.md" in err
    code, _, err = polygon("personas", "generate", "--prompt", "prompt.md", "--types", "busy,shy")
    assert code == 2
    assert "--types: 'shy' is not one of: cooperative, busy" in err
    code, _, err = polygon("personas", "generate", "--prompt", "prompt.md", "--outcomes", "win")
    assert code == 2
    assert "--outcomes: 'win'" in err


def test_editing_the_prompt_marks_its_personas_stale_and_refresh_remakes_only_those(
    polygon: Polygon, prompt: Path
) -> None:
    other = polygon.workdir / "clinic.md"
    other.write_text("You help patients book an appointment. Ask for their phone number.\n")
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "3")[0] == 0
    assert polygon("personas", "generate", "--prompt", "clinic.md", "--n", "2")[0] == 0
    before = {r.id: r for r in stored(polygon)}
    code, out, _ = polygon("personas", "list")
    assert code == 0
    assert "STALE" not in out
    assert out.count("current") == 5

    prompt.write_text(prompt.read_text() + "\nAlso ask for the caller's email address.\n")
    code, out, _ = polygon("personas", "list")
    assert out.count("STALE") == 3
    assert "3 stale" in out
    code, out, _ = polygon("personas", "list", "--stale")
    assert out.count("STALE") == 3
    assert "clinic.md" not in out

    code, out, err = polygon("personas", "refresh")
    assert code == 0, err
    assert "3 of 3 stale personas refreshed (same ids)" in out
    after = {r.id: r for r in stored(polygon)}
    assert list(after) == list(before)  # same ids, same order
    for persona_id, old in before.items():
        new = after[persona_id]
        if old.prompt_path.endswith("clinic.md"):
            assert new == old  # not stale: untouched
            continue
        assert new.prompt_hash != old.prompt_hash
        assert "email" in new.persona.facts  # read from the prompt as it is now
        assert (new.persona.type, new.persona.intended_outcome) == (
            old.persona.type,
            old.persona.intended_outcome,
        )
        assert new.persona.difficulty == old.persona.difficulty
        assert new.created_at == old.created_at
    code, out, _ = polygon("personas", "list")
    assert "STALE" not in out
    code, out, _ = polygon("personas", "refresh")
    assert code == 0
    assert "nothing to refresh" in out


def test_a_missing_prompt_file_is_shown_and_not_refreshed(polygon: Polygon, prompt: Path) -> None:
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "1")[0] == 0
    prompt.unlink()
    code, out, _ = polygon("personas", "list")
    assert "prompt missing" in out
    code, _, err = polygon("personas", "refresh")
    assert code == 2  # bad input: its prompt file is gone
    assert "is gone" in err


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    """The caller role pointed at a fake server, through the environment, as a user would."""
    rules = [
        Rule(role="caller", contains="Persona number 2:", error=500, message="boom"),
        Rule(
            role="caller",
            structured=True,
            contains="The agent's prompt",
            json={
                "name": "Maria Lopez",
                "goal": "Change order 4821.",
                "facts": {"order_id": "4821"},
            },
        ),
        Rule(
            role="caller", turn=1, json={"say": "Hi, I need to change an order.", "end_call": False}
        ),
        Rule(
            role="caller", json={"say": "I don't have it at hand. Thanks, bye.", "end_call": True}
        ),
    ]
    with FakeLLMServer(rules) as server:
        monkeypatch.setenv("POLYGON_CALLER_BASE_URL", server.base_url)
        monkeypatch.setenv("POLYGON_CALLER_MODEL", "fake-model")
        yield server


def test_generate_with_a_model_keeps_the_personas_whose_request_worked(
    polygon: Polygon, prompt: Path, model: FakeLLMServer
) -> None:
    # The file sets what the environment does not: no retries, so the 500 fails at once.
    (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 0}\n")
    code, out, err = polygon(
        "personas", "generate", "--prompt", "prompt.md", "--n", "3", "--llm-config", "llm.yaml"
    )
    assert code == 3, err  # the model failed for one: the others are stored all the same
    assert "2 of 3 personas stored; 1 failed (see above)" in out
    assert "persona 2 (busy, refusal) failed: caller call to" in err
    assert err.count("boom") == 1  # each error once
    assert model.request_count == 3
    records = stored(polygon)
    assert [r.generator for r in records] == ["llm:fake-model", "llm:fake-model"]
    assert [r.persona.type.value for r in records] == ["cooperative", "distrustful"]


def test_generate_exits_3_when_no_persona_could_be_made(
    polygon: Polygon, prompt: Path, model: FakeLLMServer
) -> None:
    (polygon.workdir / "llm.yaml").write_text("llm:\n  caller: {max_retries: 0}\n")
    code, _, err = polygon("personas", "generate", "--prompt", "prompt.md", "--n", "1")
    assert code == 0, err  # persona 1 works
    code, out, _ = polygon(
        "personas", "generate", "--prompt", "prompt.md", "--n", "1", "--llm-config", "llm.yaml"
    )
    # The prompt has one persona already: the next is persona number 2, which fails.
    assert code == 3
    assert "No persona stored: the model failed for all 1 (see above)." in out
    assert "persona_ref" not in out


def test_sample_shows_personas_with_a_conversation_or_says_there_is_none(
    polygon: Polygon, prompt: Path
) -> None:
    code, _, err = polygon("personas", "sample", "2")
    assert code == 1
    assert "no personas stored yet" in err
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "3")[0] == 0
    code, out, _ = polygon("personas", "sample", "2", "--seed", "1")
    assert code == 0
    assert out.count("has not played a call yet.") == 2
    assert "2 of 2 shown have not played a call yet. To get one, name it in a scenario" in out
    assert "goal" in out
    assert "order_id:" in out
    assert polygon("personas", "sample", "2", "--seed", "1")[1] == out  # the same pick again
    code, out, _ = polygon("personas", "sample", "10")
    assert out.count("╭─ p-") == 3  # no more than there are


def _suite(polygon: Polygon, caller: str, *, with_script: bool = False) -> Path:
    """The order line's tools and agent, one scenario per stored persona."""
    example = (ROOT / "examples" / "order_line" / "suite.yaml").read_text()
    head = example.split("\nscenarios:", 1)[0].replace("agent.py:", f"{AGENT}:")
    lines = [head, "scenarios:"]
    for number, record in enumerate(stored(polygon), 1):
        lines.append(f"  - id: generated-{number}")
        lines.append(f"    persona_ref: {record.id}")
        lines.append(f"    caller: {caller}")
        if with_script:
            lines.append(f"    script: [{{say: 'Order {record.persona.facts['order_id']}.'}}]")
    path = polygon.workdir / f"generated-{caller}.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _transcripts(polygon: Polygon, folder: str) -> list[dict[str, object]]:
    text = (polygon.workdir / folder / "transcripts.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_a_suite_of_stored_personas_runs_without_a_model(polygon: Polygon, prompt: Path) -> None:
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "3")[0] == 0
    suite = _suite(polygon, "scripted", with_script=True)
    code, out, err = polygon("run", str(suite), "--out", "out")
    assert code == 0, err
    calls = _transcripts(polygon, "out")
    assert len(calls) == 3
    records = stored(polygon)
    for call, record in zip(calls, records, strict=True):
        assert call["turns"][1]["text"] == f"Order {record.persona.facts['order_id']}."
    with Store(f"sqlite:///{polygon.db}") as store:
        [run] = store.list_runs()
    links = run.config["personas"]
    assert [link["persona"] for link in links] == [r.id for r in records]
    code, out, _ = polygon("personas", "sample", "3")
    assert "has not played" not in out
    assert out.count(f"Last call it played: run {run.id}, scenario generated-") == 3
    # Turn by turn: the agent's greeting, then the caller's scripted line.
    for record in records:
        assert f"caller  Order {record.persona.facts['order_id']}." in out
    assert out.count("agent   Hello, this is the order line.") == 3
    assert out.count(f"Every event of this call: polygon show {run.id} --conversation ") == 3


@pytest.mark.skipif(
    importlib.util.find_spec("polygon_voice.caller.persona") is None,
    reason="the deterministic persona engine (caller: persona) is not in this build yet",
)
def test_generated_personas_run_on_the_persona_engine(polygon: Polygon, prompt: Path) -> None:
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "4")[0] == 0
    code, _, err = polygon("run", str(_suite(polygon, "persona")), "--out", "out")
    assert code == 0, err
    calls = _transcripts(polygon, "out")
    assert len(calls) == 4
    for call in calls:
        assert call["end"]["reason"] != "error", call["end"]  # type: ignore[index]
        assert any(t["speaker"] == "caller" for t in call["turns"])  # type: ignore[union-attr]


def test_the_same_personas_run_through_the_llm_caller(
    polygon: Polygon, prompt: Path, model: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("POLYGON_CALLER_MODEL")  # generated without a model, played by one
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "2")[0] == 0
    monkeypatch.setenv("POLYGON_CALLER_MODEL", "fake-model")
    code, _, err = polygon("run", str(_suite(polygon, "llm")), "--out", "out")
    assert code == 0, err
    calls = _transcripts(polygon, "out")
    assert len(calls) == 2
    for call in calls:
        said = [t["text"] for t in call["turns"] if t["speaker"] == "caller"]  # type: ignore[union-attr]
        assert said == ["Hi, I need to change an order.", "I don't have it at hand. Thanks, bye."]
        # The goodbye ends the call: the agent hangs up on it, or the caller right after.
        assert call["end"]["reason"] in ("agent_hangup", "caller_hangup")  # type: ignore[index]
    requests = [r for r in model.requests if r.body["messages"][0]["content"].startswith("You are")]
    assert len(requests) == 4  # two turns per call
    # Each call's model is cast as its own stored persona (the calls run concurrently).
    systems = {r.body["messages"][0]["content"] for r in requests}
    for record in stored(polygon):
        order = f"- order_id: {record.persona.facts['order_id']}"
        assert any(order in system for system in systems)


def test_a_suite_with_caller_llm_needs_a_model(polygon: Polygon, prompt: Path) -> None:
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "1")[0] == 0
    code, _, err = polygon("run", str(_suite(polygon, "llm")), "--out", "out")
    assert code == 2
    assert "scenario 'generated-1' uses `caller: llm`" in err
    assert "POLYGON_CALLER_MODEL" in err
    code, out, _ = polygon("runs")
    assert "gen" not in out.lower() or "running" not in out  # no run was started


def test_an_unknown_persona_ref_stops_the_run_before_it_starts(polygon: Polygon) -> None:
    suite = polygon.workdir / "suite.yaml"
    suite.write_text(
        f"name: refs\nagent: {AGENT}:OrderLineAgent\n"
        "scenarios:\n  - {id: one, persona_ref: p-nothere, script: [{say: hi}]}\n"
    )
    code, _, err = polygon("run", str(suite))
    assert code == 2
    assert "scenarios[0].persona_ref" in err
    assert "scenario 'one' references the stored persona 'p-nothere'" in err


def test_a_run_is_not_resumed_with_refreshed_personas(polygon: Polygon, prompt: Path) -> None:
    assert polygon("personas", "generate", "--prompt", "prompt.md", "--n", "1")[0] == 0
    suite = _suite(polygon, "scripted", with_script=True)
    code, _, _ = polygon("run", str(suite), "--out", "out")
    assert code == 0
    run_id = json.loads((polygon.workdir / "out" / "report.json").read_text())["run_id"]
    assert polygon("run", str(suite), "--resume", run_id)[0] == 0
    prompt.write_text(prompt.read_text() + "\nBe brief.\n")
    assert polygon("personas", "refresh")[0] == 0
    code, _, err = polygon("run", str(suite), "--resume", run_id)
    assert code == 2
    assert "other versions of its stored personas" in err


def _doc_blocks(language: str) -> list[str]:
    text = (ROOT / "docs" / "personas.md").read_text()
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def test_the_examples_in_docs_personas_load(tmp_path: Path) -> None:
    persona, suite, script = _doc_blocks("yaml")
    assert Persona.model_validate(yaml.safe_load(persona)).intended_outcome is Outcome.CALLBACK
    (tmp_path / "suite.yaml").write_text("name: doc\n" + suite)
    scenarios = load_suite(tmp_path / "suite.yaml").suite.scenarios
    assert [s.persona_ref for s in scenarios] == ["p-1a2b3c4d", "p-5e6f7a8b", "p-9c0d1e2f"]
    (tmp_path / "rules.yaml").write_text(script)
    assert [rule.role for rule in load_script(tmp_path / "rules.yaml").rules] == ["caller"] * 2
    commands = [line.split()[2] for line in _doc_blocks("sh")[0].splitlines()]
    assert commands == ["generate", "list", "refresh", "show", "sample"]


def test_a_prompt_with_windows_line_ends_is_not_stale_at_once(polygon: Polygon) -> None:
    (polygon.workdir / "crlf.md").write_bytes(b"You help callers change an order.\r\nBe brief.\r\n")
    assert polygon("personas", "generate", "--prompt", "crlf.md", "--n", "1")[0] == 0
    code, out, _ = polygon("personas", "list")
    assert code == 0
    assert "current" in out
    assert "STALE" not in out
