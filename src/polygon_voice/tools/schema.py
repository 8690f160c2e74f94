"""Argument checking against a tool's JSON Schema, compiled once per suite.

The schema's own ``$schema`` picks the draft; without one, Draft 2020-12 is used. An unknown
``$schema`` or an invalid schema is a `ToolConfigError`. Each argument error reads
``"<JSON path>: <message>"``, e.g. ``"$.date: 5 is not of type 'string'"`` or
``"$: 'date' is a required property"``, sorted by path for a stable order.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from polygon_voice.tools.errors import ToolConfigError


class ArgumentChecker:
    """A compiled JSON Schema for one tool's arguments."""

    __slots__ = ("_validator",)

    def __init__(self, tool: str, schema: Mapping[str, Any]) -> None:
        cls = _validator_class(tool, schema)
        try:
            cls.check_schema(dict(schema))
        except SchemaError as exc:
            raise ToolConfigError(
                f"tool {tool!r}: 'parameters' is not a valid JSON Schema: {exc.message}"
            ) from None
        self._validator: Validator = cls(dict(schema))

    def errors(self, args: Mapping[str, Any]) -> list[str]:
        """Readable errors of the arguments, each naming the JSON path; empty when valid."""
        found = [(error.json_path, error.message) for error in self._validator.iter_errors(args)]
        return [f"{path}: {message}" for path, message in sorted(found)]


def _validator_class(tool: str, schema: Mapping[str, Any]) -> type[Validator]:
    if "$schema" not in schema:
        return Draft202012Validator
    # jsonschema only warns about an unknown $schema and falls back to its latest draft.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return validator_for(schema)
        except DeprecationWarning:
            raise ToolConfigError(
                f"tool {tool!r}: unknown JSON Schema draft {schema['$schema']!r}; "
                "use a draft jsonschema knows, e.g. https://json-schema.org/draft/2020-12/schema"
            ) from None
