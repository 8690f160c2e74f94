"""Infrastructure failures of a run, counted per role: which model or endpoint failed how often.

A role is one of the parts a run asks of a model or a service: the agent (its own model or
endpoint could not be reached), the caller model, the judge model and the probe model. Such
a failure says nothing about the agent's behaviour, so it is counted apart from the verdicts;
the first failure of each role is reported as it happens, the rest are only counted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from polygon_voice.api.errors import agent_infrastructure_error
from polygon_voice.checks.exercised import caller_failed
from polygon_voice.judge.run import judge_answers_unusable, judge_model_failed
from polygon_voice.model import ConversationResult, EndReason
from polygon_voice.model.judgement import Judgement
from polygon_voice.model.probes import ProbeResults

ROLES = ("agent", "caller", "judge", "probes")
# How a probe answer records that its model never answered (probes/llm.py).
PROBE_UNANSWERED = "unanswered: "
# How the engine's end message of a call whose caller model failed begins (conversation/).
CALLER_FAILED_END = "the caller failed: "


def call_failures(
    end_reason: str,
    end_message: str,
    judgement: Judgement | None = None,
    probe_reasons: Iterable[str] = (),
) -> dict[str, str]:
    """The infrastructure failures of one stored call, by role, each with its whole error:
    read from what is stored with the call (its end message, its judgement, its probe
    answers), so `polygon show`, report.json and the API say the same. {} when none failed."""
    found: dict[str, str] = {}
    if end_reason == EndReason.ERROR.value:
        agent_error = agent_infrastructure_error(end_message)
        if agent_error is not None:
            found["agent"] = agent_error
    if end_reason == EndReason.CALLER_HANGUP.value and end_message.startswith(CALLER_FAILED_END):
        found["caller"] = end_message.removeprefix(CALLER_FAILED_END)
    if judgement is not None:
        judge_error = judge_model_failed(judgement) or judge_answers_unusable(judgement)
        if judge_error is not None:
            found["judge"] = judge_error
    unanswered = next((r for r in probe_reasons if r.startswith(PROBE_UNANSWERED)), None)
    if unanswered is not None:
        found["probes"] = unanswered.removeprefix(PROBE_UNANSWERED)
    return found


OnFirstFailure = Callable[[str, str], None]


@dataclass
class RoleFailure:
    """How often one role failed during a run, and its first error."""

    role: str
    count: int = 0
    first_error: str = ""


@dataclass
class RoleFailures:
    """Failures per role; `on_first(role, error)` is called once per role, at its first."""

    by_role: dict[str, RoleFailure] = field(default_factory=dict)
    on_first: OnFirstFailure | None = None

    def add(self, role: str, error: str) -> None:
        """Count one failure of `role` (one call it failed for)."""
        failure = self.by_role.get(role)
        if failure is None:
            failure = self.by_role[role] = RoleFailure(role, first_error=error)
            if self.on_first is not None:
                self.on_first(role, error)
        failure.count += 1

    def count(self, role: str) -> int:
        """Calls `role` failed for (0 when it never failed)."""
        failure = self.by_role.get(role)
        return failure.count if failure is not None else 0

    @property
    def total(self) -> int:
        """Failures of every role together."""
        return sum(f.count for f in self.by_role.values())

    def in_order(self) -> list[RoleFailure]:
        """The roles that failed, in the fixed order of ROLES."""
        return [self.by_role[r] for r in ROLES if r in self.by_role]

    def add_call(self, result: ConversationResult) -> None:
        """Count the agent's and the caller's infrastructure failures in one finished call."""
        if result.end.reason is EndReason.ERROR:
            agent_error = agent_infrastructure_error(result.end.message)
            if agent_error is not None:
                self.add("agent", agent_error)
        caller_error = caller_failed(result)
        if caller_error is not None:
            self.add("caller", caller_error.removeprefix("the caller model failed: "))

    def add_probes(self, results: ProbeResults) -> None:
        """Count a call whose probe model failed to answer at least one probe."""
        for answer in results.answers:
            if answer.reason.startswith(PROBE_UNANSWERED):
                self.add("probes", answer.reason.removeprefix(PROBE_UNANSWERED))
                return
