"""What a test reads of a run: `PolygonResult`, its gate, and failure messages a person can act
on (the verdict's reasons, the failing axes with their evidence, a transcript excerpt).

Imports nothing heavy: the API's types are read only by type checkers, the stored record of a
call only when a message needs its transcript.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from polygon_voice.api import CallResult, FailOn, RunResult

# A failure message stays readable in a terminal and in a JUnit file: this many calls are
# explained in full, each with this many turns of its transcript, each turn cut to this length.
EXPLAINED_CALLS = 3
EXCERPT_TURNS = 12
TURN_CHARS = 240
EVIDENCE_CHARS = 600


@dataclass(frozen=True)
class GateCheck:
    """One check of the release gate (REL-1..4) and the cases that break it."""

    id: str
    name: str
    passed: bool
    cases: tuple[str, ...]


@dataclass(frozen=True)
class Gate:
    """The release gate over the result's three-layer cases."""

    passed: bool
    checks: tuple[GateCheck, ...]

    @property
    def failed(self) -> list[str]:
        """The ids of the checks that failed."""
        return [check.id for check in self.checks if not check.passed]

    @classmethod
    def of(cls, data: dict[str, Any]) -> Gate:
        checks = tuple(
            GateCheck(
                id=str(c.get("id", "")),
                name=str(c.get("name", "")),
                passed=bool(c.get("passed")),
                cases=tuple(str(case) for case in c.get("cases", ())),
            )
            for c in data.get("checks", ())
        )
        return cls(passed=bool(data.get("passed")), checks=checks)


