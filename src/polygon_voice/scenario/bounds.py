"""Checks on a parsed node tree before it becomes data: aliases, depth, numbers, text sizes.

PyYAML shares the object an alias points at, so a 1 KB "alias bomb" loads in microseconds and
only explodes later, when the data is copied or written as JSON (gigabytes, minutes). Walking
the node graph once, counting each shared node as often as it is used, finds that at load.
The walk is iterative: a file nested too deeply must not crash the checker itself.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from polygon_voice.model import Suite
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.limits import Limits
from polygon_voice.scenario.locate import STR_TAG, mapping_entry, position, render_path

INT_TAG = "tag:yaml.org,2002:int"
FLOAT_TAG = "tag:yaml.org,2002:float"
JSON_ATOM_TAG = "tag:polygon,2024:json-atom"  # numbers, true/false/null of a JSON file
_MERGE_TAG = "tag:yaml.org,2002:merge"
_JSON_NON_FINITE = {"NaN", "Infinity", "-Infinity"}

PathParts = tuple[tuple[object, bool], ...]


@dataclass
class _Walk:
    file: str
    limits: Limits
    sizes: dict[int, tuple[int, int]]  # id(node) -> (values when expanded, depth)
    open_nodes: set[int]  # nodes whose children are being walked: an alias to one is a cycle

    def fail(self, node: yaml.Node, path: PathParts, message: str) -> SuiteError:
        line, column = position(node)
        return SuiteError(self.file, message, line=line, column=column, field=render_path(path))


def check_nodes(root: yaml.Node, file: str, limits: Limits) -> None:
    """Raise a SuiteError at the first node that breaks a bound of `limits`."""
    walk = _Walk(file, limits, {}, set())
    # (node, its path, its children once they are pushed: None on the way down)
    stack: list[tuple[yaml.Node, PathParts, list[yaml.Node] | None]] = [(root, (), None)]
    while stack:
        node, path, kids = stack.pop()
        if kids is not None:
            _close(walk, node, path, kids)
            continue
        if id(node) in walk.sizes:
            continue  # an alias to a node already measured
        if id(node) in walk.open_nodes:
            raise walk.fail(node, path, "a YAML alias refers to its own anchor (recursive data)")
        _check_scalar(walk, node, path)
        walk.open_nodes.add(id(node))
        children = _children(node, path)
        stack.append((node, path, [child for child, _ in children]))
        stack.extend((child, at, None) for child, at in reversed(children))


def _close(walk: _Walk, node: yaml.Node, path: PathParts, kids: list[yaml.Node]) -> None:
    walk.open_nodes.discard(id(node))
    measured = [walk.sizes[id(child)] for child in kids]
    size = 1 + sum(values for values, _ in measured)
    depth = 1 + max((d for _, d in measured), default=0) if _is_collection(node) else 0
    walk.sizes[id(node)] = (size, depth)
    limits = walk.limits
    if depth > limits.max_depth:
        message = f"nested {depth} levels deep; at most {limits.max_depth} (POLYGON_MAX_DEPTH)"
        raise walk.fail(node, path, message)
    # Nodes measured so far are at least the distinct nodes below this one, so the difference
    # is a lower bound of what aliases add: exceeding it is certain, and found early.
    if size - len(walk.sizes) > limits.max_alias_nodes:
        message = (
            f"YAML aliases here expand to more than {limits.max_alias_nodes:,} values "
            "(POLYGON_MAX_ALIAS_NODES)"
        )
        raise walk.fail(node, path, message)


def _is_collection(node: yaml.Node) -> bool:
    return isinstance(node, yaml.SequenceNode | yaml.MappingNode)


def _children(node: yaml.Node, path: PathParts) -> list[tuple[yaml.Node, PathParts]]:
    out: list[tuple[yaml.Node, PathParts]] = []
    if isinstance(node, yaml.SequenceNode):
        out = [(item, (*path, (i, True))) for i, item in enumerate(node.value)]
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else "?"
            out.append((key, path))
            out.append((value, path if key.tag == _MERGE_TAG else (*path, (name, False))))
    return out


def _check_scalar(walk: _Walk, node: yaml.Node, path: PathParts) -> None:
    if not isinstance(node, yaml.ScalarNode):
        return
    text = str(node.value)
    limits = walk.limits
    if node.tag == STR_TAG and len(text) > limits.max_text_chars:
        message = (
            f"a text of {len(text):,} characters; at most {limits.max_text_chars:,} "
            "(POLYGON_MAX_TEXT_CHARS)"
        )
        raise walk.fail(node, path, message)
    if node.tag in (INT_TAG, JSON_ATOM_TAG) and _digits(node, text) > limits.max_int_digits:
        message = (
            f"a number of {_digits(node, text):,} digits; at most {limits.max_int_digits:,} "
            "(POLYGON_MAX_INT_DIGITS)"
        )
        raise walk.fail(node, path, message)
    if not _finite(node, text):
        message = f"not a finite number (got {text}): times, rates and values must be finite"
        raise walk.fail(node, path, message)


def _digits(node: yaml.ScalarNode, text: str) -> int:
    """The decimal digits of the number: a short text is never long; hex is read to count."""
    if len(text) <= 64:
        return len(text)
    written = sum(char.isdigit() for char in text)
    if node.tag != INT_TAG or not text.lstrip("+-").startswith("0"):
        return written
    # 0x/0o/0b integers: no text limit applies to reading them, but writing them does.
    try:
        value = SafeConstructor().construct_yaml_int(node)
    except (ConstructorError, ValueError):
        return written
    return len(str(abs(value))) if value.bit_length() < 14_000 else value.bit_length() * 3 // 10


def _finite(node: yaml.ScalarNode, text: str) -> bool:
    if node.tag == JSON_ATOM_TAG:
        if text in _JSON_NON_FINITE:
            return False
        try:
            return math.isfinite(float(text))
        except ValueError:
            return True  # true, false, null
    if node.tag != FLOAT_TAG:
        return True
    try:
        value = SafeConstructor().construct_yaml_float(node)
    except (ConstructorError, ValueError):
        return True  # not a number after all: validation says what is wrong with it
    return math.isfinite(value)


def check_suite_size(suite: Suite, root: yaml.Node, file: str, limits: Limits) -> None:
    """Refuse more repeats, scenarios or calls than the limits allow, at the field's line."""
    calls = len(suite.scenarios) * suite.repeat
    problems = (
        ("repeat", "repeats", suite.repeat, limits.max_repeat, "POLYGON_MAX_REPEAT"),
        ("scenarios", "scenarios", len(suite.scenarios), limits.max_scenarios,
         "POLYGON_MAX_SCENARIOS"),
        ("repeat", "calls (scenarios x repeat)", calls, limits.max_calls, "POLYGON_MAX_CALLS"),
    )  # fmt: skip
    for field, what, value, limit, variable in problems:
        if value <= limit:
            continue
        entry = mapping_entry(root, field)
        line, column = position(entry[1]) if entry is not None else (None, None)
        message = f"{value:,} {what}: over the limit of {limit:,} (raise it with {variable})"
        raise SuiteError(file, message, line=line, column=column, field=field)


_ATTR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def agent_spec_problem(spec: str) -> str | None:
    """Why `spec` cannot name an agent, by its shape alone; None when it may (docs/agents.md)."""
    spec = spec.strip()
    if not spec:
        return "an agent name, 'package.module:attr' or 'path/to/file.py:attr' (got '')"
    if spec.startswith(("prompt:", "http://", "https://")):
        return None if spec.partition(":")[2].strip("/") else f"{spec!r} names no file or host"
    if ":" not in spec:
        return None  # a registered name: resolving it says whether it exists
    target, _, attr = spec.rpartition(":")
    if not target.strip() or not _ATTR.match(attr):
        return (
            f"{spec!r} is not 'package.module:attr' or 'path/to/file.py:attr' "
            "(both parts needed; attr a Python name)"
        )
    return None


def check_agent_spec(suite: Suite, root: yaml.Node, file: str) -> None:
    """Refuse a suite `agent:` that no agent could have, at its line."""
    problem = agent_spec_problem(suite.agent) if suite.agent is not None else None
    if problem is None:
        return
    entry = mapping_entry(root, "agent")
    line, column = position(entry[1]) if entry is not None else (None, None)
    raise SuiteError(file, problem, line=line, column=column, field="agent")
