"""Names a suite uses that must exist: tools in faults, in a case's action and in `expect:`.

A misspelt tool name in `setup.action` or `expect.tools` would make a scenario that no agent
can pass (or one that always passes), so it is a load error naming the file and line, like
any other mistake in the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import yaml

from polygon_voice.model import Expect, Scenario, StatefulStub, Suite, ToolSpec
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.locate import match_loc, position

Loc = tuple[int | str, ...]
CHECKED_CONTEXT = "references_checked_by_loader"
"""Validation context key: the loader checks references itself, with line numbers."""


def reference_problems(suite: Suite) -> Iterator[tuple[Loc, str]]:
    """Every reference to a tool, argument or collection that the suite does not declare."""
    for i, scenario in enumerate(suite.scenarios):
        at: Loc = ("scenarios", i)
        yield from _fault_tools(suite.tools, scenario, at)
        yield from _action_tool(suite.tools, scenario, at)
        if scenario.expect is not None:
            yield from _expect_refs(suite, scenario, scenario.expect, (*at, "expect"))


def _known(tools: Mapping[str, ToolSpec]) -> str:
    return ", ".join(tools) or "none"


def _fault_tools(
    tools: Mapping[str, ToolSpec], scenario: Scenario, at: Loc
) -> Iterator[tuple[Loc, str]]:
    for name in scenario.faults:
        if name not in tools:
            yield (
                (*at, "faults", name),
                (f"faults for unknown tool {name!r}; the suite's tools are: {_known(tools)}"),
            )


def _action_tool(
    tools: Mapping[str, ToolSpec], scenario: Scenario, at: Loc
) -> Iterator[tuple[Loc, str]]:
    action = scenario.setup.get("action")
    if action is None:
        return
    where: Loc = (*at, "setup", "action")
    if not isinstance(action, Mapping):
        yield where, "a mapping with 'tool' and 'args' (the consequential call)"
        return
    tool = action.get("tool")
    if not isinstance(tool, str) or tool not in tools:
        yield (*where, "tool"), (f"unknown tool {tool!r}; the suite's tools are: {_known(tools)}")
        return
    args = action.get("args", {})
    if not isinstance(args, Mapping):
        yield (*where, "args"), "a mapping of argument names to values"
        return
    yield from _unknown_args(tools[tool], args, (*where, "args"))
    if not isinstance(tools[tool].stub, StatefulStub):
        yield (
            (*where, "tool"),
            (
                f"{tool!r} is not a stateful tool: the three-layer checks need to know which "
                "record it changes"
            ),
        )


def _unknown_args(spec: ToolSpec, args: Mapping[str, object], at: Loc) -> Iterator[tuple[Loc, str]]:
    properties = spec.parameters.get("properties")
    if not isinstance(properties, Mapping):
        return  # a tool without declared properties takes any argument
    for name in args:
        if name not in properties:
            yield (
                (*at, name),
                (
                    f"the tool has no argument {name!r}; its arguments are: "
                    f"{', '.join(map(str, properties)) or 'none'}"
                ),
            )


def _expect_refs(
    suite: Suite, scenario: Scenario, expect: Expect, at: Loc
) -> Iterator[tuple[Loc, str]]:
    tools = suite.tools
    for kind in ("called", "not_called", "exactly"):
        for j, wanted in enumerate(getattr(expect.tools, kind)):
            where: Loc = (*at, "tools", kind, j)
            if wanted.tool not in tools:
                yield (
                    (*where, "tool"),
                    (f"unknown tool {wanted.tool!r}; the suite's tools are: {_known(tools)}"),
                )
                continue
            yield from _unknown_args(tools[wanted.tool], wanted.args, (*where, "args"))
    for j, name in enumerate(expect.tools.exactly_among):
        if name not in tools:
            yield (
                (*at, "tools", "exactly_among", j),
                f"unknown tool {name!r}; the suite's tools are: {_known(tools)}",
            )
    collections = (
        set(suite.backend)
        | set(scenario.backend)
        | {spec.stub.collection for spec in tools.values() if isinstance(spec.stub, StatefulStub)}
    )
    for name in expect.backend:
        if name not in collections:
            yield (
                (*at, "backend", name),
                (
                    f"unknown collection {name!r}; the suite's collections are: "
                    f"{', '.join(sorted(collections)) or 'none'}"
                ),
            )


def check_references(suite: Suite, root: yaml.Node, file: str) -> None:
    """Raise a SuiteError at the line of the first unknown reference (with the count of more)."""
    problems = list(reference_problems(suite))
    if not problems:
        return
    located = []
    for loc, message in problems:
        match = match_loc(root, loc)
        line, column = position(match.node(root))
        located.append((line or 0, column or 0, match.path(), message))
    line, column, path, message = min(located, key=lambda p: (p[0], p[1]))
    raise SuiteError(
        file, message, line=line or None, column=column or None, field=path, more=len(located) - 1
    )
