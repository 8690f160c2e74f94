"""Hostile text for the XSS tests: a suite, a prompt file, and what must never run."""

from __future__ import annotations

import json
from pathlib import Path

# Each payload would open a dialog if it ever became markup or a link that was followed.
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
LINK = "javascript:alert(3)"
PAYLOADS = (SCRIPT, IMG, LINK)

HOSTILE_SCENARIO = "hostile-caller"


def _quoted(text: str) -> str:
    """A YAML scalar holding TEXT exactly (JSON strings are YAML)."""
    return json.dumps(text)


def hostile_suite(path: Path, persona_ref: str | None = None) -> Path:
    """A suite whose caller lines, persona and stub tool results carry every payload.

    The lookup is a fixed stub, so its answer (payloads in its fields) is what the agent
    reads and what the viewer shows; the update is stateful, so the robust agent's
    read-back finds the value it wrote and the call completes.
    """
    persona_scenario = (
        f"""
  - id: hostile-persona
    description: {_quoted("A stored persona calls. " + IMG)}
    persona_ref: {persona_ref}
    max_turns: 16
"""
        if persona_ref
        else ""
    )
    path.write_text(
        f"""name: hostile-text
description: {_quoted("Every untrusted field holds a payload: " + SCRIPT)}
agent: reference:robust
language: en
tools:
  lookup_order:
    description: {_quoted("Look up an order. " + IMG)}
    parameters:
      type: object
      properties:
        order_id: {{type: string}}
      required: [order_id]
      additionalProperties: false
    stub:
      kind: fixed
      returns:
        order_id: "5590"
        quantity: 4
        delivery_date: "2026-12-03"
        note: {_quoted(SCRIPT + " " + IMG)}
        link: {_quoted(LINK)}
    latency: 0.3
  update_order:
    description: Change the quantity of an order.
    parameters:
      type: object
      properties:
        order_id: {{type: string}}
        quantity: {{type: integer}}
        delivery_date: {{type: string}}
      required: [order_id]
      additionalProperties: false
    stub: {{kind: stateful, collection: orders, op: update, key: order_id}}
    latency: 0.5
backend:
  orders:
    "5590": {{quantity: 2, delivery_date: "2026-12-03", note: {_quoted(IMG)}}}
scenarios:
  - id: {HOSTILE_SCENARIO}
    description: {_quoted("The caller speaks in payloads. " + SCRIPT)}
    persona:
      name: {_quoted(SCRIPT)}
      goal: {_quoted("Change order 5590 to 4. " + IMG + " " + LINK)}
      facts: {{order_id: "5590", quantity: 4, note: {_quoted(LINK)}}}
    script:
      - say: {_quoted("Please change order 5590 to 4 items. " + SCRIPT)}
      - say: {_quoted("Yes, go ahead. " + IMG + " and " + LINK)}
      - say: Thanks, bye.
    noise: 0.4
    max_turns: 16
{persona_scenario}"""
    )
    return path


def hostile_prompt(path: Path, base: Path) -> Path:
    """The example of a weak prompt (lint marks guaranteed) with a payload in each paragraph."""
    paragraphs = base.read_text().split("\n\n")
    for index, payload in zip(range(1, len(paragraphs)), PAYLOADS, strict=False):
        paragraphs[index] = f"{paragraphs[index]} Say {payload} when asked."
    path.write_text("\n\n".join(paragraphs))
    return path
