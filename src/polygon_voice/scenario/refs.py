"""Every `$ref` in a tool's argument schema resolved at load, so no call fails on one later.

jsonschema resolves a `$ref` only when an argument reaches it: an unresolvable one, or one that
leads back to itself without reading any of the data (`{$ref: '#'}` under `allOf`), would
fail every call to the tool as an error inside the engine. Both are load errors naming the
tool and the line. Only references inside the schema resolve: remote ones are never fetched.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml
from referencing import Registry, Resource, Specification
from referencing._core import Resolver  # not re-exported by the package
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012, specification_with

from polygon_voice.model import Suite
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.locate import match_loc, position

Loc = tuple[int | str, ...]
# Keywords whose subschemas apply to the same value: a cycle through only these never ends.
_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MAPS = ("dependentSchemas",)
# Keywords whose values are data, not schemas: a "$ref" key inside them is just a key.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})


@dataclass
class _Graph:
    """Subschemas by id, where each sits, and the in-place edges between them."""

    nodes: dict[int, Loc] = field(default_factory=dict)
    edges: dict[int, list[int]] = field(default_factory=dict)
    problems: list[tuple[Loc, str]] = field(default_factory=list)

    def edge(self, source: Mapping[str, Any], target: object) -> None:
        if isinstance(target, Mapping):
            self.edges.setdefault(id(source), []).append(id(target))


def schema_problems(schema: Mapping[str, Any]) -> list[tuple[Loc, str]]:
    """(place in the schema, message) for each bad `$ref`; empty when all resolve and end."""
    spec = _specification(schema)
    resource: Resource[Any] = spec.create_resource(dict(schema))
    base = resource.id() or ""
    resolver = Registry().with_resource(base, resource).resolver(base_uri=base)
    graph = _Graph()
    _walk(resource.contents, (), resolver, spec, graph, is_root=True)
    graph.problems += _cycles(graph)
    return graph.problems


def _specification(schema: Mapping[str, Any]) -> Specification[Any]:
    dialect = schema.get("$schema")
    if not isinstance(dialect, str):
        return DRAFT202012
    return specification_with(dialect, default=DRAFT202012)


def _walk(
    node: object,
    loc: Loc,
    resolver: Resolver[Any],
    spec: Specification[Any],
    graph: _Graph,
    *,
    is_root: bool = False,
) -> None:
    if isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, (*loc, i), resolver, spec, graph)
        return
    if not isinstance(node, Mapping):
        return
    graph.nodes[id(node)] = loc
    if not is_root and isinstance(node.get("$id"), str):
        resolver = resolver.in_subresource(spec.create_resource(node))
    ref = node.get("$ref")
    if isinstance(ref, str):
        _resolve(node, ref, loc, resolver, graph)
    for target in _in_place(node):
        graph.edge(node, target)
    for key, value in node.items():
        if key not in _DATA_KEYWORDS:
            _walk(value, (*loc, key), resolver, spec, graph)


def _resolve(
    node: Mapping[str, Any], ref: str, loc: Loc, resolver: Resolver[Any], graph: _Graph
) -> None:
    try:
        resolved = resolver.lookup(ref)
    except Unresolvable:
        remote = not ref.startswith("#")
        why = " (remote references are not fetched: put it under $defs)" if remote else ""
        graph.problems.append(((*loc, "$ref"), f"$ref {ref!r} cannot be resolved{why}"))
        return
    graph.edge(node, resolved.contents)


def _in_place(node: Mapping[str, Any]) -> Iterator[object]:
    for key in _IN_PLACE_LISTS:
        items = node.get(key)
        if isinstance(items, list):
            yield from items
    for key in _IN_PLACE_ONE:
        if key in node:
            yield node[key]
    for key in _IN_PLACE_MAPS:
        value = node.get(key)
        if isinstance(value, Mapping):
            yield from value.values()


def _cycles(graph: _Graph) -> list[tuple[Loc, str]]:
    """One problem per cycle of in-place edges (each passes a `$ref`: a tree has no cycles)."""
    state: dict[int, int] = {}  # 1: on the current path, 2: finished
    problems: list[tuple[Loc, str]] = []
    for start in graph.nodes:
        if start in state:
            continue
        stack: list[tuple[int, Iterator[int]]] = [(start, iter(graph.edges.get(start, [])))]
        state[start] = 1
        while stack:
            node, targets = stack[-1]
            target = next(targets, None)
            if target is None:
                state[node] = 2
                stack.pop()
            elif state.get(target) == 1:
                where = graph.nodes.get(node, ())
                problems.append(
                    (
                        (*where, "$ref") if where is not None else (),
                        "$ref leads back to itself without reading any of the arguments "
                        "(this schema would never finish checking a call)",
                    )
                )
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(graph.edges.get(target, []))))
    return problems


def check_tool_schemas(suite: Suite, root: yaml.Node, file: str) -> None:
    """Raise a SuiteError at the first bad `$ref` of any tool (with the count of the others)."""
    located: list[tuple[int, int, str, str]] = []
    for name, spec in suite.tools.items():
        for loc, message in schema_problems(spec.parameters):
            full: Loc = ("tools", name, "parameters", *loc)
            match = match_loc(root, full)
            line, column = position(match.node(root))
            located.append(
                (line or 0, column or 0, match.path() or "", f"tool {name!r}: {message}")
            )
    if not located:
        return
    line, column, path, message = min(located)
    raise SuiteError(
        file, message, line=line or None, column=column or None, field=path or None,
        more=len(located) - 1,
    )  # fmt: skip
