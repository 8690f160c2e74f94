"""A run's results as typed objects, read from the store: no report.json needed."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.config import FailOn
from polygon_voice.api.errors import ExitCode

if TYPE_CHECKING:
    from polygon_voice.checks import RunSummary
    from polygon_voice.model import CaseScore, ExpectResult
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.model.probes import ProbeAnswer
    from polygon_voice.runner.failures import RoleFailure

# Verdicts from best to worst; `unscored` fails every --fail-on level (no score is no pass).
VERDICT_ORDER = ("pass", "warn", "fail", "unscored")


def trial_of(conversation_id: str, scenario: str) -> int:
    """The trial number in a conversation id `scenario#n` (n >= 1); 1 for any other id."""
    prefix = f"{scenario}#"
    number = conversation_id.removeprefix(prefix)
    # More than nine digits is no trial a run could plan (and a huge one costs a long parse).
    if number == conversation_id or not (number.isascii() and number.isdigit()) or len(number) > 9:
        return 1
    return max(1, int(number))


def call_passed(verdict: str | None, expect_met: bool | None) -> bool:
    """The pass of a call: verdict `pass` (what `--fail-on warn` lets through) and the expected
    outcome, where one is stated and the call exercised it, met."""
    return verdict == VERDICT_ORDER[0] and expect_met is not False


@dataclass(frozen=True)
class CallResult:
    """One stored call and what the later stages made of it."""

    id: str
    scenario: str
    end_reason: str
    end_message: str
    turns: int
    tool_calls: int
    judgement: Judgement | None = None  # the judge stage (None: not judged)
    case: CaseScore | None = None  # a three-layer case's axes and root cause
    expect: ExpectResult | None = None  # the scenario's expected outcome, checked
    probes: tuple[ProbeAnswer, ...] = ()

    @property
    def trial(self) -> int:
        """The call's trial of its scenario, 1-based: n of an id `scenario#n`, else 1 (a
        scenario run once, runs stored before trials were numbered, imported calls)."""
        return trial_of(self.id, self.scenario)

    @property
    def verdict(self) -> str | None:
        """pass, warn, fail or unscored; None when the call was not judged."""
        return self.judgement.verdict if self.judgement is not None else None

    @property
    def composite(self) -> float | None:
        """The rubric's composite 0-100; None when nothing could be scored."""
        return self.judgement.composite if self.judgement is not None else None

    @property
    def axes(self) -> dict[str, bool]:
        """A three-layer case's six axes, passed or not; empty for other scenarios."""
        return {} if self.case is None else {n: a.passed for n, a in self.case.axes.items()}

    @property
    def root_cause(self) -> str | None:
        """The root cause of a failed three-layer case; None otherwise."""
        cause = self.case.root_cause if self.case is not None else None
        return cause.cause if cause is not None else None

    @property
    def failures(self) -> dict[str, str]:
        """The roles whose model or endpoint failed for this call (agent, caller, judge,
        probes), each with its whole stored error; {} when none did."""
        from polygon_voice.runner.failures import call_failures

        reasons = [answer.reason for answer in self.probes]
        return call_failures(self.end_reason, self.end_message, self.judgement, reasons)

    @property
    def not_exercised(self) -> str | None:
        """Why the call did not test the agent (its caller failed or never spoke, its script
        did not play, no agent could win it); None when it was exercised."""
        judged = self.judgement.reasons if self.judgement is not None else []
        prefix = "not exercised: "
        said = next((r.removeprefix(prefix) for r in judged if r.startswith(prefix)), None)
        for reason in (
            said,
            self.case.not_exercised if self.case is not None else None,
            self.expect.not_exercised if self.expect is not None else None,
        ):
            if reason is not None:
                return reason
        return None

    @property
    def expect_met(self) -> bool | None:
        """Whether the expected outcome held; None when the scenario states none or the call
        was not exercised."""
        if self.expect is None or self.expect.not_exercised is not None:
            return None
        return self.expect.met

    @property
    def passed(self) -> bool:
        """Whether the call passed: its verdict is `pass` (the rule of `--fail-on warn`) and
        its expected outcome, when the scenario states one, was met. The pass of repeated
        trials and of comparisons (docs/experiments.md)."""
        return call_passed(self.verdict, self.expect_met)

    def to_dict(self) -> dict[str, Any]:
        """The call as plain JSON data (the `calls` of `polygon run --json`)."""
        judgement = self.judgement
        return {
            "id": self.id,
            "scenario": self.scenario,
            "trial": self.trial,
            "end_reason": self.end_reason,
            "end_message": self.end_message,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "verdict": self.verdict,
            "composite": self.composite,
            "gates_failed": list(judgement.gates_failed) if judgement is not None else [],
            "axes": self.axes,
            "root_cause": self.root_cause,
            "expect_met": self.expect_met,
            "not_exercised": self.not_exercised,
            "failures": self.failures,
            "probes": {answer.id: answer.answer for answer in self.probes},
        }

    def fails(self, fail_on: FailOn) -> bool:
        """Whether this call's verdict is at or below `fail_on` (unscored always is)."""
        verdict = self.verdict or "unscored"
        return VERDICT_ORDER.index(verdict) >= VERDICT_ORDER.index(fail_on)


