"""The suite JSON Schema is valid Draft 2020-12 and agrees with the loader on good and bad files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from polygon_voice.scenario import load_suite, suite_json_schema

GOOD: dict[str, Any] = {
    "name": "demo",
    "tools": {
        "lookup": {
            "stub": {"kind": "fixed", "returns": {"ok": True}},
            "latency": {"distribution": "uniform", "low": 0.1, "high": 0.5},
            "faults": [{"kind": "timeout", "on_call": 2}],
        },
        "save": {"stub": {"kind": "stateful", "collection": "orders", "op": "update", "key": "id"}},
    },
    "backend": {"orders": {"A1": {"status": "open"}}},
    "scenarios": [
        {
            "id": "x",
            "persona": {"type": "busy", "facts": {"order": "A1"}},
            "script": [{"say": "hi"}, {"barge_in": {"at": "mid_speech"}}, {"hangup": True}],
        }
    ],
}


def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(suite_json_schema())


def test_schema_is_valid_draft_2020_12() -> None:
    schema = suite_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "Polygon suite"
    assert schema["description"]
    assert schema["type"] == "object"
    json.dumps(schema)  # printable as is by `polygon schema`


def test_schema_accepts_a_good_suite(tmp_path: Path) -> None:
    assert list(validator().iter_errors(GOOD)) == []
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    assert load_suite(path).suite.name == "demo"  # the loader agrees


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "demo"},
        {"name": "demo", "scenarios": []},
        {"name": "demo", "scenarios": [{"id": "x"}], "extra": 1},
        {"name": "demo", "scenarios": [{"id": "x", "script": [{"barge_in": {"at": "soon"}}]}]},
        {"name": "demo", "tools": {"t": {"stub": {"kind": "nope"}}}, "scenarios": [{"id": "x"}]},
        {"name": "demo", "scenarios": [{"id": "has space"}]},
    ],
)
def test_schema_rejects_bad_suites(bad: dict[str, Any]) -> None:
    assert not validator().is_valid(bad)


def test_schema_is_a_fresh_copy() -> None:
    suite_json_schema()["title"] = "changed"
    assert suite_json_schema()["title"] == "Polygon suite"
