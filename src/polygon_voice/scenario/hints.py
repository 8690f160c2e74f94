"""Which fields a model allows at a pydantic error location (for "did you mean" hints)."""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import Annotated, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel

from polygon_voice.scenario.locate import Part


def allowed_fields(model: type[BaseModel], loc: tuple[Part, ...], labels: set[int]) -> list[str]:
    """The field names of the model(s) found at `loc`; `labels` are the union-label parts."""
    members = _members(_types_at(model, loc, labels))
    return list(dict.fromkeys(name for m in members if _is_model(m) for name in m.model_fields))


def discriminator_tags(
    model: type[BaseModel], loc: tuple[Part, ...], labels: set[int], name: str
) -> list[str]:
    """The values the discriminator field `name` may take in the union found at `loc`."""
    members = _members(_types_at(model, loc, labels))
    fields = (m.model_fields.get(name) for m in members if _is_model(m))
    tags = (
        tag
        for f in fields
        if f and get_origin(f.annotation) is Literal
        for tag in get_args(f.annotation)
    )
    return [str(tag) for tag in dict.fromkeys(tags)]


def _types_at(model: type[BaseModel], loc: tuple[Part, ...], labels: set[int]) -> list[object]:
    candidates: list[object] = [model]
    for index, part in enumerate(loc):
        members = _members(candidates)
        if index in labels:
            # A discriminator tag picks its member; other labels ('float', ...) pick nothing.
            candidates = [m for m in members if _has_tag(m, part)] or members
        else:
            candidates = [t for m in members for t in _descend(m, part)]
    return candidates


def _is_model(tp: object) -> TypeGuard[type[BaseModel]]:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _members(candidates: Iterable[object]) -> list[object]:
    """Candidates with Annotated, unions and None taken apart."""
    out: list[object] = []
    for tp in candidates:
        origin = get_origin(tp)
        if origin is Annotated:
            out += _members([get_args(tp)[0]])
        elif origin is Union or origin is types.UnionType:
            out += _members(get_args(tp))
        elif tp is not type(None):
            out.append(tp)
    return out


def _descend(tp: object, part: Part) -> list[object]:
    if _is_model(tp):
        fields = tp.model_fields
        return [fields[part].annotation] if part in fields else []
    origin, args = get_origin(tp), get_args(tp)
    if origin is list and isinstance(part, int) and args:
        return [args[0]]
    if origin is dict and len(args) == 2:
        return [args[1]]
    return []


def _has_tag(tp: object, part: Part) -> bool:
    if not _is_model(tp):
        return False
    fields = tp.model_fields.values()
    return any(
        get_origin(f.annotation) is Literal and part in get_args(f.annotation) for f in fields
    )