class Packer:
    """Packs one stage's data of a run's calls as compressed JSON text, each call's against the
    first call's (a zlib preset dictionary), and validates it again when it is read.

    A validated stage is several times the size of its JSON text (a judgement with its eight
    criteria ~11 KB); kept for every call, the models made the results of a 10,000-call run
    ~250 MB (docs/performance.md, "Memory over model-played runs"). The calls of a run repeat
    most of their stage's text (criteria, rubric, the judge's instructions), so against the
    first one a judgement packs into a few hundred bytes.
    """

    __slots__ = ("_load", "_zdict")

    # An 8 KiB window and a small memory level: a new compressor per call stays cheap.
    _WBITS, _LEVEL, _MEMLEVEL = 13, 1, 4

    def __init__(self, load: Callable[[Any], Any]) -> None:
        self._load = load
        self._zdict: bytes | None = None

    def pack(self, data: Any) -> Packed:
        """`data` (the stage's stored JSON data) packed."""
        text = json.dumps(data, separators=(",", ":")).encode()
        if self._zdict is None:
            self._zdict = text
        compressor = zlib.compressobj(
            self._LEVEL, zlib.DEFLATED, self._WBITS, self._MEMLEVEL, zdict=self._zdict
        )
        return Packed(compressor.compress(text) + compressor.flush(), self)

    def unpack(self, packed: bytes) -> Any:
        """The stage's model, validated from its data as when it was first read."""
        assert self._zdict is not None  # set by the first pack
        decompressor = zlib.decompressobj(self._WBITS, zdict=self._zdict)
        text = decompressor.decompress(packed) + decompressor.flush()
        return self._load(json.loads(text))


class Packed:
    """One call's stage, packed by its stage's `Packer`."""

    __slots__ = ("_data", "_packer")

    def __init__(self, data: bytes, packer: Packer) -> None:
        self._data = data
        self._packer = packer

    def value(self) -> Any:
        """The stage's model, validated anew."""
        return self._packer.unpack(self._data)


def _stage_field(name: str, empty: Any) -> property:
    """A field of `StoredCallResult` that may hold a `Packed` stage (validated when read)."""
    key = f"_{name}"

    def get(self: StoredCallResult) -> Any:
        value = self.__dict__.get(key, empty)
        return value.value() if isinstance(value, Packed) else value

    def set_(self: StoredCallResult, value: Any) -> None:
        # The frozen dataclass's __init__ (also under dataclasses.replace) sets fields here.
        self.__dict__[key] = value
        self.__dict__.pop("_known", None)  # a stage set anew: nothing precomputed holds

    return property(get, set_)


