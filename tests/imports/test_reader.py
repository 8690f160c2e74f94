"""The reader: paths to records, each with its source; gzip, stdin, caps, bad bytes."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polygon_voice.imports import reader
from polygon_voice.imports.reader import Record, Unreadable, iter_records


def never(_value: object) -> bool:
    return False


def chat_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) and "role" in v for v in value)


def read(paths: list[str], is_record: Any = never) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for item in iter_records(paths, is_record):
        if isinstance(item, Record):
            out.append((str(item.source), item.value))
        else:
            out.append((str(item.source), f"ERROR {item.error}"))
    return out


def test_jsonl_gives_a_record_a_line_numbered_and_a_bad_line_does_not_stop_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text('{"a": 1}\n\nnot json\n{"a": 2}\n')
    got = read([str(path)])
    assert got[0] == (f"{path}:1", {"a": 1})
    assert got[1][0] == f"{path}:3"
    assert "not valid JSON" in str(got[1][1])
    assert got[2] == (f"{path}:4", {"a": 2})


def test_a_json_list_of_calls_is_several_records_but_a_chat_is_one(tmp_path: Path) -> None:
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"id": 1}, {"id": 2}], indent=2))
    assert read([str(calls)]) == [(f"{calls}[0]", {"id": 1}), (f"{calls}[1]", {"id": 2})]
    chat = tmp_path / "chat.json"
    messages = [{"role": "user", "content": "hi"}]
    chat.write_text(json.dumps(messages))
    assert read([str(chat)], chat_list) == [(str(chat), messages)]


def test_a_pretty_printed_document_and_jsonl_without_a_suffix_are_told_apart(
    tmp_path: Path,
) -> None:
    doc = tmp_path / "doc"
    doc.write_text('{\n  "a": 1\n}\n')
    assert read([str(doc)]) == [(str(doc), {"a": 1})]
    lines = tmp_path / "lines.json"
    lines.write_text('{"a": 1}\n{"a": 2}\n')
    assert [value for _s, value in read([str(lines)])] == [{"a": 1}, {"a": 2}]


def test_csv_and_text_files_are_one_record_each(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("speaker,text\nagent,hi\n")
    (tmp_path / "t.txt").write_text("Agent: hi\n")
    assert read([str(tmp_path / "t.csv"), str(tmp_path / "t.txt")]) == [
        (str(tmp_path / "t.csv"), "speaker,text\nagent,hi\n"),
        (str(tmp_path / "t.txt"), "Agent: hi\n"),
    ]


def test_gzip_is_recognised_by_its_bytes_not_its_name(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"  # no .gz suffix
    path.write_bytes(gzip.compress(b'{"a": 1}\n{"a": 2}\n'))
    assert [value for _s, value in read([str(path)])] == [{"a": 1}, {"a": 2}]
    named = tmp_path / "t.csv.gz"
    named.write_bytes(gzip.compress(b"speaker,text\nagent,hi\n"))
    assert read([str(named)]) == [(str(named), "speaker,text\nagent,hi\n")]


def test_a_broken_gzip_file_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"a": 1}\n' * 100)[:30])
    got = read([str(path)])
    assert "ERROR" in str(got[-1][1])


def test_folders_are_read_recursively_and_globs_expanded(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.jsonl").write_text('{"b": 1}\n')
    (tmp_path / "a.json").write_text('{"a": 1}')
    (tmp_path / "notes.md").write_text("ignored")
    assert [v for _s, v in read([str(tmp_path)])] == [{"a": 1}, {"b": 1}]
    assert [v for _s, v in read([str(tmp_path / "**" / "*.jsonl")])] == [{"b": 1}]


def test_missing_paths_and_empty_globs_are_errors(tmp_path: Path) -> None:
    got = read([str(tmp_path / "nope.json"), str(tmp_path / "*.jsonl")])
    assert "no such file or folder" in str(got[0][1])
    assert "no file matches" in str(got[1][1])


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b'{"a": 1}\n{"a": 2}\n'))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert read(["-"]) == [("<stdin>:1", {"a": 1}), ("<stdin>:2", {"a": 2})]


def test_stdin_gzip(monkeypatch: pytest.MonkeyPatch) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(gzip.compress(b'[{"a": 1}, {"a": 2}]')))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert read(["-"]) == [("<stdin>[0]", {"a": 1}), ("<stdin>[1]", {"a": 2})]


def test_an_over_long_line_is_refused_and_the_next_line_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "MAX_RECORD_BYTES", 1000)
    path = tmp_path / "calls.jsonl"
    path.write_text('{"a": "' + "x" * 5000 + '"}\n{"a": 2}\n')
    got = read([str(path)])
    assert got[0][0] == f"{path}:1"
    assert "over" in str(got[0][1])
    assert got[1] == (f"{path}:2", {"a": 2})


def test_an_over_large_text_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reader, "MAX_RECORD_BYTES", 100)
    path = tmp_path / "t.txt"
    path.write_text("Agent: hi\n" * 100)
    [(_source, value)] = read([str(path)])
    assert "over" in str(value)


def test_bytes_that_are_not_utf8_are_an_error_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"Agent: caf\xe9\n")
    [(_source, value)] = read([str(path)])
    assert "not UTF-8" in str(value)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300), suffix=st.sampled_from(["", ".json", ".jsonl", ".csv", ".gz"]))
def test_any_bytes_give_records_or_errors(tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"f{suffix}"
    path.write_bytes(gzip.compress(data) if suffix == ".gz" else data)
    for item in iter_records([str(path)], chat_list):
        assert isinstance(item, (Record, Unreadable))


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json", "empty.csv", "empty", "blank.txt"])
def test_an_empty_file_is_an_error_saying_so(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("\n\n" if name.startswith("blank") else "")
    [(source, value)] = read([str(path)])
    assert source == str(path)
    assert "holds no records" in str(value)


def test_text_after_blank_lines_is_still_text(tmp_path: Path) -> None:
    path = tmp_path / "call"
    path.write_text("\n\nAgent: hi\n")
    assert read([str(path)]) == [(str(path), "\n\nAgent: hi\n")]
