"""Polygon's own transcripts.jsonl: the round trip is exact."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings

from polygon_voice.imports import ImportedCall, RecordError
from polygon_voice.imports.convert import to_conversation
from polygon_voice.imports.formats.polygon import FORMAT
from polygon_voice.imports.run import ImportOptions, import_calls
from polygon_voice.store import Store, resolve_db_url
from tests.cli.conftest import Polygon
from tests.imports.conftest import transcripts
from tests.imports.strategies import json_values


def test_importing_a_runs_transcripts_stores_the_same_conversations(played: Polygon) -> None:
    store = Store(resolve_db_url(str(played.db)))
    try:
        [original_run] = store.list_runs()
        summary = import_calls(store, ImportOptions((str(transcripts(played)),)))
        assert summary.failed == []
        assert summary.imported == 9
        assert summary.format_lines() == [f"{transcripts(played)}: polygon (9 records)"]
        assert summary.run_id is not None
        before = list(store.iter_conversations(original_run.id))
        after = list(store.iter_conversations(summary.run_id))
        assert after == before
        run = store.get_run(summary.run_id)
        assert run.config["kind"] == "imported"
        assert run.config["source_format"] == "polygon"
    finally:
        store.close()


def test_a_line_parses_to_its_turns_and_tools_and_converts_back_unchanged(
    played: Polygon,
) -> None:
    line = transcripts(played).read_text().splitlines()[0]
    record = json.loads(line)
    assert FORMAT.detect(record)
    call = FORMAT.parse(record)
    assert call.call_id == record["id"]
    assert [t.text for t in call.turns] == [t["text"] for t in record["turns"]]
    assert to_conversation(call).model_dump_json() == line


def test_a_broken_conversation_names_the_field() -> None:
    record = {"stage": "conversation", "turns": [{"index": "x"}], "tool_calls": [], "trace": [],
              "end": {}}  # fmt: skip
    assert FORMAT.detect(record)
    with pytest.raises(RecordError) as caught:
        FORMAT.parse(record)
    assert caught.value.where  # e.g. "id" or "turns[0].index"


@settings(max_examples=200, deadline=None)
@given(json_values())
def test_any_json_value_gives_a_call_or_a_record_error(value: Any) -> None:
    FORMAT.detect(value)
    with contextlib.suppress(RecordError):
        assert isinstance(FORMAT.parse(value), ImportedCall)