class StoredCallResult(CallResult):
    """A `CallResult` read from the store whose stages stay packed until they are read.

    It reads, compares and copies as a `CallResult`; `judgement`, `case`, `expect` and
    `probes` are validated from their stored data on each read (so hold on to the value when
    reading one often). The verdict, composite and why the call was not exercised, which the
    run's totals read for every call, are worked out once when it is built (`stored`).
    """

    judgement = _stage_field("judgement", None)
    case = _stage_field("case", None)
    expect = _stage_field("expect", None)
    probes = _stage_field("probes", ())

    @classmethod
    def stored(cls, call: CallResult, stages: dict[str, Packed]) -> StoredCallResult:
        """`call` (read whole from the store) kept with its stages packed: its verdict,
        composite and why it was not exercised are taken from it now."""
        made = cls(call.id, call.scenario, call.end_reason, call.end_message, call.turns,
                   call.tool_calls)  # fmt: skip
        for name, packed in stages.items():
            made.__dict__[f"_{name}"] = packed
        made.__dict__["_known"] = (call.verdict, call.composite, call.not_exercised)
        return made

    def __eq__(self, other: object) -> bool:
        # Equal to a plain CallResult of the same fields, as the plain one it stands for.
        if not isinstance(other, CallResult):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(CallResult))

    __hash__ = CallResult.__hash__

    def _precomputed(self, name: str) -> tuple[bool, Any]:
        known = self.__dict__.get("_known")
        if known is None:
            return False, None
        return True, known[("verdict", "composite", "not_exercised").index(name)]

    @property
    def verdict(self) -> str | None:
        """pass, warn, fail or unscored; None when the call was not judged."""
        found, value = self._precomputed("verdict")
        return value if found else super().verdict

    @property
    def composite(self) -> float | None:
        """The rubric's composite 0-100; None when nothing could be scored."""
        found, value = self._precomputed("composite")
        return value if found else super().composite

    @property
    def not_exercised(self) -> str | None:
        """Why the call did not test the agent; None when it was exercised."""
        found, value = self._precomputed("not_exercised")
        return value if found else super().not_exercised


@dataclass(frozen=True)
class ProbeSummary:
    """One probe over the run's calls: how often it was answered yes, no, not applicable."""

    id: str
    polarity: str
    yes: int
    no: int
    not_applicable: int
    compliance: float | None  # the share of applicable calls where the agent complied


