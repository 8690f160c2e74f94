"""What a replay plays, read from the stored calls of an imported run.

Each stored call becomes a `ReplayedCall`: the recorded caller lines in order (consecutive
caller turns joined into one line, since the new agent answers every line it hears), the
recorded agent turn before each line (what the mismatch rule compares the new agent's turn
with), the recorded tool calls (served as stubs), the imported `expect:` block, and the
stored call's id and scenario id, which the replayed call keeps so that `polygon compare
IMPORTED REPLAY` lines the two up call by call.

The suite the runner plays holds one scenario per call (a scripted caller of those lines,
ending with a hang-up) and one tool per tool name the recorded calls used.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from polygon_voice.model import (
    ConversationResult,
    Persona,
    Scenario,
    ScriptStep,
    Speaker,
    Suite,
    ToolCall,
)
from polygon_voice.model.expect import Expect
from polygon_voice.model.suite import EngineSettings
from polygon_voice.model.tools import FixedStub, ToolSpec

# A recorded line longer than an agent may say in one response is cut to that (the engine's
# own bound on a turn), so one huge record cannot make the replay hold megabytes a turn.
MAX_LINE_CHARS = EngineSettings().max_say_chars
# Turns the engine allows a replayed call: room for every recorded line, an answer to each,
# and a tool-call turn or two more.
MIN_TURNS = EngineSettings().max_turns
TOOL_DESCRIPTION = (
    "Replayed from a recorded call: answers with the recorded result of the same call "
    "(same arguments), otherwise with an error."
)


@dataclass(frozen=True)
class ReplayedCall:
    """One stored call as the replay plays it."""

    call_id: str
    scenario_id: str
    suite_id: str  # the scenario id inside the replay's suite (a safe form of the call id)
    language: str
    lines: tuple[str, ...]  # the recorded caller lines, in order
    agent_before: tuple[str, ...]  # the recorded agent turn before each line ("" if none)
    tool_calls: tuple[ToolCall, ...]  # the recorded calls, served as stubs
    expect: dict[str, Any] | None
    ended_by_caller: bool
    max_turns: int
    tool_params: dict[str, set[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Skipped:
    """A stored call the replay cannot play, and why."""

    call_id: str
    reason: str


def replayed_call(result: ConversationResult, position: int) -> ReplayedCall | Skipped:
    """The replay of one stored call, or why it cannot be replayed."""
    from polygon_voice.imports.convert import import_entry

    lines, before = _exchanges(result)
    if not lines:
        return Skipped(result.id, "the recorded call has no caller lines to play")
    entry = import_entry(result) or {}
    expect = entry.get("expect")
    if expect is not None:
        problem = _expect_problem(expect)
        if problem is not None:
            return Skipped(result.id, f"its expect block is not valid: {problem}")
    params: dict[str, set[str]] = {}
    for call in result.tool_calls:
        params.setdefault(call.tool, set()).update(str(k) for k in call.args)
    if isinstance(expect, dict):
        from polygon_voice.imports.judging import tool_names

        # A tool only the expectation names must exist in the suite too.
        for tool in tool_names(result, Expect.model_validate(expect)):
            params.setdefault(tool, set())
    return ReplayedCall(
        call_id=result.id,
        scenario_id=result.scenario_id,
        suite_id=_suite_id(result.id, position),
        language=result.language,
        lines=tuple(lines),
        agent_before=tuple(before),
        tool_calls=tuple(result.tool_calls),
        expect=expect if isinstance(expect, dict) else None,
        ended_by_caller=result.end.reason.value == "caller_hangup",
        max_turns=max(MIN_TURNS, 2 * len(result.turns) + 10),
        tool_params=params,
    )


def _expect_problem(expect: object) -> str | None:
    from pydantic import ValidationError

    if not isinstance(expect, dict):
        return "not a mapping"
    try:
        Expect.model_validate(expect)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid"}
        where = ".".join(str(part) for part in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg"))
    return None


def _exchanges(result: ConversationResult) -> tuple[list[str], list[str]]:
    lines: list[str] = []
    before: list[str] = []
    agent: list[str] = []
    caller: list[str] = []
    for turn in result.turns:
        text = turn.text.strip()
        if turn.speaker is Speaker.CALLER:
            if text:
                caller.append(text)
            continue
        if caller:
            lines.append(_bounded(" ".join(caller)))
            before.append(_bounded(" ".join(agent)))
            caller, agent = [], []
        if text:
            agent.append(text)
    if caller:
        lines.append(_bounded(" ".join(caller)))
        before.append(_bounded(" ".join(agent)))
    return lines, before


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def _suite_id(call_id: str, position: int) -> str:
    # Scenario ids allow [A-Za-z0-9_.:-]; a call id may hold anything, so the suite's id is a
    # safe, unique form of it (the stored call keeps the real one).
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "_.:-") else "-" for c in call_id)
    digest = hashlib.sha256(call_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{position}-{safe[:60] or 'call'}-{digest}"


def replay_suite(name: str, calls: list[ReplayedCall]) -> Suite:
    """The in-code suite the runner plays: a scenario per call, a stub tool per tool name."""
    params: dict[str, set[str]] = {}
    for call in calls:
        for tool, names in call.tool_params.items():
            params.setdefault(tool, set()).update(names)
    tools = {tool: _tool(names) for tool, names in sorted(params.items())}
    return Suite(
        name=name,
        tools=tools,
        settings=EngineSettings(max_turns=max(c.max_turns for c in calls)),
        scenarios=[_scenario(call) for call in calls],
    )


def _tool(names: set[str]) -> ToolSpec:
    properties: dict[str, Any] = {name: {} for name in sorted(names)}
    return ToolSpec(
        description=TOOL_DESCRIPTION,
        parameters={"type": "object", "properties": properties},
        stub=FixedStub(kind="fixed"),  # replaced per call by the recorded answers
    )


def _scenario(call: ReplayedCall) -> Scenario:
    script = [ScriptStep(say=line) for line in call.lines]
    script.append(ScriptStep(hangup=True))
    expect = Expect.model_validate(call.expect) if call.expect is not None else None
    return Scenario(
        id=call.suite_id,
        description=f"replay of {call.call_id}",
        persona=Persona(language=call.language),
        caller="scripted",
        script=script,
        expect=expect,
        max_turns=call.max_turns,
    )
