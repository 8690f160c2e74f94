"""`polygon import --expect FILE`: the file's shape, its errors with file and line, call ids
it names that no call has, and its entries against a record's own expectation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.imports.base import ImportedCall
from polygon_voice.imports.convert import import_entry
from polygon_voice.imports.expect_file import ExpectFileError, load_expect_file
from polygon_voice.imports.formats.openai import OpenAIFormat
from polygon_voice.store import Store
from tests.cli.conftest import Polygon
from tests.imports.test_judging import MOVED_TO_FRIDAY, chat, imported, write_calls


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("a:\n  expect:\n    outcome: maybe\n", "expect.yaml:3:14: a.expect.outcome", "success"),
        ("a:\n  expect:\n    toolz: {}\n", "expect.yaml:3:5: a.expect.toolz", "tools"),
        ("a:\n  scenaro: x\n", "expect.yaml:2:3: a.scenaro", "scenario"),
        ("a: [1]\n", "expect.yaml:1:4: a", "a mapping with 'scenario' and/or 'expect'"),
        ("- a\n", "expect.yaml:1:1", "call id -> {scenario, expect}"),
        ("a: {b: [}\n", "expect.yaml:1:", ""),
        (
            "a:\n  expect:\n    no_write: true\n    writes_at_most: 2\n",
            "expect.yaml:3:5: a.expect",
            "not both",
        ),
    ],
)
def test_a_bad_expect_file_names_the_file_line_and_field(
    tmp_path: Path, text: str, where: str, message: str
) -> None:
    path = tmp_path / "expect.yaml"
    path.write_text(text)
    with pytest.raises(ExpectFileError) as caught:
        load_expect_file(path)
    shown = str(caught.value)
    assert shown.startswith(str(path))
    assert where in shown.replace(str(tmp_path) + "/", "")
    assert message in shown


def test_a_missing_expect_file_is_one_line_and_exit_2(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    code, _out, err = polygon("import", str(calls), "--expect", str(tmp_path / "nope.yaml"))
    assert code == 2
    assert "nope.yaml: file not found" in err
    assert "Traceback" not in err
    code, out, _err = polygon("runs", "--json")
    assert json.loads(out)["runs"] == []  # refused before a record was read


def test_a_json_expect_file_with_scenarios_and_expectations(tmp_path: Path) -> None:
    path = tmp_path / "expect.json"
    path.write_text(json.dumps({"c1": {"scenario": "cancel", "expect": MOVED_TO_FRIDAY},
                                "c2": {"scenario": "cancel"}, "3": {}}))  # fmt: skip
    loaded = load_expect_file(path)
    assert len(loaded) == 3
    first = loaded.get("c1")
    assert first is not None
    assert first.scenario == "cancel"
    assert first.expect is not None
    assert first.expect.outcome == "success"
    second = loaded.get("c2")
    assert second is not None
    assert second.expect is None
    assert loaded.unused(["c1", "c2"]) == ["3"]


def test_ids_no_call_has_are_a_warning(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(tmp_path, chat("kept", "friday"))
    path = tmp_path / "expect.yaml"
    path.write_text("kept: {expect: {outcome: success}}\nghost-1: {}\nghost-2: {}\n")
    code, _out, err = polygon("import", str(calls), "--expect", str(path))
    assert code == 0, err
    assert "2 call id(s) of the expect file match no imported call: ghost-1, ghost-2" in err
    summary = imported(polygon, str(calls), "--expect", str(path))
    assert summary["expect_unused"] == ["ghost-1", "ghost-2"]


@pytest.fixture
def own_expectations(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenAI records that carry an `expect` key of their own, as tau-bench's gold does."""
    parse = OpenAIFormat.parse

    def with_expect(self: OpenAIFormat, record: object) -> ImportedCall:
        call = parse(self, record)
        if isinstance(record, dict) and "expect" in record:
            call.expect = record["expect"]
        return call

    monkeypatch.setattr(OpenAIFormat, "parse", with_expect)


def _with_expect(call: dict[str, Any], expect: object) -> dict[str, Any]:
    return {**call, "expect": expect}


@pytest.mark.usefixtures("own_expectations")
def test_the_file_wins_over_the_records_own_expectation(polygon: Polygon, tmp_path: Path) -> None:
    wrong = {"tools": {"called": [{"tool": "reschedule", "args": {"day": "monday"}}]}}
    calls = write_calls(
        tmp_path,
        _with_expect(chat("replaced", "friday"), wrong),
        _with_expect(chat("own", "friday"), wrong),
    )
    path = tmp_path / "expect.yaml"
    path.write_text(json.dumps({"replaced": {"expect": MOVED_TO_FRIDAY}}))
    summary = imported(polygon, str(calls), "--expect", str(path))
    assert summary["expect_overridden"] == 1
    assert summary["expectations"] == {"met": 1, "not_met": 1, "not_exercised": 0}
    _code, _out, err = polygon("import", str(calls), "--expect", str(path))
    assert "replaced the record's own expectation of 1 call(s)" in err
    with Store(f"sqlite:///{polygon.db}") as store:
        stored = store.get_conversation(summary["run_id"], "replaced")
    entry = import_entry(stored)
    assert entry is not None
    # The expectation used is the one kept, so a rejudge reads the file's, not the record's.
    assert entry["expect"]["tools"]["called"][0]["args"] == {"day": "friday"}


@pytest.mark.usefixtures("own_expectations")
def test_a_records_bad_expectation_fails_that_record_only(polygon: Polygon, tmp_path: Path) -> None:
    calls = write_calls(
        tmp_path,
        _with_expect(chat("bad", "friday"), {"outcome": "sometimes"}),
        chat("good", "friday"),
    )
    summary = imported(polygon, str(calls), code=1)
    assert summary["imported"] == 1
    [failure] = summary["failures"]
    assert failure["source"].endswith("calls.jsonl:1")
    assert failure["field"] == "expect.outcome"
    assert "call bad" in failure["message"]
    with Store(f"sqlite:///{polygon.db}") as store:
        assert store.conversation_ids(summary["run_id"]) == {"good"}
