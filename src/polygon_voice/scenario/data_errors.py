"""One-line errors for the smaller files (probes, rubrics, agent configs) read with `read_data`.

They read like a suite's errors: `file:line:col: field: message`, the line found from the
node tree, and an unknown key answered with the nearest allowed one.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

import yaml

from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.locate import Part, match_loc, position


def located(file: str, root: yaml.Node | None, loc: tuple[Part, ...], message: str) -> str:
    """`file:line:col: field: message` for the node at `loc` (as far as it exists)."""
    field = _render(loc)
    if root is None:
        return str(SuiteError(file, message, field=field))
    # A missing field's loc goes one step past the data: its parent mapping is the place.
    line, column = position(match_loc(root, loc).node(root))
    return str(SuiteError(file, message, line=line, column=column, field=field))


def _render(loc: tuple[Part, ...]) -> str | None:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or None


def unknown_key(name: object, allowed: Collection[str]) -> str:
    """ "unknown field 'gatse' (did you mean 'gates'?)", else the allowed names."""
    message = f"unknown field {name!r}"
    close = difflib.get_close_matches(str(name), list(allowed), n=1, cutoff=0.6)
    if close:
        return f"{message} (did you mean {close[0]!r}?)"
    return f"{message} (allowed: {', '.join(sorted(allowed))})"


def first_unknown_key(data: Mapping[Any, object], allowed: Collection[str]) -> Part | None:
    """The first key of `data` that is not allowed, in file order; None when all are."""
    key = next((key for key in data if not isinstance(key, str) or key not in allowed), None)
    return key if key is None or isinstance(key, int | str) else str(key)
