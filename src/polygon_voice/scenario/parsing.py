"""Read a suite file and parse it (YAML or JSON) into data plus a node tree with positions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.json_nodes import compose_json
from polygon_voice.scenario.locate import key_value, position, render_path
from polygon_voice.scenario.messages import brief

FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}
_MERGE_TAG = "tag:yaml.org,2002:merge"


@dataclass(frozen=True)
class Document:
    """A parsed suite file: the data to validate and the node tree that knows every line."""

    data: dict[str, Any]
    root: yaml.Node


def read_file(path: Path, file: str) -> bytes:
    """The file's bytes, or a SuiteError saying plainly why they cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SuiteError(file, "file not found") from None
    except IsADirectoryError:
        raise SuiteError(file, "is a directory, not a suite file") from None
    except PermissionError:
        raise SuiteError(file, "permission denied") from None
    except OSError as exc:
        raise SuiteError(file, f"cannot read the file: {exc.strerror or exc}") from None


def parse_document(raw: bytes, suffix: str, file: str) -> Document:
    """Parse the bytes of a `.yaml`, `.yml` or `.json` file whose top level is a mapping."""
    kind = FORMATS.get(suffix.lower())
    if kind is None:
        shown = repr(suffix) if suffix else "(none)"
        raise SuiteError(file, f"unsupported file type {shown}: use .yaml, .yml or .json")
    text = _decode(raw, file)
    if not text.strip():
        raise SuiteError(file, "the file is empty")
    data, root = _parse_json(text, file) if kind == "json" else _parse_yaml(text, file)
    if data is None:
        raise SuiteError(file, "the file is empty")
    if not isinstance(data, dict):
        line, column = position(root)
        message = f"the top level must be a mapping of suite fields (got {brief(data)})"
        raise SuiteError(file, message, line=line, column=column)
    return Document(data, root)


def _decode(raw: bytes, file: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        message = f"not valid UTF-8 text (byte 0x{raw[exc.start]:02x})"
        raise SuiteError(file, message, line=line, column=column) from None
    return text.removeprefix("\ufeff")


def _parse_json(text: str, file: str) -> tuple[object, yaml.Node]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuiteError(file, exc.msg, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise SuiteError(file, "the JSON is nested too deeply") from None
    root = compose_json(text)
    _check_duplicates(root, file)
    return data, root


def _parse_yaml(text: str, file: str) -> tuple[object, yaml.Node]:
    try:
        return _load_yaml(text, file)
    except yaml.MarkedYAMLError as exc:
        raise _marked_error(exc, file) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, file) from None


def _load_yaml(text: str, file: str) -> tuple[object, yaml.Node]:
    loader = yaml.SafeLoader(text)  # already checks for unprintable characters
    try:
        root = loader.get_single_node()
        if root is None:  # only comments
            raise SuiteError(file, "the file is empty")
        # Before constructing: construction folds merge keys (<<) into the mappings in place.
        _check_duplicates(root, file)
        return loader.construct_document(root), root
    finally:
        loader.dispose()


def _marked_error(exc: yaml.MarkedYAMLError, file: str) -> SuiteError:
    mark = exc.problem_mark or exc.context_mark
    message = _syntax_message(exc)
    if mark is None:
        return SuiteError(file, message)
    return SuiteError(file, message, line=mark.line + 1, column=mark.column + 1)


def _syntax_message(exc: yaml.MarkedYAMLError) -> str:
    """PyYAML's problem, with its context when there is one."""
    problem, context = exc.problem, exc.context
    if not (problem and context):
        return problem or context or "invalid YAML"
    if problem.startswith("but "):
        # "expected a single document in the stream, but found another document"
        return f"{context}, {problem}"
    where, mark = exc.context_mark, exc.problem_mark
    if where is not None and mark is not None and where.line != mark.line:
        # "found unexpected end of stream (while scanning a quoted scalar at line 1)"
        return f"{problem} ({context} at line {where.line + 1})"
    return f"{problem} ({context})"


def _reader_error(exc: yaml.reader.ReaderError, text: str, file: str) -> SuiteError:
    index = int(exc.position)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    message = f"{exc.reason} (found #x{int(exc.character):04x})"
    return SuiteError(file, message, line=line, column=column)


def _check_duplicates(root: yaml.Node, file: str) -> None:
    found = sorted(_duplicate_keys(root, file), key=lambda error: error.line or 0)
    if found:
        first = found[0]
        first.more = len(found) - 1
        raise first


def _duplicate_keys(root: yaml.Node, file: str) -> list[SuiteError]:
    """Every second (third, ...) occurrence of a key in a mapping; loaders keep only the last."""
    found: list[SuiteError] = []
    seen: set[int] = set()  # aliases share nodes, and may even form cycles

    def walk(node: yaml.Node, path: tuple[tuple[object, bool], ...]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, (*path, (index, True)))
        elif isinstance(node, yaml.MappingNode):
            found.extend(_repeated_keys(node, path, file))
            for key, value in node.value:
                # Merged (<<) keys may be overridden: that is their point, so they add no path.
                walk(value, path if key.tag == _MERGE_TAG else (*path, (key_value(key), False)))

    walk(root, ())
    return found


def _repeated_keys(
    node: yaml.MappingNode, path: tuple[tuple[object, bool], ...], file: str
) -> list[SuiteError]:
    found: list[SuiteError] = []
    first_line: dict[tuple[type, object], int | None] = {}
    for key, _ in node.value:
        if key.tag == _MERGE_TAG or not isinstance(key, yaml.ScalarNode):
            continue
        name = key_value(key)
        ident = (type(name), name)  # as the loaded dict compares keys: 1 and "1" differ
        line, column = position(key)
        if ident not in first_line:
            first_line[ident] = line
            continue
        message = f"duplicate key {name!r} (first at line {first_line[ident]})"
        field = render_path((*path, (name, False)))
        found.append(SuiteError(file, message, line=line, column=column, field=field))
    return found