@dataclass(frozen=True)
class RunResult:
    """What one run (or resumed run) produced; every call of the run, not only this time's."""

    run_id: str
    suite: str
    agent: str  # credentials masked
    status: str  # finished (an interrupted run raises RunInterrupted instead)
    calls: tuple[CallResult, ...]
    calls_run: int  # calls played (or judged again) by this invocation
    cases: RunSummary  # the three-layer axes, fix list and release gate over the cases
    expectations: dict[str, int]  # met / not_met / not_exercised
    failures: tuple[RoleFailure, ...] = ()  # infrastructure failures per role, this invocation
    usage: dict[str, Any] | None = None  # model calls and tokens per role; None: no model
    probes: tuple[ProbeSummary, ...] = ()
    report_path: Path | None = None
    transcripts_path: Path | None = None
    judgement_set: str = ""  # the judge stage's set these verdicts come from ("": the run's)
    errors: tuple[tuple[str, str], ...] = ()  # (call id, message) of calls ended in error
    turns_run: int = 0  # turns of the calls played by this invocation
    tool_calls_run: int = 0

    @property
    def verdicts(self) -> dict[str, int]:
        """Calls per verdict (pass, warn, fail, unscored), judged calls only."""
        counts = Counter(c.verdict for c in self.calls if c.verdict is not None)
        return {v: counts[v] for v in VERDICT_ORDER if counts[v]}

    @property
    def mean_composite(self) -> float | None:
        """The mean composite over the calls that have one; None when none has."""
        values = [c.composite for c in self.calls if c.composite is not None]
        return sum(values) / len(values) if values else None

    @property
    def gate(self) -> dict[str, Any] | None:
        """The release gate over the three-layer cases; None when the suite has none."""
        return self.cases.gate() if self.cases.seen else None

    @property
    def gate_passed(self) -> bool:
        """Whether the release gate passed (False when no case was exercised)."""
        return bool(self.cases.total and self.cases.gate()["passed"])

    @property
    def infrastructure_failed(self) -> bool:
        """Whether a model or endpoint failed for at least one call (exit 3)."""
        return any(f.count for f in self.failures)

    @property
    def not_exercised(self) -> int:
        """Calls that did not test the agent (see `CallResult.not_exercised`)."""
        return sum(call.not_exercised is not None for call in self.calls)

    @property
    def nothing_exercised(self) -> bool:
        """Whether the run has calls and none of them tested the agent (exit 3): every
        caller failed or hung up before saying anything, or no script played."""
        return bool(self.calls) and self.not_exercised == len(self.calls)

    def to_dict(self) -> dict[str, Any]:
        """The results as plain JSON data (`polygon run --json`; keys in docs/cli.md)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite,
            "agent": self.agent,
            "status": self.status,
            "judgement_set": self.judgement_set,
            "calls_run": self.calls_run,
            "verdicts": self.verdicts,
            "mean_composite": self.mean_composite,
            "expectations": self.expectations,
            "not_exercised": self.not_exercised,
            "release_gate": self.gate,
            "failures": [
                {"role": f.role, "count": f.count, "first_error": f.first_error}
                for f in self.failures
            ],
            "probes": [
                {
                    "id": p.id,
                    "polarity": p.polarity,
                    "yes": p.yes,
                    "no": p.no,
                    "not_applicable": p.not_applicable,
                    "compliance": p.compliance,
                }
                for p in self.probes
            ],
            "usage": self.usage,
            "report": str(self.report_path) if self.report_path is not None else None,
            "transcripts": str(self.transcripts_path) if self.transcripts_path else None,
            "calls": [call.to_dict() for call in self.calls],
        }

    def failing_calls(self, fail_on: FailOn) -> list[CallResult]:
        """The calls whose verdict is at or below `fail_on` (unscored and unjudged included)."""
        return [c for c in self.calls if c.fails(fail_on)]

    def only(self, scenarios: Iterable[str]) -> RunResult:
        """The results of the calls of the scenarios with these ids (every trial of each),
        with the three-layer summary, release gate, expectations and probe summaries counted
        over those calls alone; the run's other attributes are kept."""
        from dataclasses import replace

        from polygon_voice.api.collect import summarised

        wanted = set(scenarios)
        kept = summarised(tuple(c for c in self.calls if c.scenario in wanted))
        return replace(
            self,
            calls=kept.calls,
            cases=kept.cases,
            expectations=kept.expectations,
            probes=kept.probes,
        )

    def below_composite(self, minimum: float) -> bool:
        """Whether the mean composite is below `minimum` (or there is none to compare)."""
        mean = self.mean_composite
        return mean is None or mean < minimum

    def exit_code(
        self,
        *,
        fail_on: FailOn | None = None,
        min_composite: float | None = None,
        gate: bool = False,
    ) -> ExitCode:
        """The exit code `polygon run` gives this result: infrastructure failures, or a run
        in which no call was exercised so that nothing was tested (3), before verdicts (1: a
        call at or below `fail_on`, the mean composite below `min_composite`, or the release
        gate failed when `gate`), else 0."""
        if self.infrastructure_failed or self.nothing_exercised:
            return ExitCode.INFRASTRUCTURE
        if fail_on is not None and self.failing_calls(fail_on):
            return ExitCode.VERDICTS_FAILED
        if min_composite is not None and self.below_composite(min_composite):
            return ExitCode.VERDICTS_FAILED
        if gate and not self.gate_passed:
            return ExitCode.VERDICTS_FAILED
        return ExitCode.OK
