"""The judge stage: rubrics, the composite, hard gates and the deterministic judge."""

from polygon_voice.judge.base import Judge, JudgeInput, RawScore, judge_conversation
from polygon_voice.judge.composite import Composite, combine_repeats, composite, read_score
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.judge.gates import fired_gates
from polygon_voice.judge.rubric import (
    BUILTIN,
    DEFAULT_RUBRIC,
    V1,
    V2,
    Rubric,
    RubricError,
    load_rubric,
)
from polygon_voice.judge.run import JUDGES, Judging, judge_stage

__all__ = [
    "BUILTIN",
    "DEFAULT_RUBRIC",
    "JUDGES",
    "V1",
    "V2",
    "Composite",
    "DeterministicJudge",
    "Judge",
    "JudgeInput",
    "Judging",
    "RawScore",
    "Rubric",
    "RubricError",
    "combine_repeats",
    "composite",
    "fired_gates",
    "judge_conversation",
    "judge_stage",
    "load_rubric",
    "read_score",
]
