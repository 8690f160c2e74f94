"""Structured output: the `response_format` to send, and checking what came back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from polygon_voice.llm.errors import LLMFormatError

# A JSON Schema (a mapping) or a pydantic model class to validate against.
ResponseSchema = type[BaseModel] | Mapping[str, Any]


def response_format(schema: ResponseSchema, name: str | None = None) -> dict[str, Any]:
    """The `json_schema` response format for a schema mapping or a pydantic model."""
    if isinstance(schema, type):
        json_schema: Mapping[str, Any] = _model_schema(schema)
        name = name or schema.__name__
    else:
        json_schema = schema
    # Not "strict": OpenAI's strict mode rejects ordinary schemas (optional fields, defaults),
    # and vLLM, Ollama and llama.cpp follow the schema either way. The answer is validated here.
    return {
        "type": "json_schema",
        "json_schema": {"name": name or "response", "schema": dict(json_schema)},
    }


def parse_structured(text: str | None, schema: ResponseSchema) -> Any:
    """The answer as JSON, validated; a pydantic model instance when a model class was given."""
    raw = text or ""
    try:
        value = json.loads(raw)
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


@lru_cache(maxsize=64)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    # Building a model's schema costs ~0.1 ms; a judge asks for the same one every call.
    return model.model_json_schema()


@lru_cache(maxsize=64)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))
