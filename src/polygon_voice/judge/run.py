"""The judge stage as the runner calls it: conversation checks, then the judgement."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from polygon_voice.checks.conversation import check_conversation
from polygon_voice.checks.facts import CallFacts
from polygon_voice.judge.base import (
    AnyJudge,
    JudgeInput,
    judge_conversation,
    judge_conversation_async,
)
from polygon_voice.judge.deterministic import DeterministicJudge
from polygon_voice.judge.rubric import V3, Rubric
from polygon_voice.llm.usage import Usage
from polygon_voice.model import CaseScore, ConversationResult, ExpectResult, Scenario, Suite
from polygon_voice.model.judgement import ConversationChecks, Judgement

if TYPE_CHECKING:
    from polygon_voice.llm import LLMClient

JUDGES = ("deterministic", "llm")


class JudgeUnavailable(ValueError):
    """A judge name that cannot be used (unknown, or its model is not configured)."""


def judge_named(name: str, client: LLMClient | None = None) -> AnyJudge:
    """The judge called `name`; `llm` needs the `judge` role's client."""
    if name == "deterministic":
        return DeterministicJudge()
    if name == "llm":
        if client is None:
            raise JudgeUnavailable(
                "--judge llm needs a judge model: set POLYGON_JUDGE_MODEL (and POLYGON_BASE_URL) "
                "or llm.judge.model in the --llm-config file"
            )
        from polygon_voice.judge.llm import LLMJudge  # imports the LLM client only when used

        return LLMJudge(client)
    raise JudgeUnavailable(f"no judge {name!r}; known: {', '.join(JUDGES)}")


@dataclass(frozen=True)
class Judging:
    """How a run judges its conversations: which judge, which rubric, how many repeats."""

    judge: AnyJudge = field(default_factory=DeterministicJudge)
    rubric: Rubric = V3
    repeats: int = 1

    @property
    def usage(self) -> Usage | None:
        """What the judge's model calls cost (None for a judge without a model)."""
        usage = getattr(getattr(self.judge, "client", None), "usage", None)
        return usage if isinstance(usage, Usage) else None

    async def aclose(self) -> None:
        """Close a model judge's connections; nothing to do for the deterministic judge."""
        close = getattr(self.judge, "aclose", None)
        if close is not None:
            await close()


def judge_model_failed(judgement: Judgement) -> str | None:
    """The first error of a judgement whose judge model never answered a repeat (the
    endpoint kept failing: an infrastructure failure, not an answer); None otherwise.

    Only such a judgement left `unscored` is judged again by `polygon run --resume`; an
    answer that could not be read is the model's answer, and a rerun would replay it."""
    if judgement.prompt is None or None not in judgement.raw_answers:
        return None
    return judgement.errors[0] if judgement.errors else "the judge model did not answer"


# How a judge failure whose model answered, but unusably, begins (see judge_answers_unusable).
UNUSABLE_ANSWERS = "its answers could not be used: "


def judge_answers_unusable(judgement: Judgement) -> str | None:
    """The first error of a model judgement left `unscored` although the judge model did
    answer: no answer could be read (every repeat failed the schema or the score range).
    The judge role failed for this call as surely as when it never answered, and the run
    must say so; unlike that case, a rerun would replay the same answers."""
    if judgement.prompt is None or judgement.verdict != "unscored" or not judgement.errors:
        return None
    if None in judgement.raw_answers:
        return None  # never answered: judge_model_failed
    return f"{UNUSABLE_ANSWERS}{judgement.errors[0]}"


def judge_input(
    suite: Suite,
    scenario: Scenario,
    result: ConversationResult,
    case: CaseScore | None = None,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    expect: ExpectResult | None = None,
    real_call: bool = False,
) -> JudgeInput:
    """What a judge reads about one call, its conversation checks made (`real_call`: an
    imported call, IMP-2)."""
    phrases = (*suite.forbidden_phrases, *scenario.forbidden_phrases)
    facts = CallFacts(result)  # read once, for the checks and every rule of the judge
    checks = check_conversation(result, list(phrases), facts)
    return JudgeInput(
        result,
        scenario.persona,
        checks,
        case,
        initial or {},
        scenario,
        suite.tools,
        expect,
        real_call=real_call,
        forbidden_phrases=phrases,
        facts=facts,
    )


def judge_stage(
    judging: Judging,
    suite: Suite,
    scenario: Scenario,
    result: ConversationResult,
    case: CaseScore | None = None,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    expect: ExpectResult | None = None,
    real_call: bool = False,
) -> tuple[ConversationChecks, Judgement]:
    """The conversation checks and the judgement of one call (stages conversation_checks, judge).

    For a synchronous judge only; the runner uses `judge_stage_async`, which takes either.
    """
    given = judge_input(suite, scenario, result, case, initial, expect, real_call)
    checks = given.checks
    if hasattr(judging.judge, "run"):
        raise TypeError(f"the {judging.judge.name} judge is asynchronous: use judge_stage_async")
    judge: Any = judging.judge
    return checks, judge_conversation(judge, judging.rubric, given, judging.repeats)


async def judge_stage_async(
    judging: Judging,
    suite: Suite,
    scenario: Scenario,
    result: ConversationResult,
    case: CaseScore | None = None,
    initial: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    expect: ExpectResult | None = None,
    real_call: bool = False,
) -> tuple[ConversationChecks, Judgement]:
    """`judge_stage` for any judge, on the running event loop."""
    given = judge_input(suite, scenario, result, case, initial, expect, real_call)
    checks = given.checks
    judgement = await judge_conversation_async(
        judging.judge, judging.rubric, given, judging.repeats
    )
    return checks, judgement
