"""Promoted probes in judging (PROBE-6): the probe's answer scores a criterion or fires a gate.

A plain probe stays in its own pass and never touches the verdict (PROBE-3); once promoted,
its question is part of the rubric. A criterion scores 5 for the right answer (per polarity),
1 for the wrong one and is unscored when the probe does not apply (left out, RUB-4a). A gate
fires on the wrong answer, never on not applicable.

Who answers: the deterministic judge uses the probe's rule and leaves a probe without one
unscored ("needs the LLM judge"); the LLM judge answers promoted criteria in its own schema.
A gate's answer comes from the probe's rule whenever it has one, whatever the judge (a rule
is cheaper and repeatable), else from the LLM judge's answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from polygon_voice.judge.rubric import PromotedProbe, Rubric

if TYPE_CHECKING:
    from polygon_voice.judge.base import JudgeInput, JudgeRun, RawScore

NEEDS_LLM = "needs the LLM judge"


@dataclass(frozen=True)
class GateAnswer:
    """A promoted gate's answer for one conversation (None: nobody could answer it)."""

    probe: PromotedProbe
    answer: str | None
    reason: str

    @property
    def fired(self) -> bool:
        """Whether the answer is the wrong one (never on not applicable or no answer)."""
        return self.probe.failed(self.answer)


def rule_answer(probe: PromotedProbe, given: JudgeInput) -> tuple[str, str, int | None, str]:
    """The probe's rule's answer: (answer, reason, turn, quoted text); needs `probe.rule`."""
    # Imported on use: the probes package imports the rubric module, and the rules read
    # checks that are heavier than the judge package needs to load.
    from polygon_voice.checks.evidence import CaseView
    from polygon_voice.checks.score import is_case
    from polygon_voice.probes.deterministic import ProbeInput, answer_rule

    assert probe.rule is not None
    case = None
    if given.scenario is not None and is_case(given.scenario):
        initial = given.backend_initial
        records = {c: {k: dict(r) for k, r in rs.items()} for c, rs in initial.items()}
        case = CaseView(given.result, given.scenario, given.tools, records)
    found = answer_rule(probe.rule, ProbeInput(given.result, case, real_call=given.real_call))
    turn = found.turn
    text = turn.text if turn is not None else ""
    return found.answer, found.reason, turn.index if turn is not None else None, text


def criterion_score(probe: PromotedProbe, given: JudgeInput) -> RawScore:
    """The deterministic judge's raw score for a promoted criterion."""
    from polygon_voice.judge.base import RawScore

    if probe.rule is None:
        # Unreadable rather than left out: unscored (renormalised), not `missing` (= 1).
        return RawScore(None, reason=f"{NEEDS_LLM}: probe {probe.id} has no deterministic rule")
    answer, reason, turn, text = rule_answer(probe, given)
    why = f"probe {probe.id} answered {answer} (rule {probe.rule}): {reason}"
    if given.real_call and answer == "not_applicable":
        # On a real call the probe's not applicable is the record's limit, not a judge that
        # failed to score: left out as not applicable (IMP-2), never unscored or partial.
        from polygon_voice.judge.composite import NOT_APPLICABLE

        return RawScore(NOT_APPLICABLE, evidence=text, turn=turn, reason=f"not applicable: {why}")
    return RawScore(probe.score(answer), evidence=text, turn=turn, reason=why)


def gate_answers(rubric: Rubric, given: JudgeInput, runs: Sequence[JudgeRun]) -> list[GateAnswer]:
    """Each promoted gate's answer: its rule's, else the judge runs' majority answer."""
    out: list[GateAnswer] = []
    for probe in rubric.probe_gates:
        if probe.rule is not None:
            answer, reason, _, _ = rule_answer(probe, given)
            out.append(GateAnswer(probe, answer, f"rule {probe.rule}: {reason}"))
            continue
        said = [r.gate_answers[probe.id] for r in runs if probe.id in r.gate_answers]
        said = [a for a in said if a in ("yes", "no", "not_applicable")]
        if not said:
            out.append(GateAnswer(probe, None, f"{NEEDS_LLM}: probe {probe.id} has no rule"))
            continue
        # k repeats: the gate fires only when most answers are wrong, like a median would.
        wrong = sum(probe.failed(a) for a in said)
        if wrong * 2 > len(said):
            answer = "no" if probe.good_answer == "yes" else "yes"
        else:
            answer = probe.good_answer if probe.good_answer in said else "not_applicable"
        why = f"the judge answered {answer} ({wrong} of {len(said)} answers wrong)"
        out.append(GateAnswer(probe, answer, why))
    return out
