"""The JSON Schema of a suite file, for editors (`polygon schema`)."""

from __future__ import annotations

from typing import Any

from polygon_voice.model import Suite

DIALECT = "https://json-schema.org/draft/2020-12/schema"
TITLE = "Polygon suite"
DESCRIPTION = (
    "A Polygon test suite for voice agents: the tools the agent may call and the stubs that "
    "answer them, backend records, scenarios with scripted callers, and engine settings."
)


def suite_json_schema() -> dict[str, Any]:
    """Suite.model_json_schema() with a $schema dialect and an editor-friendly title."""
    schema = Suite.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    return {"$schema": DIALECT, "title": TITLE, "description": DESCRIPTION, **schema}
