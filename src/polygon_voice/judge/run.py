"""The judge stage as the runner calls it: conversation checks, then the judgement."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.judge.base import Judge, JudgeInput, judge_conversation
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.judge.rubric import V2, Rubric
from polygon_voice.model import CaseScore, ConversationResult, Scenario, Suite
from polygon_voice.model.judgement import ConversationChecks, Judgement

JUDGES = ("deterministic",)
# Named so that `--judge llm` says what it is rather than "no such judge".
COMING = {"llm": "the LLM judge is not available yet; use --judge deterministic"}


class JudgeUnavailable(ValueError):
    """A judge name that cannot be used (unknown, or not built yet)."""


def judge_named(name: str) -> Judge:
    """The judge called `name`."""
    if name == "deterministic":
        return DeterministicJudge()
    raise JudgeUnavailable(COMING.get(name, f"no judge {name!r}; known: {', '.join(JUDGES)}"))


@dataclass(frozen=True)
class Judging:
    """How a run judges its conversations: which judge, which rubric, how many repeats."""

    judge: Judge = field(default_factory=DeterministicJudge)
    rubric: Rubric = V2
    repeats: int = 1


def judge_stage(
    judging: Judging,
    suite: Suite,
    scenario: Scenario,
    result: ConversationResult,
    case: CaseScore | None = None,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> tuple[ConversationChecks, Judgement]:
    """The conversation checks and the judgement of one call (stages conversation_checks, judge)."""
    checks = check_conversation(result, [*suite.forbidden_phrases, *scenario.forbidden_phrases])
    given = JudgeInput(result, scenario.persona, checks, case, initial or {})
    return checks, judge_conversation(judging.judge, judging.rubric, given, judging.repeats)
