"""Judging imported calls: the scenario and suite a real call is judged against, and the
stages the runner stores for a simulated call (expect, conversation_checks, judge, probes).

A real call has no suite file. Its scenario is built here from what the stored call holds:
its scenario id, a persona with no facts (the real caller, whose intentions nobody wrote
down), the `expect:` block the record or the user's expect file gave, and a tool for every
name the call or the expectation uses, with no schema (any arguments are valid: the agent's
real backend accepted them). Every judge reads it with `JudgeInput.real_call=True`, so the
checks that need the simulated caller or ground-truth facts are not applicable (IMP-2).

The same functions serve the import (`polygon import --judge ...`), `polygon rejudge` of an
imported run and a replay, so an imported call is judged one way wherever it is judged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polygon_voice.model import (
    ConversationResult,
    Expect,
    ExpectResult,
    FixedStub,
    Persona,
    Scenario,
    Suite,
    ToolSpec,
)

if TYPE_CHECKING:
    from polygon_voice.judge import Judging
    from polygon_voice.model.judgement import ConversationChecks, Judgement
    from polygon_voice.probes import Probing
    from polygon_voice.store.store import StageResult

REAL_CALLER = Persona(name="real caller (imported call)")
"""The persona of every imported call: no goal and no facts, since nobody wrote down what the
real caller wanted or knew. `intended_outcome` keeps the model's default only because the
model requires one; with `real_call=True` no judge rule reads it (IMP-2)."""

ANY_ARGUMENTS = ToolSpec(
    description="a tool of the imported call (no schema: the real backend took its arguments)",
    stub=FixedStub(kind="fixed"),
)
SCENARIO_DESCRIPTION = "a real call, imported"
NO_RECORDS: Mapping[str, Mapping[str, Mapping[str, Any]]] = {}


class ExpectError(ValueError):
    """An `expect:` block that the Expect model refuses; `where` is the field path in it."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


def parse_expect(data: object, where: str = "expect") -> Expect:
    """`data` validated as an `expect:` block; ExpectError naming the first wrong field."""
    from pydantic import ValidationError

    try:
        return Expect.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(part) for part in first.get("loc", ()))
        raise ExpectError(f"{where}.{loc}" if loc else where, str(first.get("msg"))) from None


def stored_expect(result: ConversationResult) -> Expect | None:
    """The `expect:` block kept in an imported call's `import` trace entry; None without one.

    It was validated when the call was imported, so a failure here means the stored record
    was changed since: ExpectError, as for a bad block at import."""
    from polygon_voice.imports.convert import import_entry

    entry = import_entry(result)
    data = entry.get("expect") if entry is not None else None
    if data is None:
        return None
    return parse_expect(data, f"{result.id}: expect")


MAX_SCENARIO_CHARS = 200  # as the expect file's scenario: shown in tables, never parsed


def scenario_key(metadata: Mapping[str, Any], key: str) -> str | None:
    """The value at the dotted path `key` of a call's kept metadata (the `import` trace
    entry's `metadata`: the record's fields that no turn or tool call took), as text; a list
    is entered by a number (`tags.0`). None when the path is missing or ends at no usable
    scalar: an object, a list, null, empty text or a value over 200 characters."""
    value: Any = metadata
    for part in key.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    if isinstance(value, bool):
        value = "true" if value else "false"
    if not isinstance(value, (str, int, float)):
        return None
    text = str(value).strip()
    if not text or len(text) > MAX_SCENARIO_CHARS:
        return None
    return text


def tool_names(result: ConversationResult, expect: Expect | None) -> list[str]:
    """Every tool the call made and the expectation names, in first-seen order."""
    names: dict[str, None] = dict.fromkeys(call.tool for call in result.tool_calls)
    if expect is not None:
        tools = expect.tools
        wanted: Iterable[Any] = (*tools.called, *tools.not_called, *getattr(tools, "exactly", ()))
        names.update(dict.fromkeys(item.tool for item in wanted))
        names.update(dict.fromkeys(str(name) for name in getattr(tools, "exactly_among", ())))
    return list(names)


def declared_tools(result: ConversationResult, expect: Expect | None) -> dict[str, ToolSpec]:
    """A schema-less tool for every name the call or its expectation uses."""
    return dict.fromkeys(tool_names(result, expect), ANY_ARGUMENTS)


# Built once and copied per call: validating (or `model_construct`, which inspects every
# default factory) a scenario and a suite per call would cost more than judging the call.
_SCENARIO = Scenario(id="imported", description=SCENARIO_DESCRIPTION, persona=REAL_CALLER)
_SUITE = Suite(name="import", scenarios=[_SCENARIO])


def scenario_for(result: ConversationResult, expect: Expect | None = None) -> Scenario:
    """The scenario of one imported call: its scenario id, the real caller, its expectation.

    Copied without validation: a real call's id may hold characters a suite's scenario id may
    not (it is shown and matched, never parsed), and `expect` is an already validated model.
    """
    return _SCENARIO.model_copy(update={"id": result.scenario_id, "expect": expect})


