"""The judge stage: rubrics, the composite, hard gates, the deterministic and LLM judges.

The LLM judge lives in `judge.llm` and is imported on use, so this package never loads the
LLM client.
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.judge.base import (
        AnyJudge,
        AsyncJudge,
        Judge,
        JudgeInput,
        JudgeRun,
        RawScore,
        build_judgement,
        judge_conversation,
        judge_conversation_async,
    )
    from polygon_voice.judge.composite import Composite, combine_repeats, composite, read_score
    from polygon_voice.judge.deterministic import DeterministicJudge
    from polygon_voice.judge.gates import fired_gates
    from polygon_voice.judge.rubric import (
        BUILTIN,
        DEFAULT_RUBRIC,
        MAX_JUDGE_REPEATS,
        V1,
        V2,
        V3,
        Rubric,
        RubricError,
        load_rubric,
    )
    from polygon_voice.judge.run import JUDGES, Judging, judge_stage, judge_stage_async
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.judge.base": (
                "AnyJudge",
                "AsyncJudge",
                "Judge",
                "JudgeInput",
                "JudgeRun",
                "RawScore",
                "build_judgement",
                "judge_conversation",
                "judge_conversation_async",
            ),
            "polygon_voice.judge.composite": (
                "Composite",
                "combine_repeats",
                "composite",
                "read_score",
            ),
            "polygon_voice.judge.deterministic": ("DeterministicJudge",),
            "polygon_voice.judge.gates": ("fired_gates",),
            "polygon_voice.judge.rubric": (
                "BUILTIN",
                "DEFAULT_RUBRIC",
                "MAX_JUDGE_REPEATS",
                "V1",
                "V2",
                "V3",
                "Rubric",
                "RubricError",
                "load_rubric",
            ),
            "polygon_voice.judge.run": ("JUDGES", "Judging", "judge_stage", "judge_stage_async"),
        },
    )

__all__ = [
    "BUILTIN",
    "DEFAULT_RUBRIC",
    "JUDGES",
    "MAX_JUDGE_REPEATS",
    "V1",
    "V2",
    "V3",
    "AnyJudge",
    "AsyncJudge",
    "Composite",
    "DeterministicJudge",
    "Judge",
    "JudgeInput",
    "JudgeRun",
    "Judging",
    "RawScore",
    "Rubric",
    "RubricError",
    "build_judgement",
    "combine_repeats",
    "composite",
    "fired_gates",
    "judge_conversation",
    "judge_conversation_async",
    "judge_stage",
    "judge_stage_async",
    "load_rubric",
    "read_score",
]
