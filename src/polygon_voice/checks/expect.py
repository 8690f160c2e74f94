"""The expectation check (stage "expect"): did the call end the way the scenario says it must?

Read from the record only: the backend at the end is the initial records plus the write
log; a tool call counts once it was sent; what the agent said is its turns' text. A
three-layer case without `expect:` is checked against its own `expected` axes (SPEC 9.2),
so every case states its outcome too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from polygon_voice.checks.claims import mentions_value
from polygon_voice.checks.evidence import records_at, same
from polygon_voice.checks.exercised import agent_at_fault, not_played, unplayed_events
from polygon_voice.model import (
    AXES,
    CallStatus,
    CaseScore,
    ConversationResult,
    EndReason,
    Expect,
    ExpectCheck,
    ExpectResult,
    Scenario,
    Speaker,
    ToolCall,
    ToolExpectation,
    ToolSpec,
)

Records = Mapping[str, Mapping[str, Mapping[str, Any]]]
ANY_RECORD = "*"
"""An `expect.backend` key that matches any record of the collection (for created records,
whose keys the backend makes up)."""

_BROKEN_ENDS = (EndReason.ERROR, EndReason.LOOP_DETECTED, EndReason.TURN_LIMIT)


def has_expectation(scenario: Scenario) -> bool:
    """Whether the scenario states an outcome: an `expect:` block, or a three-layer case."""
    expect = scenario.expect
    case = scenario.category is not None and scenario.expected is not None
    return case or (expect is not None and expect.states_anything())


def check_expectations(
    result: ConversationResult,
    scenario: Scenario,
    initial: Records,
    case: CaseScore | None = None,
    tools: Mapping[str, ToolSpec] | None = None,
) -> ExpectResult | None:
    """The expectation checks of one call; None when the scenario states no outcome.

    `tools` (the suite's) tell a stateful tool from one whose writes the log cannot show,
    for phantom claims; without them any completed call may have made the change."""
    if not has_expectation(scenario):
        return None
    expect = scenario.expect if scenario.expect and scenario.expect.states_anything() else None
    checks: list[ExpectCheck] = []
    if expect is not None:
        checks += expect_checks(expect, result, initial)
    if case is not None:
        checks += case_checks(case, scenario)
    passed = all(c.passed for c in checks)
    if case is not None:
        reason = case.not_exercised  # one reading for a case's axes and its expectations
    else:
        reason = _not_exercised(scenario, result, tools or {}, failed=not passed)
    source = "expect" if expect is not None else "case"
    met = reason is None and passed
    return ExpectResult(source=source, met=met, checks=checks, not_exercised=reason)


def _not_exercised(
    scenario: Scenario, result: ConversationResult, tools: Mapping[str, ToolSpec], failed: bool
) -> str | None:
    """Why the call did not play as written; None when it did, or when it failed and the
    agent is at fault on its own (it broke the call, looped, claimed a phantom change), as
    for a case (checks/score.py)."""
    failure = not_played(result)
    if failure is not None:  # the caller vanished or never spoke: nothing to hold the agent to
        return failure
    unplayed = unplayed_events(scenario, result)
    if not unplayed or (failed and agent_at_fault(result, tools)):
        return None
    return "; ".join(unplayed)


def expect_checks(
    expect: Expect, result: ConversationResult, initial: Records
) -> list[ExpectCheck]:
    """One check per part of `expect:` that is given, in a fixed order."""
    checks: list[ExpectCheck] = []
    if expect.outcome is not None:
        checks.append(outcome_check(expect.outcome, result))
    if expect.backend:
        checks += backend_checks(expect.backend, result, initial)
    if expect.no_write:
        checks.append(no_write_check(result))
    if expect.writes_at_most is not None:
        checks.append(writes_at_most_check(expect.writes_at_most, result))
    checks += [called_check(w, result) for w in expect.tools.called]
    checks += [not_called_check(w, result) for w in expect.tools.not_called]
    if expect.tools.watched():
        checks.append(exactly_check(expect.tools.exactly, expect.tools.watched(), result))
    checks += [says_check(fact, result) for fact in expect.says]
    return checks


def outcome_check(outcome: str, result: ConversationResult) -> ExpectCheck:
    """How the call ended against the expected ending."""
    end = result.end.reason
    if end in _BROKEN_ENDS:
        return ExpectCheck(
            name="outcome", passed=False, why=f"wanted {outcome}; the call ended by {end.value}"
        )
    if outcome == "transfer":
        passed = end is EndReason.TRANSFERRED
        return ExpectCheck(
            name="outcome", passed=passed, why=f"wanted a transfer; ended by {end.value}"
        )
    if end is EndReason.TRANSFERRED:
        return ExpectCheck(
            name="outcome", passed=False, why=f"wanted {outcome}; the call was transferred"
        )
    if outcome in ("refusal", "callback") and result.backend_writes:
        first = result.backend_writes[0]
        why = f"wanted {outcome}; {first.call_id} wrote {first.collection}/{first.record}"
        return ExpectCheck(name="outcome", passed=False, why=why)
    return ExpectCheck(name="outcome", passed=True, why=f"{outcome}: ended by {end.value}")


def final_records(
    result: ConversationResult, initial: Records, collection: str
) -> dict[str, dict[str, Any]]:
    """A collection at the end of the call: the initial records plus every write that landed."""
    return records_at(result, initial, collection)


def backend_checks(
    wanted: Mapping[str, Mapping[str, Mapping[str, Any] | None]],
    result: ConversationResult,
    initial: Records,
) -> list[ExpectCheck]:
    """One check per expected record."""
    checks = []
    for collection, records in wanted.items():
        stored = final_records(result, initial, collection)
        for key, fields in records.items():
            checks.append(_record_check(collection, key, fields, stored))
    return checks


def _record_check(
    collection: str,
    key: str,
    fields: Mapping[str, Any] | None,
    stored: Mapping[str, Mapping[str, Any]],
) -> ExpectCheck:
    where = f"{collection}/{key}"
    if fields is None:
        gone = key not in stored
        why = f"{where} does not exist" if gone else f"{where} still exists: {dict(stored[key])}"
        return ExpectCheck(name="backend", passed=gone, why=why)
    wanted = dict(fields)
    if key == ANY_RECORD:
        held = [k for k, record in stored.items() if _holds(record, wanted)]
        if held:
            return ExpectCheck(
                name="backend", passed=True, why=f"{collection}/{held[0]} holds {wanted}"
            )
        return ExpectCheck(
            name="backend", passed=False, why=f"no record of {collection} holds {wanted}"
        )
    record = stored.get(key)
    if record is None:
        return ExpectCheck(
            name="backend", passed=False, why=f"{where} does not exist; wanted {wanted}"
        )
    wrong = {f: record.get(f) for f, v in wanted.items() if not same_value(record.get(f), v)}
    if wrong:
        return ExpectCheck(
            name="backend", passed=False, why=f"{where} holds {wrong}; wanted {wanted}"
        )
    return ExpectCheck(name="backend", passed=True, why=f"{where} holds {wanted}")


def _holds(record: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(same_value(record.get(f), v) for f, v in wanted.items())


def same_value(stored: Any, wanted: Any) -> bool:
    """Values compare as text ("5590" equals 5590); booleans and null only with themselves."""
    # The three-layer checks' comparison, plus null: `expect` may ask for a field to be null.
    return (stored is None and wanted is None) or same(stored, wanted)


def no_write_check(result: ConversationResult) -> ExpectCheck:
    """Nothing was written."""
    writes = result.backend_writes
    if not writes:
        return ExpectCheck(name="no_write", passed=True, why="nothing was written")
    first = writes[0]
    target = f"{first.collection}/{first.record}.{first.field}"
    why = f"{len(writes)} write(s); the first by {first.call_id}: {target}"
    return ExpectCheck(name="no_write", passed=False, why=why)


def writes_at_most_check(limit: int, result: ConversationResult) -> ExpectCheck:
    """At most `limit` write operations landed (a call's writes to one record at one moment)."""
    operations = list(dict.fromkeys((w.call_id, w.time, w.record) for w in result.backend_writes))
    count = len(operations)
    calls = ", ".join(dict.fromkeys(call for call, _, _ in operations))
    landed = f"{count} write operation(s) landed (by {calls})" if count else "nothing was written"
    why = f"{landed}; at most {limit} allowed"
    return ExpectCheck(name="writes_at_most", passed=count <= limit, why=why)


def sent_calls(result: ConversationResult) -> list[ToolCall]:
    """The calls that went out (prepared-only calls never reached the tool)."""
    return [c for c in result.tool_calls if any(h.status is CallStatus.SENT for h in c.history)]


def _matches(call: ToolCall, wanted: ToolExpectation) -> bool:
    return call.tool == wanted.tool and all(
        name in call.args and same_value(call.args[name], value)
        for name, value in wanted.args.items()
    )


def _described(wanted: ToolExpectation) -> str:
    return f"{wanted.tool}({wanted.args})" if wanted.args else wanted.tool


def called_check(wanted: ToolExpectation, result: ConversationResult) -> ExpectCheck:
    """A sent call matches `wanted`."""
    sent = sent_calls(result)
    hit = next((c for c in sent if _matches(c, wanted)), None)
    if hit is not None:
        return ExpectCheck(name="called", passed=True, why=f"{hit.call_id} sent {hit.args}")
    same_tool = [c.args for c in sent if c.tool == wanted.tool]
    why = f"no sent call matches {_described(wanted)}"
    if same_tool:
        why += f"; {wanted.tool} was sent with {same_tool}"
    return ExpectCheck(name="called", passed=False, why=why)


def not_called_check(wanted: ToolExpectation, result: ConversationResult) -> ExpectCheck:
    """No sent call matches `wanted`."""
    hit = next((c for c in sent_calls(result) if _matches(c, wanted)), None)
    if hit is None:
        return ExpectCheck(
            name="not_called", passed=True, why=f"no call matched {_described(wanted)}"
        )
    return ExpectCheck(name="not_called", passed=False, why=f"{hit.call_id} sent {hit.args}")


def completed_calls(result: ConversationResult) -> list[ToolCall]:
    """The calls that completed (a failed, timed-out, cancelled or prepared-only call did
    nothing the caller can hold the agent to)."""
    return [c for c in result.tool_calls if c.status is CallStatus.COMPLETED]


def exactly_check(
    wanted: list[ToolExpectation], watched: list[str], result: ConversationResult
) -> ExpectCheck:
    """The completed calls to the watched tools are exactly `wanted`, as a multiset, each
    with equal arguments."""
    calls = [c for c in completed_calls(result) if c.tool in watched]
    pairs = _pair_up(wanted, calls)
    missing = [w for i, w in enumerate(wanted) if i not in pairs]
    matched = set(pairs.values())
    extra = [c for j, c in enumerate(calls) if j not in matched]
    if not missing and not extra:
        done = ", ".join(short_call(w.tool, w.args) for w in wanted) or "no call"
        why = f"the completed calls to {', '.join(watched)} are exactly: {done}"
        return ExpectCheck(name="exactly", passed=True, why=_bounded(why))
    parts = []
    if missing:
        parts.append("missing " + _listed([short_call(w.tool, w.args) for w in missing]))
    if extra:
        parts.append("extra " + _listed([short_call(c.tool, c.args) for c in extra]))
    return ExpectCheck(name="exactly", passed=False, why=_bounded("; ".join(parts)))


def _pair_up(wanted: list[ToolExpectation], calls: list[ToolCall]) -> dict[int, int]:
    """A largest pairing of wanted calls with equal sent calls (wanted index -> call index).

    Augmenting paths rather than first-fit: text comparison is not transitive across
    number forms (5 equals "5" and 5.0, "5" does not equal 5.0), so first-fit could
    leave a call unpaired that another order would pair."""
    fits = [
        [j for j, c in enumerate(calls) if c.tool == w.tool and args_equal(c.args, w.args)]
        for w in wanted
    ]
    owner: dict[int, int] = {}  # call index -> wanted index

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(wanted)):
        place(i, set())
    return {i: j for j, i in owner.items()}


def args_equal(got: Any, wanted: Any) -> bool:
    """Whole values equal: the same keys, lists of the same length in order, and leaves as
    `same_value` compares them (numbers also by value: 5 equals 5.0)."""
    if isinstance(got, Mapping) and isinstance(wanted, Mapping):
        return set(got) == set(wanted) and all(args_equal(got[k], wanted[k]) for k in wanted)
    if isinstance(got, list | tuple) and isinstance(wanted, list | tuple):
        return len(got) == len(wanted) and all(
            args_equal(a, b) for a, b in zip(got, wanted, strict=True)
        )
    if isinstance(got, Mapping | list | tuple) or isinstance(wanted, Mapping | list | tuple):
        return False
    return same_value(got, wanted) or _same_number(got, wanted)


def _same_number(a: Any, b: Any) -> bool:
    numbers = (int, float)
    plain = not isinstance(a, bool) and not isinstance(b, bool)
    return plain and isinstance(a, numbers) and isinstance(b, numbers) and a == b


_VALUE_CHARS = 40
_CALL_CHARS = 160
_WHY_CHARS = 600
_LISTED = 4


def short_call(tool: str, args: Mapping[str, Any]) -> str:
    """`tool(name=value, ...)` with long values cut, for a reason line."""
    shown = ", ".join(f"{k}={_clip(_text(v), _VALUE_CHARS)}" for k, v in args.items())
    return _clip(f"{tool}({shown})", _CALL_CHARS)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _listed(items: list[str]) -> str:
    more = len(items) - _LISTED
    shown = ", ".join(items[:_LISTED])
    return f"{shown} and {more} more" if more > 0 else shown


def _bounded(text: str) -> str:
    return _clip(text, _WHY_CHARS)


def says_check(fact: str | int | float, result: ConversationResult) -> ExpectCheck:
    """The agent stated `fact` in some turn (any spoken form of a number or date)."""
    for turn in _agent_turns(result):
        if mentions_value(turn.text, fact, result.language):
            return ExpectCheck(name="says", passed=True, why=f"turn {turn.index} says {fact!r}")
    return ExpectCheck(name="says", passed=False, why=f"the agent never said {fact!r}")


def _agent_turns(result: ConversationResult) -> Iterable[Any]:
    return (t for t in result.turns if t.speaker is Speaker.AGENT)


def case_checks(case: CaseScore, scenario: Scenario) -> list[ExpectCheck]:
    """A three-layer case's axes against its `expected` values (SPEC 9.2)."""
    expected = scenario.expected
    if expected is None or case.not_exercised:
        return []
    checks = []
    for axis in AXES:
        verdict = case.axes[axis]
        wanted = bool(getattr(expected, axis))
        checks.append(ExpectCheck(name=axis, passed=verdict.passed is wanted, why=verdict.why))
    return checks
