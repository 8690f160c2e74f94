"""The deterministic judge (RUB-8): scores the eight criteria from the trace, no model.

The embedded default. Every result it makes carries `judge: deterministic`; its rules are
documented criterion by criterion in docs/judging.md. Being deterministic, k repeats give
the same scores (and so the same median).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from polygon_voice.judge.base import JudgeInput, RawScore
from polygon_voice.judge.goal import goal_achievement
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


class DeterministicJudge:
    """Rules over the trace, the persona's facts, the backend and the conversation checks."""

    name = "deterministic"

    def score(self, given: JudgeInput, rubric: Rubric) -> Mapping[str, RawScore]:
        """The rubric's criteria it has a rule for; a custom criterion it lacks is `missing`."""
        return {c.id: RULES[c.id](given) for c in rubric.criteria if c.id in RULES}
