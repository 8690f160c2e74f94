"""Errors before validation: unreadable files, syntax errors, duplicate keys, wrong top level."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polygon_voice.scenario import SuiteError, load_suite


def error_of(folder: Path, text: str | bytes, name: str = "suite.yaml") -> SuiteError:
    path = folder / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return caught.value


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    error = caught.value
    assert (error.file, error.line, error.field) == (str(path), None, None)
    assert error.message == "file not found"
    assert str(error) == f"{path}: file not found"


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(SuiteError, match="is a directory"):
        load_suite(tmp_path / "dir.yaml")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "locked.yaml"
    path.write_text("name: demo\n")
    path.chmod(0)
    with pytest.raises(SuiteError, match="permission denied"):
        load_suite(path)


def test_unsupported_suffix(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: demo\n", "suite.txt")
    assert error.message == "unsupported file type '.txt': use .yaml, .yml or .json"


@pytest.mark.parametrize("text", ["", "  \n\n", "# only a comment\n", "---\n", "null\n"])
def test_empty_yaml(tmp_path: Path, text: str) -> None:
    error = error_of(tmp_path, text)
    assert (error.message, error.line) == ("the file is empty", None)


def test_empty_json(tmp_path: Path) -> None:
    assert error_of(tmp_path, "\n", "suite.json").message == "the file is empty"


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    error = error_of(tmp_path, "# suites\n- name: demo\n")
    assert (error.line, error.column, error.field) == (2, 1, None)
    assert error.message == "the top level must be a mapping of suite fields (got a list)"


def test_top_level_scalar_in_json(tmp_path: Path) -> None:
    error = error_of(tmp_path, '\n  "demo"\n', "suite.json")
    assert (error.line, error.column) == (2, 3)
    assert error.message == "the top level must be a mapping of suite fields (got 'demo')"


def test_yaml_syntax_error(tmp_path: Path) -> None:
    text = "name: demo\nscenarios:\n  - id: x\n    script: [{say: hi}\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (5, 1, None)
    assert "expected ',' or ']'" in error.message
    assert "while parsing a flow sequence at line 4" in error.message


def test_yaml_bad_indentation(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: demo\n  description: x\n")
    assert (error.line, error.column) == (2, 14)
    assert error.message == "mapping values are not allowed here"


def test_yaml_unclosed_quote(tmp_path: Path) -> None:
    error = error_of(tmp_path, 'name: "demo\nscenarios: []\n')
    assert (error.line, error.column) == (3, 1)
    assert error.message == (
        "found unexpected end of stream (while scanning a quoted scalar at line 1)"
    )


def test_yaml_several_documents(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: a\n---\nname: b\n")
    assert (error.line, error.column) == (2, 1)
    assert "expected a single document" in error.message


def test_yaml_unknown_tag(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: !!python/name:os.system x\nscenarios: []\n")
    assert (error.line, error.column) == (1, 7)
    assert "could not determine a constructor" in error.message


def test_unprintable_character(tmp_path: Path) -> None:
    error = error_of(tmp_path, "name: demo\nscenarios:\n  - id: x\x07\n")
    assert (error.line, error.column) == (3, 10)
    assert error.message == "special characters are not allowed (found #x0007)"


def test_invalid_utf8(tmp_path: Path) -> None:
    error = error_of(tmp_path, b"name: demo\ndescription: caf\xe9\n")
    assert (error.line, error.column) == (2, 17)
    assert error.message == "not valid UTF-8 text (byte 0xe9)"


def test_duplicate_top_level_key(tmp_path: Path) -> None:
    text = "name: demo\nscenarios: [{id: x}]\nname: other\n"
    error = error_of(tmp_path, text)
    assert (error.line, error.column, error.field) == (3, 1, "name")
    assert error.message == "duplicate key 'name' (first at line 1)"
    assert error.more == 0


def test_nested_duplicate_keys_report_the_first_with_a_count(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - say: hi
        say: hello
  - id: y
    id: z
"""
    error = error_of(tmp_path, text)
    assert (error.line, error.column) == (6, 9)
    assert error.field == "scenarios[0].script[0].say"
    assert error.message == "duplicate key 'say' (first at line 5)"
    assert error.more == 1


def test_keys_that_differ_in_type_are_not_duplicates(tmp_path: Path) -> None:
    text = "name: demo\nbackend:\n  orders: {'1': {a: 1}, '2': {a: 2}}\nscenarios: [{id: x}]\n"
    assert load_suite(_write(tmp_path, text)).suite.backend["orders"]["2"] == {"a": 2}


def test_merge_key_overrides_are_not_duplicates(tmp_path: Path) -> None:
    text = "name: demo\nscenarios:\n  - <<: {id: base, description: d}\n    id: real\n"
    assert load_suite(_write(tmp_path, text)).suite.scenarios[0].id == "real"


def test_json_syntax_error(tmp_path: Path) -> None:
    error = error_of(tmp_path, '{"name": "demo",\n "scenarios": [}\n', "suite.json")
    assert (error.line, error.column, error.field) == (2, 16, None)
    assert error.message == "Expecting value"


def test_json_duplicate_key(tmp_path: Path) -> None:
    text = '{"name": "demo",\n "scenarios": [{"id": "x", "script": [],\n   "id": "y"}]}\n'
    error = error_of(tmp_path, text, "suite.json")
    assert (error.line, error.column) == (3, 4)
    assert error.field == "scenarios[0].id"
    assert error.message == "duplicate key 'id' (first at line 2)"


def _write(folder: Path, text: str) -> Path:
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path
