"""Find the YAML node (and so the line) that a pydantic error location points at."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import yaml
from yaml.constructor import SafeConstructor

Part = int | str
STR_TAG = "tag:yaml.org,2002:str"
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class Step:
    """One move from a node into a child: `key` is the key node for mappings, None for lists."""

    index: int  # position of the part in the pydantic loc
    part: object
    key: yaml.Node | None
    node: yaml.Node


@dataclass(frozen=True)
class Match:
    """How a loc maps onto the data: the steps taken and the loc parts that are not in the data.

    Parts not in the data are pydantic's union branch labels ('float', 'tagged-union[...]',
    a discriminator tag such as 'stateful'): they name a choice of type, not a place.
    """

    steps: tuple[Step, ...]
    labels: tuple[int, ...]

    def node(self, root: yaml.Node) -> yaml.Node:
        """The deepest node reached (the root for an empty path)."""
        return self.steps[-1].node if self.steps else root

    def path(self) -> str | None:
        """The dotted path of the node reached, e.g. `scenarios[2].script[0].barge_in`."""
        return render_path((step.part, step.key is None) for step in self.steps)


def render_path(parts: Iterable[tuple[object, bool]]) -> str | None:
    """Join (part, is_list_index) pairs into `a.b[0].c`; odd keys go in brackets."""
    text = ""
    for part, is_index in parts:
        if is_index:
            text += f"[{part}]"
        elif isinstance(part, str) and _PLAIN_KEY.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text or None


def position(node: yaml.Node) -> tuple[int | None, int | None]:
    """1-based line and column of a node, or (None, None) when it has no mark."""
    mark = node.start_mark
    if mark is None:
        return None, None
    return mark.line + 1, mark.column + 1


def key_value(node: yaml.Node) -> object:
    """The Python value of a mapping key node, as the loaded data holds it."""
    if not isinstance(node, yaml.ScalarNode):
        return None  # the safe loader rejects list/mapping keys before we get here
    if node.tag == STR_TAG:
        return node.value
    try:
        return SafeConstructor().construct_object(node)
    except yaml.YAMLError:
        return node.value


def child(node: yaml.Node, part: object) -> tuple[yaml.Node | None, yaml.Node] | None:
    """The (key node, value node) that `part` selects in `node`, or None if there is none."""
    if isinstance(node, yaml.MappingNode):
        # The last occurrence wins, as in the loaded dict (merge keys come first).
        for key_node, value_node in reversed(node.value):
            value = key_value(key_node)
            if type(value) is type(part) and value == part:
                return key_node, value_node
        return None
    if isinstance(node, yaml.SequenceNode) and type(part) is int and 0 <= part < len(node.value):
        item: yaml.Node = node.value[part]
        return None, item
    return None


def match_loc(root: yaml.Node, loc: tuple[Part, ...]) -> Match:
    """Walk `loc` through the node tree, treating as few parts as possible as union labels."""
    memo: dict[tuple[int, int], Match] = {}

    def walk(node: yaml.Node, i: int) -> Match:
        if i == len(loc):
            return Match((), ())
        cached = memo.get((id(node), i))
        if cached is not None:
            return cached
        rest = walk(node, i + 1)
        best = Match(rest.steps, (i, *rest.labels))
        found = child(node, loc[i])
        if found is not None:
            key, value = found
            deeper = walk(value, i + 1)
            taken = Match((Step(i, loc[i], key, value), *deeper.steps), deeper.labels)
            # A key that exists is data unless reading it as a label explains more of the loc
            # (RulesStub's tag 'rules' next to its field 'rules').
            if len(taken.labels) <= len(best.labels):
                best = taken
        memo[(id(node), i)] = best
        return best

    return walk(root, 0)


def mapping_entry(node: yaml.Node, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    """The (key node, value node) of a string key in a mapping node."""
    found = child(node, key)
    if found is None or found[0] is None:
        return None
    return found[0], found[1]
