"""Read a suite file and parse it (YAML or JSON) into data plus a node tree with positions."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from polygon_voice.scenario.bounds import check_nodes
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.json_nodes import compose_json
from polygon_voice.scenario.limits import Limits
from polygon_voice.scenario.locate import key_value, position, render_path
from polygon_voice.scenario.messages import brief
from polygon_voice.textsafe import storable_file_data

FORMATS = {".yaml": "yaml", ".yml": "yaml", ".json": "json"}
_MERGE_TAG = "tag:yaml.org,2002:merge"
# Strings (skipped whole), brackets and numbers: enough to bound JSON before `json` recurses.
_YAML_TOKEN = re.compile(
    r"(?P<quoted>\"(?:[^\"\\]|\\.)*\"|'(?:[^']|'')*')"
    r"|(?P<comment>(?<![^\s])#[^\n]*)"
    r"|(?P<open>[\[{])|(?P<close>[\]}])"
    r"|(?P<indicator>(?:(?:^|(?<=\s))[-?]|:)(?=\s)|,)"
    r"|(?P<newline>\n[ \t]*)"
    r"|(?P<space>[ \t]+)"
    r"|(?P<other>[^\s\[\]{}\"'#,:]+|.)",
    re.MULTILINE,
)
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?[0-9][0-9.eE+-]*')


@dataclass(frozen=True)
class Document:
    """A parsed suite file: the data to validate and the node tree that knows every line."""

    data: dict[str, Any]
    root: yaml.Node


def read_file(path: Path, file: str, limits: Limits | None = None) -> bytes:
    """The file's bytes, or a SuiteError saying plainly why they cannot be read."""
    limits = limits or Limits.from_env()
    try:
        # Read at most one byte past the limit: a device such as /dev/zero never ends.
        with path.open("rb") as stream:
            raw = stream.read(limits.max_file_bytes + 1)
    except FileNotFoundError:
        raise SuiteError(file, "file not found") from None
    except IsADirectoryError:
        raise SuiteError(file, "is a directory, not a suite file") from None
    except PermissionError:
        raise SuiteError(file, "permission denied") from None
    except OSError as exc:
        raise SuiteError(file, f"cannot read the file: {exc.strerror or exc}") from None
    if len(raw) > limits.max_file_bytes:
        message = f"over {limits.max_file_bytes:,} bytes (raise it with POLYGON_MAX_FILE_BYTES)"
        raise SuiteError(file, message)
    return raw


def read_data(path: Path, file: str, limits: Limits | None = None) -> tuple[object, yaml.Node]:
    """Any YAML or JSON file Polygon reads (JSON by a `.json` suffix), under the same bounds.

    The data may be of any shape (None for an empty file); the caller checks it.
    """
    limits = limits or Limits.from_env()
    raw = read_file(path, file, limits)
    kind = "json" if path.suffix.lower() == ".json" else "yaml"
    text = _decode(raw, file)
    if not text.strip():
        return None, yaml.ScalarNode("tag:yaml.org,2002:null", "")
    parse = _parse_json if kind == "json" else _parse_yaml
    data, root = parse(text, file, limits)
    return storable_file_data(data, file), root  # no lone surrogate reaches a store (textsafe)


def parse_document(raw: bytes, suffix: str, file: str, limits: Limits | None = None) -> Document:
    """Parse the bytes of a `.yaml`, `.yml` or `.json` file whose top level is a mapping."""
    limits = limits or Limits.from_env()
    kind = FORMATS.get(suffix.lower())
    if kind is None:
        shown = repr(suffix) if suffix else "(none)"
        raise SuiteError(file, f"unsupported file type {shown}: use .yaml, .yml or .json")
    text = _decode(raw, file)
    if not text.strip():
        raise SuiteError(file, "the file is empty")
    if kind == "json":
        data, root = _parse_json(text, file, limits)
    else:
        data, root = _parse_yaml(text, file, limits)
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


def _parse_json(text: str, file: str, limits: Limits) -> tuple[object, yaml.Node]:
    _scan_json(text, file, limits)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuiteError(file, exc.msg, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise SuiteError(file, "the JSON is nested too deeply") from None
    root = compose_json(text)
    check_nodes(root, file, limits)
    _check_duplicates(root, file)
    return data, root


def _scan_json(text: str, file: str, limits: Limits) -> None:
    """Refuse nesting and numbers past the limits before `json` (recursive) reads them."""
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if depth > limits.max_depth:
                message = f"nested deeper than {limits.max_depth} levels (POLYGON_MAX_DEPTH)"
                raise _error_at(text, token.start(), file, message)
        elif first in "]}":
            depth -= 1
        elif first != '"' and len(token.group()) > limits.max_int_digits:
            message = (
                f"a number of {len(token.group()):,} digits; at most {limits.max_int_digits:,} "
                "(POLYGON_MAX_INT_DIGITS)"
            )
            raise _error_at(text, token.start(), file, message)


def _error_at(text: str, index: int, file: str, message: str) -> SuiteError:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return SuiteError(file, message, line=line, column=column)


def _scan_yaml_flow(text: str, file: str, limits: Limits) -> None:
    """Refuse flow nesting (`[[[...`) past the limit before PyYAML sees it.

    PyYAML's scanner reads ahead through every open flow collection and rechecks each one per
    token: 1,000 levels cost it half a second, 5,000 a minute. Only a bracket that opens a
    value (after a line start, `- `, `: `, `, `, `? ` or another bracket) or sits inside an
    open collection counts; quoted text and comments are skipped.
    """
    depth = 0
    opens_value = True  # at a place where a flow collection may start
    for token in _YAML_TOKEN.finditer(text):
        kind = token.lastgroup
        if kind in ("space", "comment"):
            continue
        if kind == "open" and (depth > 0 or opens_value):
            depth += 1
            if depth > limits.max_depth:
                message = f"nested deeper than {limits.max_depth} levels (POLYGON_MAX_DEPTH)"
                raise _error_at(text, token.start(), file, message)
        elif kind == "close" and depth > 0:
            depth -= 1
        opens_value = kind in ("open", "indicator", "newline")


def _parse_yaml(text: str, file: str, limits: Limits) -> tuple[object, yaml.Node]:
    _scan_yaml_flow(text, file, limits)
    try:
        return _load_yaml(text, file, limits)
    except yaml.MarkedYAMLError as exc:
        raise _marked_error(exc, file) from None
    except yaml.reader.ReaderError as exc:
        raise _reader_error(exc, text, file) from None


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nesting past the limit while it composes (recursively)."""

    def __init__(self, text: str, file: str, limits: Limits) -> None:
        super().__init__(text)
        self._file = file
        self._max_depth = limits.max_depth
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                message = f"nested deeper than {self._max_depth} levels (POLYGON_MAX_DEPTH)"
                raise SuiteError(self._file, message, line=mark.line + 1, column=mark.column + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _load_yaml(text: str, file: str, limits: Limits) -> tuple[object, yaml.Node]:
    loader = _BoundedLoader(text, file, limits)  # already checks for unprintable characters
    try:
        root = loader.get_single_node()
        if root is None:  # only comments
            raise SuiteError(file, "the file is empty")
        # Before constructing: aliases expand and numbers are read during construction.
        check_nodes(root, file, limits)
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
