"""Stores filled by real runs of the three-layer suite, for the HTML report and view tests.

Imported by name (not a conftest): each test module builds what it needs once per module.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from polygon_voice.api import RunOptions, run_suite
from polygon_voice.model import Persona
from polygon_voice.store import PersonaRecord, RunRecord, Store

# A few cases of each kind keep the pages short: a correction, a stale write, an
# interruption and a tool error.
SCENARIOS = ("corr-01", "corr-04", "int-01", "te-01")

SCRIPT = '<script>alert("x")</script>'
ONERROR = "<img src=x onerror=alert(1)>"
JS_LINK = '<a href="javascript:alert(1)">click</a>'
PAYLOADS = (SCRIPT, ONERROR, JS_LINK)


def run(store: Store, agent: str, **options: object) -> str:
    """Run the chosen three-layer cases into `store`; the run's id."""
    chosen = RunOptions(
        agent=agent, seed=1, scenarios=SCENARIOS, write_files=False, preflight=False,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    return run_suite("three-layer", chosen, store=store).run_id


def open_store(path: Path) -> Store:
    return Store(f"sqlite:///{path / 'polygon.db'}")


def hostile_run(store: Store, source_run: str) -> str:
    """A copy of a real run's first call with hostile text everywhere a call carries text:
    caller lines (said and heard), tool arguments and results, the end message, backend
    values, the judge's quoted evidence, probe evidence and the persona's name."""
    source = store.get_run(source_run)
    original = next(iter(store.iter_conversations(source.id)))
    data = original.model_dump(mode="json")
    caller = next(t for t in data["turns"] if t["speaker"] == "caller")
    caller["text"] = f"Please change {SCRIPT} order {ONERROR} now {JS_LINK}"
    caller["heard"] = f"Please {SCRIPT} order {ONERROR} um now {JS_LINK}"
    for call in data["tool_calls"]:
        call["result"] = {"note": ONERROR, "link": JS_LINK}
        call["args"] = {**call["args"], "memo": SCRIPT}
        call["idempotency_key"] = JS_LINK
    for write in data["backend_writes"]:
        write["new"] = SCRIPT
    data["end"]["message"] = f"ended {SCRIPT} {JS_LINK}"
    hostile = type(original).model_validate({**data, "id": f'x"><b>{ONERROR}'})
    record = RunRecord.model_validate(
        {
            **source.model_dump(),
            "id": "hostile0run",
            "agent": f"agent {SCRIPT}",
            "config": {**source.config, "personas": [
                {"scenario": hostile.scenario_id, "persona": "p-hostile", "version": "1"}]},
        }
    )  # fmt: skip
    store.create_run(record)
    store.add_conversation(record.id, 0, hostile)
    judgement = store.get_stage_result(source.id, original.id, "judge")
    assert judgement is not None
    judgement["criteria"]["dialogue_quality"].update(
        {"evidence": f'turn {caller["index"]} (caller): "{SCRIPT} order {ONERROR}"',
         "turn": caller["index"]}
    )  # fmt: skip
    store.add_stage_result(record.id, hostile.id, "judge", judgement)
    checks = store.get_stage_result(source.id, original.id, "checks")
    if checks is not None:
        checks["axes"]["captured"]["why"] = f"turn {caller['index']}: {JS_LINK}"
        store.add_stage_result(record.id, hostile.id, "checks", checks)
    probes = {"stage": "probes", "answers": [{
        "id": "hostile_probe", "hash": "abc", "polarity": "desired", "answer": "yes",
        "source": "deterministic", "evidence": ONERROR, "turn": caller["index"],
        "reason": JS_LINK}]}  # fmt: skip
    store.add_stage_result(record.id, hostile.id, "probes", probes)
    now = datetime.now(UTC)
    store.add_personas([PersonaRecord(
        id="p-hostile", persona=Persona(name=f"Eve {ONERROR}", goal=SCRIPT),
        prompt_path="prompts/agent.md", prompt_hash="h", generator="deterministic",
        created_at=now, updated_at=now)])  # fmt: skip
    return record.id
