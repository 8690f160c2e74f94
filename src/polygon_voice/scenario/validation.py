"""Turn a pydantic ValidationError into one SuiteError that names the line and the field."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.hints import allowed_fields, discriminator_tags
from polygon_voice.scenario.locate import (
    Match,
    Part,
    mapping_entry,
    match_loc,
    position,
    render_path,
)
from polygon_voice.scenario.messages import SHAPE_NOUNS, brief, clean, is_scalar, join_or

_KEY_LABEL = "[key]"  # pydantic's loc suffix for an error in a dict key rather than its value


@dataclass(frozen=True)
class _Problem:
    line: int | None
    column: int | None
    field: str | None
    message: str


@dataclass(frozen=True)
class _Located:
    error: ErrorDetails
    loc: tuple[Part, ...]
    match: Match


def validation_error(
    exc: ValidationError, root: yaml.Node, model: type[BaseModel], file: str
) -> SuiteError:
    """The first problem by line order, with the count of the others in `more`."""
    located = [_locate(error, root) for error in exc.errors(include_url=False)]
    problems = sorted(dict.fromkeys(_problems(located, root, model)), key=_line_order)
    if not problems:  # pydantic always reports at least one error; this is only a safety net
        return SuiteError(file, clean(str(exc)))
    first = problems[0]
    return SuiteError(
        file,
        first.message,
        line=first.line,
        column=first.column,
        field=first.field,
        more=len(problems) - 1,
    )


def _line_order(problem: _Problem) -> tuple[bool, int, int]:
    return problem.line is None, problem.line or 0, problem.column or 0


def _locate(error: ErrorDetails, root: yaml.Node) -> _Located:
    loc = tuple(error["loc"])
    # A missing field and a bad key have no node of their own: locate their parent.
    if error["type"] == "missing" or loc[-1:] == (_KEY_LABEL,):
        return _Located(error, loc, match_loc(root, loc[:-1]))
    return _Located(error, loc, match_loc(root, loc))


def _problems(located: list[_Located], root: yaml.Node, model: type[BaseModel]) -> list[_Problem]:
    kept, problems = _settle_unions(located, root)
    missing: dict[int, tuple[yaml.Node, str | None, list[str]]] = {}
    for item in kept:
        name = _missing_name(item.error)
        if name is None:
            problems.append(_describe(item, root, model))
            continue
        node = item.match.node(root)
        missing.setdefault(id(node), (node, item.match.path(), []))[2].append(name)
    problems += [_missing_problem(node, path, names) for node, path, names in missing.values()]
    return problems


def _settle_unions(
    located: list[_Located], root: yaml.Node
) -> tuple[list[_Located], list[_Problem]]:
    """Keep the errors of the union branch the user meant; fold "wrong type" fan-outs into one.

    A value that fits no member of `float | Latency` gets one error per member. If some member
    accepted the value's shape (its errors go deeper or say more than "wrong type"), the other
    members' errors are noise; if none did, one "expected a number or a mapping" says it all.
    """
    kept: list[_Located] = []
    groups: dict[tuple[Part, ...], list[_Located]] = {}
    for item in located:
        if item.match.labels:
            groups.setdefault(item.loc[: item.match.labels[0]], []).append(item)
        else:
            kept.append(item)
    folded: list[_Problem] = []
    for group in groups.values():
        decisive = [item for item in group if not _is_shape(item) or _past_label(item)]
        if decisive:
            kept += decisive
        else:
            folded.append(_shape_problem(group, root))
    return kept, folded


def _is_shape(item: _Located) -> bool:
    return item.error["type"] in SHAPE_NOUNS


def _past_label(item: _Located) -> bool:
    first_label = item.match.labels[0]
    return any(step.index > first_label for step in item.match.steps)


def _shape_problem(group: list[_Located], root: yaml.Node) -> _Problem:
    nouns = list(dict.fromkeys(SHAPE_NOUNS[item.error["type"]] for item in group))
    first = group[0]
    message = f"expected {join_or(nouns)} (got {brief(first.error['input'])})"
    return _problem_at(first.match.node(root), first.match.path(), message)


def _missing_name(error: ErrorDetails) -> str | None:
    if error["type"] == "missing":
        return str(error["loc"][-1])
    return None


def _missing_problem(node: yaml.Node, path: str | None, names: list[str]) -> _Problem:
    quoted = ", ".join(repr(name) for name in dict.fromkeys(names))
    label = "field required" if len(names) == 1 else "fields required"
    return _problem_at(node, path, f"{label}: {quoted}")


def _problem_at(node: yaml.Node, field: str | None, message: str) -> _Problem:
    line, column = position(node)
    return _Problem(line, column, field, message)


def _describe(item: _Located, root: yaml.Node, model: type[BaseModel]) -> _Problem:
    error, match = item.error, item.match
    kind = error["type"]
    if kind == "extra_forbidden":
        return _extra_problem(item, root, model)
    if kind == "union_tag_invalid":
        return _tag_problem(item, root)
    if kind == "union_tag_not_found":
        return _no_tag_problem(item, root, model)
    if item.loc[-1:] == (_KEY_LABEL,) and match.steps and match.steps[-1].key is not None:
        return _key_problem(item)
    if kind in SHAPE_NOUNS:
        message = f"expected {SHAPE_NOUNS[kind]} (got {brief(error['input'])})"
        return _problem_at(match.node(root), match.path(), message)
    message = clean(error["msg"])
    if is_scalar(error["input"]):
        message += f" (got {brief(error['input'])})"
    return _problem_at(match.node(root), match.path(), message)


def _extra_problem(item: _Located, root: yaml.Node, model: type[BaseModel]) -> _Problem:
    name = item.loc[-1]
    steps = item.match.steps
    message = f"unknown field {name!r}"
    fields = allowed_fields(model, item.loc[:-1], set(item.match.labels))
    close = difflib.get_close_matches(str(name), fields, n=1, cutoff=0.6)
    if close:
        message += f" (did you mean {close[0]!r}?)"
    elif fields:
        message += f" (allowed: {', '.join(fields)})"
    last = steps[-1] if steps else None
    if last is not None and last.key is not None and last.index == len(item.loc) - 1:
        return _problem_at(last.key, item.match.path(), message)
    return _problem_at(item.match.node(root), item.match.path(), message)


def _tag_problem(item: _Located, root: yaml.Node) -> _Problem:
    ctx = item.error.get("ctx", {})
    name = _discriminator(item.error)
    expected = join_or(str(ctx.get("expected_tags", "")).split(", "))
    message = f"unknown {name} {brief(ctx.get('tag'))}: expected {expected}"
    node = item.match.node(root)
    entry = mapping_entry(node, name)
    if entry is None:
        return _problem_at(node, item.match.path(), message)
    steps = [(step.part, step.key is None) for step in item.match.steps]
    return _problem_at(entry[1], render_path([*steps, (name, False)]), message)


def _no_tag_problem(item: _Located, root: yaml.Node, model: type[BaseModel]) -> _Problem:
    name = _discriminator(item.error)
    tags = discriminator_tags(model, item.loc, set(item.match.labels), name)
    message = f"field required: {name!r}"
    if tags:
        message += f" (one of {', '.join(repr(tag) for tag in tags)})"
    return _problem_at(item.match.node(root), item.match.path(), message)


def _discriminator(error: ErrorDetails) -> str:
    return str(error.get("ctx", {}).get("discriminator", "kind")).strip("'")


def _key_problem(item: _Located) -> _Problem:
    step = item.match.steps[-1]
    assert step.key is not None
    got = brief(step.part)
    if item.error["type"] == "string_type":
        message = f"keys must be strings (got {got}); put the key in quotes"
    else:
        message = f"{clean(item.error['msg'])} (got {got})"
    return _problem_at(step.key, item.match.path(), message)
