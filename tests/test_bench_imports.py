"""bench/imports.py imports and judges what it generates (a sanity check, not timed)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.imports import TURN_PAIRS, measure, openai_record, vapi_record, write_records

from polygon_voice.imports.formats import find_format


def test_a_measured_import_stores_and_judges_every_record() -> None:
    result = measure(30, "vapi", "deterministic")
    assert result.imported == result.judged == 30
    assert result.failed == 0
    assert 4_000 < result.record_bytes < 8_000  # the documented realistic size
    assert result.wall > result.parse_wall > 0
    assert result.cpu > 0


def test_without_a_judge_nothing_is_judged() -> None:
    result = measure(10, "openai", "none")
    assert result.imported == 10
    assert result.judged is None


def test_generated_calls_parse_to_the_documented_shape(tmp_path: Path) -> None:
    # OpenAI messages cannot mark a tool's failure; a Vapi result's `error` does.
    for name, make, failed in (("vapi", vapi_record, 1), ("openai", openai_record, 0)):
        fmt = find_format(name)
        assert fmt is not None
        call = fmt.parse(make(7))
        assert len(call.turns) == 2 * TURN_PAIRS
        assert len(call.tool_calls) == 4
        assert sum(c.error is not None for c in call.tool_calls) == failed
    path = tmp_path / "calls.jsonl"
    write_records(path, 3, "vapi")
    texts = [json.loads(line)["message"]["artifact"]["messages"][1]["message"] for line in
             path.read_text().splitlines()]  # fmt: skip
    assert len(set(texts)) == 3  # no two calls say the same thing
