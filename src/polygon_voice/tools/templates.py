"""Template answers: ``{name}`` placeholders filled from the call's arguments.

* Rendering walks dicts and lists recursively; only string values are rendered, dict keys are
  left as they are.
* A string that is exactly ``"{name}"`` becomes the argument's raw value, keeping its type
  (a number stays a number, a list a list).
* Inside a longer string, a string argument is inserted as is and any other value as JSON
  (``true``, ``null``, ``[1, 2]``), so the text does not depend on Python's repr.
* A placeholder is ``{`` + an identifier + ``}``; other braces are literal text.
* A placeholder naming an argument the call does not have raises `UnknownPlaceholderError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from polygon_voice.tools.backend import clone

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class UnknownPlaceholderError(KeyError):
    """A template names an argument the call does not have."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def render(template: Any, args: Mapping[str, Any]) -> Any:
    """The template with every placeholder filled from `args` (a fresh copy, never shared)."""
    if isinstance(template, str):
        return _render_str(template, args)
    if isinstance(template, dict):
        return {key: render(value, args) for key, value in template.items()}
    if isinstance(template, list):
        return [render(item, args) for item in template]
    return template


def _render_str(text: str, args: Mapping[str, Any]) -> Any:
    if "{" not in text:
        return text
    whole = _PLACEHOLDER.fullmatch(text)
    if whole is not None:
        return clone(_lookup(whole.group(1), args))
    return _PLACEHOLDER.sub(lambda match: _as_text(_lookup(match.group(1), args)), text)


def _lookup(name: str, args: Mapping[str, Any]) -> Any:
    try:
        return args[name]
    except KeyError:
        raise UnknownPlaceholderError(name) from None


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
