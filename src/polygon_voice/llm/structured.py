"""Structured output: the three forms a server may take it in, and validation on arrival.

Servers differ in how they take a JSON Schema (docs/llm.md, "Server kinds"):

* `json_schema`: `response_format: {"type": "json_schema", "json_schema": {name, schema}}`,
  OpenAI's form, taken by hosted APIs, vLLM, Ollama and recent llama.cpp servers;
* `json_object`: `response_format: {"type": "json_object", "schema": {...}}`, the form older
  llama.cpp servers and llama-cpp-python take (they refuse the first);
* `prompt`: no `response_format` at all; the schema is described in a system message.

Whatever the form, the schema *sent* keeps only what grammar-constrained decoding handles
(`sent_schema`), and the answer is checked against the *full* schema here (`parse_structured`),
so every constraint still holds (RUB-4: a score of 1023984760000000 is refused).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel, ValidationError

from polygon_voice.llm.errors import LLMFormatError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

# A JSON Schema (a mapping) or a pydantic model class to validate against.
ResponseSchema = type[BaseModel] | Mapping[str, Any]
StructuredForm = Literal["json_schema", "json_object", "prompt"]
StructuredSetting = Literal["auto", "json_schema", "json_object", "prompt"]
FORMS: tuple[StructuredForm, ...] = get_args(StructuredForm)
"""The forms in the order `auto` tries them: the most constrained first."""

# Keywords no grammar compiler handles well: a string length bound becomes a repetition
# `{0,2000}` that llama.cpp's grammar compiler expands (2000 `maxLength` killed a server),
# and `pattern` / `format` are either refused or silently ignored. Dropped in every form.
_STRING_KEYWORDS = frozenset({"maxLength", "minLength", "pattern", "format"})
# Numeric bounds: json_schema servers (xgrammar, outlines, OpenAI) take them; llama.cpp's
# json_object grammar only bounds integers in some versions and may reject the rest.
_NUMBER_KEYWORDS = frozenset(
    {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
)
_DROPPED: dict[StructuredForm, frozenset[str]] = {
    "json_schema": _STRING_KEYWORDS,
    "json_object": _STRING_KEYWORDS | _NUMBER_KEYWORDS,
    "prompt": frozenset(),  # only read by the model, never compiled: described in full
}
# Where a keyword's value is a schema, a list of schemas or a map of name -> schema.
_ONE = frozenset(
    {"items", "additionalProperties", "contains", "propertyNames", "then", "else",
     "unevaluatedItems", "unevaluatedProperties", "additionalItems"}
)  # fmt: skip
_MANY = frozenset({"anyOf", "allOf", "prefixItems"})
_NAMED = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
# Kept verbatim: loosening the schema inside `not` or `if` would make the whole one stricter.
_VERBATIM = frozenset({"not", "if"})
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)


def full_schema(schema: ResponseSchema) -> dict[str, Any]:
    """The schema as JSON Schema: a pydantic model's own, or a copy of the mapping."""
    return _model_schema(schema) if isinstance(schema, type) else dict(schema)


def sent_schema(schema: Mapping[str, Any], form: StructuredForm) -> dict[str, Any]:
    """`schema` without the keywords `form`'s servers cannot compile (see _DROPPED).

    Only ever looser than `schema`: everything the full schema accepts, this one accepts
    (tests/llm/test_structured_forms.py checks it with generated values). `oneOf` becomes
    `anyOf`, since two branches loosened alike could both match where one did.
    """
    loosened: dict[str, Any] = _loosened(schema, _DROPPED[form])
    return loosened


def _loosened(node: Any, dropped: frozenset[str]) -> Any:
    if not isinstance(node, Mapping):
        return node  # `true` / `false` schemas
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in dropped and not isinstance(value, Mapping):
            continue  # a keyword; a property *named* "format" lives under "properties"
        if key == "oneOf":
            out["anyOf"] = [_loosened(item, dropped) for item in value]
        elif key in _ONE:
            out[key] = _loosened(value, dropped)
        elif key in _MANY and isinstance(value, Sequence):
            out[key] = [_loosened(item, dropped) for item in value]
        elif key in _NAMED and isinstance(value, Mapping):
            out[key] = {name: _loosened(sub, dropped) for name, sub in value.items()}
        else:
            out[key] = value  # _VERBATIM, enum, const, default, required, ...
    return out


def response_format(
    schema: ResponseSchema, name: str | None = None, form: StructuredForm = "json_schema"
) -> dict[str, Any] | None:
    """The `response_format` field of `form` for `schema` (None for the prompt form)."""
    if form == "prompt":
        return None
    if isinstance(schema, type):
        sent = _sent_model_schema(schema, form)
    else:
        sent = sent_schema(schema, form)
    if form == "json_object":
        return {"type": "json_object", "schema": sent}
    if isinstance(schema, type):
        name = name or schema.__name__
    # Not "strict": OpenAI's strict mode rejects ordinary schemas (optional fields, defaults).
    return {"type": "json_schema", "json_schema": {"name": name or "response", "schema": sent}}


def schema_instruction(schema: ResponseSchema) -> str:
    """The prompt form's system note: the whole schema, since only the model reads it."""
    described = json.dumps(full_schema(schema), ensure_ascii=False, sort_keys=True)
    return (
        "Answer with one JSON value and nothing else (no prose, no code fence). "
        f"It must match this JSON Schema: {described}"
    )


def with_instruction(messages: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """`messages` with `note` added to the first system message (or one put first).

    Not a second system message: strict chat templates accept only one, and only first.
    """
    if messages and messages[0].get("role") == "system":
        first = messages[0]
        content = first.get("content")
        if isinstance(content, str):
            return [{**first, "content": f"{content}\n\n{note}"}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def parse_structured(
    text: str | None, schema: ResponseSchema, form: StructuredForm = "json_schema"
) -> Any:
    """The answer as JSON, validated; a pydantic model instance when a model class was given."""
    raw = text or ""
    try:
        # strict=False: raw control characters inside strings, as llama.cpp's grammar allows
        # them (recorded: a persona's name with a line break in it), are read, not refused.
        value = json.loads(_unfenced(raw) if form == "prompt" else raw, strict=False)
    except (ValueError, RecursionError) as exc:  # nested deeper than the parser goes
        raise LLMFormatError(f"the answer is not JSON: {exc}", raw=raw) from None
    if isinstance(schema, type):
        try:
            return schema.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "(top)"
            raise LLMFormatError(
                f"the answer does not match {schema.__name__}: {where}: {first['msg']}", raw=raw
            ) from None
    error = next(iter(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value)), None)
    if error is not None:
        where = ".".join(str(part) for part in error.absolute_path) or "(top)"
        raise LLMFormatError(
            f"the answer does not match the schema: {where}: {error.message}", raw=raw
        )
    return value


def _unfenced(raw: str) -> str:
    # Without a grammar, models like to wrap JSON in a Markdown fence: read what is inside.
    text = raw.strip()
    match = _FENCE.match(text)
    return match.group(1) if match else text


@lru_cache(maxsize=64)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    # Building a model's schema costs ~0.1 ms; a judge asks for the same one every call.
    return model.model_json_schema()


@lru_cache(maxsize=64)
def _sent_model_schema(model: type[BaseModel], form: StructuredForm) -> dict[str, Any]:
    # A caller asks for the same loosened schema every turn: built once per model and form
    # (shared, never changed: a request body is only serialised).
    return sent_schema(_model_schema(model), form)


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Draft202012Validator:
    # Imported here: the settings import this module, and jsonschema takes ~50 ms to load.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema_json))