@dataclass(frozen=True)
class PolygonResult:
    """A run, or the part of it one scenario played, as a test asserts on it.

    `passed` holds when every call passed: exercised, no model or endpoint failed, its verdict
    not at or below `fail_on` (default `warn`: only `pass` passes), its expected outcome met and
    every three-layer axis held. The release gate is apart: `result.gate.passed`.
    """

    run: RunResult
    label: str  # the suite's name, or the scenario's id
    fail_on: FailOn = "warn"
    db: str | None = None  # where the run is stored, to read a transcript for a message
    _excerpts: dict[str, list[str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def calls(self) -> tuple[CallResult, ...]:
        return self.run.calls

    @property
    def failing_calls(self) -> list[CallResult]:
        """The calls that keep `passed` from holding, in plan order."""
        return [call for call in self.calls if not self.call_passed(call)]

    @property
    def passed(self) -> bool:
        return bool(self.calls) and not self.failing_calls

    @property
    def verdict(self) -> str | None:
        """The worst verdict of the calls (pass, warn, fail, unscored); None when none was
        judged."""
        order = ("pass", "warn", "fail", "unscored")
        seen = [call.verdict for call in self.calls if call.verdict is not None]
        return max(seen, key=order.index) if seen else None

    @property
    def verdicts(self) -> dict[str, int]:
        return self.run.verdicts

    @property
    def axes(self) -> dict[str, bool]:
        """Each three-layer axis: whether it held in every call that scored it."""
        axes: dict[str, bool] = {}
        for call in self.calls:
            for name, held in call.axes.items():
                axes[name] = axes.get(name, True) and held
        return axes

    @property
    def root_cause(self) -> str | None:
        """The root cause of the first failed three-layer case; None when none failed."""
        return next((c.root_cause for c in self.calls if c.root_cause is not None), None)

    @property
    def root_causes(self) -> dict[str, int]:
        """Failed cases per root cause."""
        counts: dict[str, int] = {}
        for call in self.calls:
            if call.root_cause is not None:
                counts[call.root_cause] = counts.get(call.root_cause, 0) + 1
        return counts

    @property
    def gate(self) -> Gate | None:
        """The release gate over this result's three-layer cases; None when it has none."""
        data = self.run.gate
        return Gate.of(data) if data is not None else None

    def scenario(self, scenario_id: str) -> PolygonResult:
        """The part of this result one scenario played (every trial of it)."""
        part = self.run.only([scenario_id])
        if not part.calls:
            known = ", ".join(dict.fromkeys(call.scenario for call in self.calls))
            raise KeyError(f"no call of scenario {scenario_id!r} in this result; its: {known}")
        return PolygonResult(part, scenario_id, self.fail_on, self.db, self._excerpts)

    def call_passed(self, call: CallResult) -> bool:
        return (
            call.not_exercised is None
            and not call.failures
            and not call.fails(self.fail_on)
            and call.expect_met is not False
            and all(call.axes.values())
        )

    def explain(self) -> str:
        """Why the result did not pass, in words: see `assert_passed`."""
        failing = self.failing_calls
        if self.passed:
            return f"{self._headline()}: passed"
        if not self.calls:
            return f"{self._headline()}: no call was played"
        # The first line is what a JUnit report's message and pytest's summary show.
        brief = "; ".join(_brief(call) for call in failing[:EXPLAINED_CALLS])
        lines = [
            f"{self._headline()}: {len(failing)} of {len(self.calls)} calls did not pass: {brief}"
        ]
        for call in failing[:EXPLAINED_CALLS]:
            lines.extend(self._explain_call(call))
        if len(failing) > EXPLAINED_CALLS:
            rest = ", ".join(call.id for call in failing[EXPLAINED_CALLS:])
            lines.append(f"... and {len(failing) - EXPLAINED_CALLS} more: {rest}")
        return "\n".join(lines)

    def explain_call(self, call: CallResult) -> str:
        return "\n".join(self._explain_call(call))

    def _headline(self) -> str:
        return f"polygon {self.label} (run {self.run_id}, agent {self.run.agent})"

    def _explain_call(self, call: CallResult) -> list[str]:
        lines = [
            "",
            f"call {call.id}: verdict {call.verdict or 'not judged'}, ended {call.end_reason}"
            f"{_composite(call)}  [polygon show {self.run_id} --conversation {call.id}]",
        ]
        if call.not_exercised is not None:
            lines.append(f"  not exercised: {visible(call.not_exercised)}")
        lines.extend(f"  {role} failed: {cut(visible(e))}" for role, e in call.failures.items())
        if call.end_reason == "error" and call.end_message:
            lines.append(f"  error: {cut(visible(call.end_message))}")
        if call.judgement is not None:
            lines.extend(f"  reason: {cut(visible(r))}" for r in call.judgement.reasons)
        lines.extend(_case_lines(call))
        # A three-layer case's own expectation repeats its axes: only an `expect:` is shown.
        if call.expect is not None and call.expect_met is False and call.expect.source == "expect":
            for check in call.expect.failed():
                lines.append(f"  expected {check.name} not met: {cut(visible(check.why))}")
        excerpt = self._excerpt(call)
        if excerpt:
            lines.append(f"  transcript (last {len(excerpt)} turns):")
            lines.extend(f"    {line}" for line in excerpt)
        return lines

    def _excerpt(self, call: CallResult) -> list[str]:
        if call.id not in self._excerpts:
            self._excerpts[call.id] = transcript_excerpt(self.run_id, call.id, self.db)
        return self._excerpts[call.id]

    def __repr__(self) -> str:
        # What pytest prints for `assert result.passed`: short, the rest is in explain().
        state = "passed" if self.passed else f"{len(self.failing_calls)} failing"
        cause = f", root cause {self.root_cause}" if self.root_cause else ""
        return (
            f"<PolygonResult {self.label}: {state} of {len(self.calls)} calls, "
            f"verdict {self.verdict}{cause}, run {self.run_id}>"
        )


def _brief(call: CallResult) -> str:
    """One call's failure in a few words: its verdict, root cause and failed axes."""
    parts = [f"verdict {call.verdict or 'not judged'}"]
    if call.not_exercised is not None:
        parts.append("not exercised")
    parts.extend(f"{role} failed" for role in call.failures)
    if call.root_cause is not None:
        parts.append(f"root cause {call.root_cause}")
    failed = [name for name, held in call.axes.items() if not held]
    if failed:
        parts.append(f"axes failed: {', '.join(failed)}")
    if call.expect_met is False and not failed:
        parts.append("expected outcome not met")
    return f"{call.id} ({', '.join(parts)})"


def _composite(call: CallResult) -> str:
    return f", composite {call.composite:.1f}" if call.composite is not None else ""


def _case_lines(call: CallResult) -> list[str]:
    case = call.case
    if case is None:
        return []
    lines = [
        f"  axis {name} failed: {cut(visible(axis.why))}"
        for name, axis in case.axes.items()
        if not axis.passed
    ]
    cause = case.root_cause
    if cause is not None:
        layer = f" (repair the {cause.layer} layer)" if cause.layer is not None else ""
        lines.append(f"  root cause {cause.cause}{layer}")
        if cause.evidence:
            shown = json.dumps(cause.evidence, ensure_ascii=False, default=str, sort_keys=True)
            lines.append(f"    evidence: {cut(visible(shown), EVIDENCE_CHARS)}")
    return lines


def transcript_excerpt(run_id: str, call_id: str, db: str | None) -> list[str]:
    """The last turns of a stored call, one line each, speaker first; [] when it cannot be
    read (a message must not fail because its excerpt did)."""
    from polygon_voice.api import PolygonError, read_conversation

    try:
        record = read_conversation(run_id, call_id, db=db)
    except PolygonError:
        return []
    lines = []
    for turn in record.turns[-EXCERPT_TURNS:]:
        heard = "" if turn.heard == turn.text else f"  (heard: {cut(visible(turn.heard))})"
        cut_off = " [cut off]" if turn.interrupted else ""
        lines.append(f"{turn.speaker}: {cut(visible(turn.text))}{cut_off}{heard}")
    return lines


def visible(text: str) -> str:
    """`text` with control characters written as escapes: an agent's words cannot move a
    terminal's cursor or break a JUnit file."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode() for ch in text)


def cut(text: str, limit: int = TURN_CHARS) -> str:
    return text if len(text) <= limit else f"{text[: limit - 1]}…"
