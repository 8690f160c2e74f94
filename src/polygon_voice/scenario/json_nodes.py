"""Build a YAML-style node tree with positions from JSON text that `json` already accepted.

PyYAML cannot stand in for this: it reads `1e5` as a string and rejects tab indentation, both
valid JSON. So `json` gives the data and this small scanner gives the line of every value.
"""

from __future__ import annotations

import bisect
import json
import re

import yaml

from polygon_voice.scenario.locate import STR_TAG

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_ATOM_TAG = "tag:polygon,2024:json-atom"  # numbers, true/false/null: only their place matters


class _Composer:
    def __init__(self, text: str) -> None:
        self._text = text
        self._pos = 0
        # json counts lines by "\n" only; doing the same keeps our lines equal to its errors'.
        self._starts = [0, *(m.end() for m in re.finditer("\n", text))]

    def mark(self, index: int) -> yaml.Mark:
        line = bisect.bisect_right(self._starts, index) - 1
        return yaml.Mark("<json>", index, line, index - self._starts[line], None, 0)

    def _skip_space(self) -> None:
        match = _SPACE.match(self._text, self._pos)
        assert match is not None  # the pattern matches the empty string
        self._pos = match.end()

    def _expect(self, char: str) -> None:
        self._skip_space()
        assert self._text[self._pos] == char, "text was validated by json first"
        self._pos += 1

    def value(self) -> yaml.Node:
        self._skip_space()
        start = self._pos
        char = self._text[start]
        if char == "{":
            return self._object(start)
        if char == "[":
            return self._array(start)
        # Strings, numbers, true/false/null: let json itself find where the token ends.
        value, self._pos = _DECODER.raw_decode(self._text, start)
        tag = STR_TAG if isinstance(value, str) else _ATOM_TAG
        text = value if isinstance(value, str) else self._text[start : self._pos]
        return yaml.ScalarNode(tag, text, self.mark(start), self.mark(self._pos))

    def _object(self, start: int) -> yaml.MappingNode:
        self._pos += 1
        pairs: list[tuple[yaml.Node, yaml.Node]] = []
        self._skip_space()
        while self._text[self._pos] != "}":
            if pairs:
                self._expect(",")
            key = self.value()
            self._expect(":")
            pairs.append((key, self.value()))
            self._skip_space()
        self._pos += 1
        return yaml.MappingNode(_MAP_TAG, pairs, self.mark(start), self.mark(self._pos))

    def _array(self, start: int) -> yaml.SequenceNode:
        self._pos += 1
        items: list[yaml.Node] = []
        self._skip_space()
        while self._text[self._pos] != "]":
            if items:
                self._expect(",")
            items.append(self.value())
            self._skip_space()
        self._pos += 1
        return yaml.SequenceNode(_SEQ_TAG, items, self.mark(start), self.mark(self._pos))


def compose_json(text: str) -> yaml.Node:
    """The node tree of JSON text that `json.loads` accepted (duplicate keys kept)."""
    return _Composer(text).value()
