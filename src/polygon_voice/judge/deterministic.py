"""The deterministic judge (RUB-8): scores the eight criteria from the trace, no model.

The embedded default. Every result it makes carries `judge: deterministic`; its rules are
documented criterion by criterion in docs/judging.md. Being deterministic, k repeats give
the same scores (and so the same median).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from polygon_voice.judge import expectations
from polygon_voice.judge.base import JudgeInput, RawScore
from polygon_voice.judge.evidence import criterion_evidence
from polygon_voice.judge.goal import goal_achievement
from polygon_voice.judge.promoted import criterion_score
from polygon_voice.judge.real_call import real_call_rules
from polygon_voice.judge.rubric import Rubric
from polygon_voice.judge.rules import (
    dialogue_quality,
    factual_accuracy,
    instruction_following,
    persona_tone,
    robustness,
    safety_compliance,
    tool_use_quality,
)

RULES: dict[str, Callable[[JudgeInput], RawScore]] = {
    "goal_achievement": goal_achievement,
    "instruction_following": instruction_following,
    "tool_use_quality": tool_use_quality,
    "factual_accuracy": factual_accuracy,
    "dialogue_quality": dialogue_quality,
    "robustness": robustness,
    "safety_compliance": safety_compliance,
    "persona_tone": persona_tone,
}

# Rule set 2 (rubric v3 on) replaces these criteria; the rest are as in rule set 1.
RULES_2: dict[str, Callable[[JudgeInput], RawScore]] = {
    **RULES,
    "goal_achievement": expectations.goal_achievement,
    "factual_accuracy": expectations.factual_accuracy,
    "tool_use_quality": expectations.tool_use_quality,
    "safety_compliance": expectations.safety_compliance,
}
RULE_SETS = {1: RULES, 2: RULES_2}


class DeterministicJudge:
    """Rules over the trace, the persona's facts, the backend and the conversation checks."""

    name = "deterministic"

    def score(self, given: JudgeInput, rubric: Rubric) -> Mapping[str, RawScore]:
        """The rubric's criteria it has a rule for; a custom criterion it lacks is `missing`.

        A criterion promoted from a probe is scored from the probe's rule (judge/promoted.py).
        """
        rules = RULE_SETS[rubric.rules]
        if given.real_call:
            rules = real_call_rules(rules)
        # The score and reason are the rule's; the evidence is what bears on each criterion.
        out = {
            c.id: criterion_evidence(c.id, given, rules[c.id](given))
            for c in rubric.criteria
            if c.id in rules and not c.probe
        }
        for criterion in rubric.promoted_criteria:
            assert criterion.probe is not None
            out[criterion.id] = criterion_score(criterion.probe, given)
        return out
