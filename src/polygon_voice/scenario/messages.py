"""Wording for error messages: short renderings of bad values and of expected types."""

from __future__ import annotations

import re

_LIMIT = 40
_URL = re.compile(r"\s*For further information visit \S+")
_PREFIXES = ("Value error, ", "Assertion failed, ")

# Pydantic error types that only say "this value has the wrong type", with what was expected.
SHAPE_NOUNS = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "a boolean",
    "bool_parsing": "a boolean",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "list_type": "a list",
    "none_required": "null",
}


def brief(value: object) -> str:
    """A short rendering of a value from the file, in the file's own spelling where it differs."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str):
        return repr(value if len(value) <= _LIMIT else value[: _LIMIT - 3] + "...")
    text = str(value)
    return text if len(text) <= _LIMIT else text[: _LIMIT - 3] + "..."


def is_scalar(value: object) -> bool:
    """Whether a value is short enough to quote back in a message."""
    return not isinstance(value, dict | list | tuple | set)


def join_or(words: list[str]) -> str:
    """'a', 'a or b', 'a, b or c'."""
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def clean(message: str) -> str:
    """A pydantic message without its documentation URL and 'Value error, ' prefix."""
    message = _URL.sub("", message)
    for prefix in _PREFIXES:
        message = message.removeprefix(prefix)
    return message
