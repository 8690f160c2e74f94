"""Loading good suite files: YAML and JSON, path, folder and content hash."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from polygon_voice.model import FixedStub, Suite
from polygon_voice.scenario import LoadedSuite, SuiteError, load_suite
from polygon_voice.seeding import content_hash

MINIMAL = """\
name: demo
tools:
  lookup:
    stub: {kind: fixed, returns: {ok: true}}
scenarios:
  - id: x
    script: [{say: hi}]
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_yaml_suite_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "suite.yaml", MINIMAL)
    loaded = load_suite(path)
    assert isinstance(loaded, LoadedSuite)
    assert isinstance(loaded.suite, Suite)
    assert loaded.suite.name == "demo"
    assert loaded.suite.scenarios[0].id == "x"
    assert loaded.suite.scenarios[0].script[0].say == "hi"
    assert loaded.suite.tools["lookup"].stub == FixedStub(kind="fixed", returns={"ok": True})
    assert loaded.path == path.resolve()
    assert loaded.base_dir == path.resolve().parent
    assert loaded.hash == content_hash(path.read_bytes())


def test_yml_suffix_and_string_path(tmp_path: Path) -> None:
    path = write(tmp_path, "suite.YML", MINIMAL)
    assert load_suite(str(path)).suite.name == "demo"


def test_relative_path_is_resolved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "suites").mkdir()
    write(tmp_path / "suites", "suite.yaml", MINIMAL)
    monkeypatch.chdir(tmp_path)
    loaded = load_suite("suites/suite.yaml")
    assert loaded.path == tmp_path.resolve() / "suites" / "suite.yaml"
    assert loaded.base_dir == tmp_path.resolve() / "suites"


def test_json_suite_loads(tmp_path: Path) -> None:
    # Tab indentation and 1e0 are valid JSON that PyYAML would reject or misread.
    text = (
        '{\n\t"name": "demo",\n\t"repeat": 2e0,\n'
        '\t"tools": {"lookup": {"stub": {"kind": "fixed", "returns": {"ok": true}}}},\n'
        '\t"scenarios": [{"id": "x", "script": [{"say": "hi"}]}]\n}\n'
    )
    loaded = load_suite(write(tmp_path, "suite.json", text))
    assert loaded.suite.repeat == 2
    assert loaded.suite.scenarios[0].script[0].say == "hi"


def test_json_with_bom_loads(tmp_path: Path) -> None:
    path = tmp_path / "suite.json"
    path.write_bytes(b'\xef\xbb\xbf{"name": "demo", "scenarios": [{"id": "x"}]}')
    assert load_suite(path).suite.name == "demo"


def test_anchors_and_merge_keys_are_allowed(tmp_path: Path) -> None:
    text = """\
name: demo
scenarios:
  - id: x
    script:
      - &greet {say: hi}
      - *greet
      - barge_in:
          <<: {at: mid_speech, say: wait}
          say: stop
"""
    script = load_suite(write(tmp_path, "suite.yaml", text)).suite.scenarios[0].script
    assert [step.say for step in script[:2]] == ["hi", "hi"]
    assert script[2].barge_in is not None
    assert script[2].barge_in.say == "stop"


def test_hash_is_stable_and_follows_the_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, "suite.yaml", MINIMAL)
    first = load_suite(path).hash
    assert load_suite(path).hash == first
    assert len(first) == 16
    write(tmp_path, "suite.yaml", MINIMAL + "# a comment changes the bytes\n")
    assert load_suite(path).hash != first


def test_same_bytes_in_another_file_give_the_same_hash(tmp_path: Path) -> None:
    one = load_suite(write(tmp_path, "one.yaml", MINIMAL))
    two = load_suite(write(tmp_path, "two.yaml", MINIMAL))
    assert one.hash == two.hash


def test_suite_error_text_and_attributes() -> None:
    error = SuiteError(
        "x.yaml", "bad", line=14, column=7, field="scenarios[2].script[0].barge_in.at", more=3
    )
    assert str(error) == "x.yaml:14:7: scenarios[2].script[0].barge_in.at: bad (and 3 more errors)"
    assert str(SuiteError("x.yaml", "bad", line=2, more=1)) == "x.yaml:2: bad (and 1 more error)"
    assert str(SuiteError("x.yaml", "file not found")) == "x.yaml: file not found"
    assert isinstance(error, Exception)


def test_suite_error_survives_pickling() -> None:
    error = SuiteError("x.yaml", "bad", line=3, column=1, field="name", more=2)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.file, copy.line, copy.column, copy.field, copy.more) == ("x.yaml", 3, 1, "name", 2)
    assert str(copy) == str(error)
