"""A record built from values already of its fields' types, without pydantic's overhead.

`BaseModel.model_construct` skips validation but is written in Python: it looks up every
field's aliases and defaults, and costs about twice what validating the same values in
pydantic-core does. A deterministic judge builds eight criterion records a call, every value
of the model's own type: `trusted` builds such a record as `model_construct` would, for a
model whose every field is given, setting only what `model_construct` sets (the fields, the
fields set, no extra fields and no private attributes). A model with anything more (aliases,
extra fields allowed, private attributes, a post-init hook) or values that leave out a field
goes to `model_construct` itself. `tests/judge/test_criterion_records.py` pins that both are equal.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__  # pydantic's own way past a model's __setattr__


def trusted(model: type[M], fields: dict[str, Any]) -> M:
    """`model.model_construct(**fields)`; `fields` is kept as the record's own values."""
    if tuple(fields) != _plain_fields(model):  # every field, in the model's order
        return model.model_construct(**fields)
    record = model.__new__(model)
    _set(record, "__dict__", fields)
    _set(record, "__pydantic_fields_set__", set(fields))
    _set(record, "__pydantic_extra__", None)
    _set(record, "__pydantic_private__", None)
    return record


@functools.cache
def _plain_fields(model: type[BaseModel]) -> tuple[str, ...] | None:
    """The model's field names when `model_construct` of them all sets nothing but what
    `trusted` sets; None (no values match) when it may set more."""
    fields = model.__pydantic_fields__
    plain = (
        not model.__pydantic_root_model__
        and model.__pydantic_post_init__ is None
        and not model.__private_attributes__
        and model.model_config.get("extra") != "allow"
        and all(f.alias is None and f.validation_alias is None for f in fields.values())
    )
    return tuple(fields) if plain else None
