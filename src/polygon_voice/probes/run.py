"""The probe stage as the runner calls it: after the judge, never feeding back into it.

`probe_stage` reads only the conversation (and the case, for AX-6's confirmation logic) and
returns a `ProbeResults`; it is given no judgement and returns none, so probes cannot move
the composite or the verdict (PROBE-3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polygon_voice.checks.evidence import CaseView
from polygon_voice.checks.exercised import not_played
from polygon_voice.checks.score import is_case
from polygon_voice.model import ConversationResult, Scenario, ToolSpec
from polygon_voice.model.probes import ProbeAnswer, ProbeResults
from polygon_voice.probes.definition import Probe
from polygon_voice.probes.deterministic import BUILTIN_PROBES, ProbeInput, answer_rule
from polygon_voice.probes.llm import ask_probe

if TYPE_CHECKING:
    from polygon_voice.llm import LLMClient


@dataclass(frozen=True)
class Probing:
    """Which probes a run asks, and the model for those without a rule."""

    probes: Sequence[Probe] = field(default_factory=lambda: BUILTIN_PROBES)
    client: LLMClient | None = None

    @property
    def needs_llm(self) -> bool:
        """Whether some probe has no rule and must be asked of a model."""
        return any(p.rule is None for p in self.probes)


def deterministic_answer(probe: Probe, given: ProbeInput) -> ProbeAnswer:
    """A rule's answer, labelled with the probe's id, wording hash and polarity."""
    assert probe.rule is not None
    found = answer_rule(probe.rule, given)
    turn = found.turn
    return ProbeAnswer(
        id=probe.id,
        hash=probe.hash,
        polarity=probe.polarity,
        answer=found.answer,
        source="deterministic",
        evidence=turn.text if turn is not None else "",
        turn=turn.index if turn is not None else None,
        reason=found.reason,
    )


def _not_asked(probe: Probe, reason: str) -> ProbeAnswer:
    """A rule-less probe's answer for a call that did not play: not applicable, no model."""
    return ProbeAnswer(
        id=probe.id,
        hash=probe.hash,
        polarity=probe.polarity,
        answer="not_applicable",
        source="deterministic",
        reason=reason,
    )


async def probe_stage(
    probing: Probing,
    result: ConversationResult,
    scenario: Scenario | None = None,
    tools: Mapping[str, ToolSpec] | None = None,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    real_call: bool = False,
) -> ProbeResults:
    """Every probe's answer for one conversation (stage "probes"); `real_call`: an imported
    call, for which the rules that read the script, the persona or injected noise answer
    not applicable (IMP-2)."""
    case = None
    if scenario is not None and is_case(scenario):
        records = {c: {k: dict(r) for k, r in rs.items()} for c, rs in (initial or {}).items()}
        case = CaseView(result, scenario, tools or {}, records)
    given = ProbeInput(result, case, real_call)
    unplayed = not_played(result)
    answers: list[ProbeAnswer] = []
    for probe in probing.probes:
        if probe.rule is not None:
            answers.append(deterministic_answer(probe, given))
        elif unplayed is not None:
            # No model request about a call the caller never took part in: nothing to read.
            answers.append(_not_asked(probe, f"not exercised: {unplayed}"))
        elif probing.client is not None:
            answers.append(await ask_probe(probing.client, probe, result))
        else:
            raise ValueError(f"probe {probe.id} needs a model and the run has none configured")
    return ProbeResults(answers=answers)
