"""The demo's personas: a few callers generated from the order-line prompt, and a suite of them.

`polygon demo` copies the prompt shipped with Polygon next to its reports (an edited copy is
kept), makes personas from it without a model (the same seed gives the same personas; those
already stored for the copy are reused) and writes a suite whose scenarios name them, so
that `polygon serve` over the demo's database has personas with conversations to show.
"""

from __future__ import annotations

import asyncio
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.model import Outcome, PersonaType
from polygon_voice.store import PersonaRecord, Store

PROMPT_FILE = "prompt.md"
SUITE_FILE = "personas.yaml"
DEMO_TYPES = (PersonaType.COOPERATIVE, PersonaType.BUSY, PersonaType.CONFUSED)
SHIPPED_PROMPT = "prompts/order_line.md"


def demo_prompt(out: Path) -> Path:
    """OUT/prompt.md: the shipped order-line prompt, copied once; an edited copy is kept."""
    target = out / PROMPT_FILE
    if not target.exists():
        shipped = resources.files("polygon_voice.suites").joinpath(SHIPPED_PROMPT)
        out.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shipped.read_bytes())
    return target


def demo_personas(store: Store, prompt: Path, seed: int) -> list[PersonaRecord]:
    """The demo's personas of `prompt`: those stored for it, else made now without a model."""
    from polygon_voice.cli.personas import new_records
    from polygon_voice.scenario.personas import generate_personas

    path = str(prompt.resolve())
    stored = store.list_personas(prompt_path=path)
    if len(stored) >= len(DEMO_TYPES):
        return stored[: len(DEMO_TYPES)]
    text = prompt.read_bytes().decode("utf-8")
    wanted = len(DEMO_TYPES) - len(stored)
    made = asyncio.run(
        generate_personas(
            text, wanted, DEMO_TYPES, [Outcome.SUCCESS], client=None, seed=seed, start=len(stored)
        )
    )
    records = new_records(made, path)
    store.add_personas(records)
    return [*stored, *records]


def write_persona_suite(out: Path, records: list[PersonaRecord]) -> Path:
    """OUT/personas.yaml: one scenario per persona (`persona_ref`), the order line's tools, and
    a backend holding each persona's order. Written anew each time (it follows the personas)."""
    orders = {
        str(record.persona.facts.get("order_id", f"{1000 + i}")): {
            "quantity": 1,
            "delivery_date": "2026-12-10",
            "status": "processing",
        }
        for i, record in enumerate(records)
    }
    suite: dict[str, Any] = {
        "name": "demo-personas",
        "description": "Callers generated from the order-line prompt (polygon demo).",
        "agent": "reference:robust",
        "language": "en",
        "tools": _TOOLS,
        "backend": {"orders": orders},
        "scenarios": [
            {
                "id": f"persona-{i + 1}-{record.persona.type.value}",
                "description": record.persona.goal,
                "persona_ref": record.id,
                **_expected(record),
            }
            for i, record in enumerate(records)
        ],
    }
    path = out / SUITE_FILE
    header = "# Written by `polygon demo`: its generated personas against the order line.\n"
    path.write_text(header + yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


def _expected(record: PersonaRecord) -> dict[str, Any]:
    """What must hold when the persona's call ends: its order changed as its facts ask (so a
    call the caller gives up on is a failure, not a quiet pass)."""
    facts = record.persona.facts
    change = {k: facts[k] for k in ("quantity", "delivery_date") if k in facts}
    if "order_id" not in facts or not change:
        return {}
    return {
        "expect": {"outcome": "success", "backend": {"orders": {str(facts["order_id"]): change}}}
    }


_ORDER_ID = {"type": "string", "pattern": "^[0-9]{4,}$"}
_TOOLS: dict[str, Any] = {
    "lookup_order": {
        "description": "Look up an order by its number.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": _ORDER_ID},
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "stub": {"kind": "stateful", "collection": "orders", "op": "get", "key": "order_id"},
        "latency": 0.3,
        "timeout": 4,
    },
    "update_order": {
        "description": "Change the quantity and/or delivery date of an order.",
        "parameters": {
            "type": "object",
            "properties": {
                "order_id": _ORDER_ID,
                "quantity": {"type": "integer", "minimum": 1, "maximum": 100},
                "delivery_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            },
            "required": ["order_id"],
            "additionalProperties": False,
        },
        "stub": {
            "kind": "stateful",
            "collection": "orders",
            "op": "update",
            "key": "order_id",
            "fields": ["quantity", "delivery_date"],
        },
        "latency": 1.0,
        "timeout": 6,
    },
}