def suite_for(
    name: str,
    scenarios: list[Scenario],
    tools: Mapping[str, ToolSpec],
    forbidden_phrases: Iterable[str] = (),
) -> Suite:
    """A suite built in code around imported calls (name: the run's name)."""
    update = {
        "name": name,
        "tools": dict(tools),
        "scenarios": scenarios,
        "forbidden_phrases": list(forbidden_phrases),
    }
    return _SUITE.model_copy(update=update)


@dataclass(frozen=True)
class CallSetup:
    """What one imported call is judged against."""

    scenario: Scenario
    suite: Suite

    @property
    def tools(self) -> dict[str, ToolSpec]:
        return self.suite.tools


def setup_for(
    result: ConversationResult,
    expect: Expect | None,
    name: str,
    forbidden_phrases: Iterable[str] = (),
) -> CallSetup:
    """The scenario and the one-call suite an imported call is judged against."""
    scenario = scenario_for(result, expect)
    suite = suite_for(name, [scenario], declared_tools(result, expect), forbidden_phrases)
    return CallSetup(scenario, suite)


def expect_stage(result: ConversationResult, setup: CallSetup) -> ExpectResult | None:
    """Stage `expect`: the call against its expectation; None when it states none."""
    from polygon_voice.checks.expect import check_expectations

    return check_expectations(result, setup.scenario, NO_RECORDS, None, setup.tools)


@dataclass
class CallJudging:
    """How the calls of an import are judged and probed; None parts are skipped.

    The stages of one call, in the runner's order: `checked` gives `expect` (stored with the
    call), `judged` gives `conversation_checks`, `judge` and `probes`. A deterministic judge
    and rule-only probes never wait, so `judged` runs them without an event loop (the
    import's budget is a millisecond a call); with a model it runs them on one loop kept for
    the whole import, which `close()` ends with the model clients.
    """

    judging: Judging | None
    probing: Probing | None = None
    name: str = "import"
    forbidden_phrases: tuple[str, ...] = ()
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)

    @property
    def asks_a_model(self) -> bool:
        """Whether judging or probing a call waits for a model (and may wait long)."""
        judge = self.judging.judge if self.judging is not None else None
        client = self.probing.client if self.probing is not None else None
        return hasattr(judge, "run") or client is not None

    def setup(self, result: ConversationResult, expect: Expect | None) -> CallSetup:
        return setup_for(result, expect, self.name, self.forbidden_phrases)

    def checked(self, result: ConversationResult, setup: CallSetup) -> list[StageResult]:
        """The deterministic checks stored with the call itself (stage `expect`)."""
        expect = expect_stage(result, setup)
        return [] if expect is None else [("expect", "", expect)]

    def judged(
        self, result: ConversationResult, setup: CallSetup, expect: ExpectResult | None
    ) -> list[StageResult]:
        """Stages conversation_checks, judge and probes, on this thread."""
        if not self.asks_a_model:
            return _finished(self._judged_async(result, setup, expect))
        if self._loop is None:
            # One loop for the whole import: a model client's connections belong to it.
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(self._judged_async(result, setup, expect))

    def close(self) -> None:
        """Close the model clients and the loop they ran on."""
        if self._loop is None:
            return
        try:
            if self.judging is not None:
                self._loop.run_until_complete(self.judging.aclose())
            if self.probing is not None and self.probing.client is not None:
                self._loop.run_until_complete(self.probing.client.aclose())
        finally:
            self._loop.close()
            self._loop = None

    async def _judged_async(
        self, result: ConversationResult, setup: CallSetup, expect: ExpectResult | None
    ) -> list[StageResult]:
        stages: list[StageResult] = []
        if self.judging is not None:
            checks, judgement = await judge_call(self.judging, result, setup, expect)
            stages += [("conversation_checks", "", checks), ("judge", "", judgement)]
        if self.probing is not None:
            stages.append(("probes", "", await probe_call(self.probing, result, setup)))
        return stages


async def judge_call(
    judging: Judging, result: ConversationResult, setup: CallSetup, expect: ExpectResult | None
) -> tuple[ConversationChecks, Judgement]:
    """The conversation checks and the judgement of one real call (`real_call=True`)."""
    from polygon_voice.judge.run import judge_stage_async

    return await judge_stage_async(
        judging, setup.suite, setup.scenario, result, None, NO_RECORDS, expect, real_call=True
    )


async def probe_call(probing: Probing, result: ConversationResult, setup: CallSetup) -> Any:
    """Stage `probes` of one real call (the probes read the conversation only)."""
    from polygon_voice.probes import probe_stage

    return await probe_stage(
        probing, result, setup.scenario, setup.tools, NO_RECORDS, real_call=True
    )


def _finished(coroutine: Coroutine[Any, Any, list[StageResult]]) -> list[StageResult]:
    """The value of a coroutine that never waits (a deterministic judge, rule probes), run
    without an event loop: starting a loop per call would cost more than judging it."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        value: list[StageResult] = done.value
        return value
    coroutine.close()
    raise RuntimeError("a judge or probe without a model waited for something")
