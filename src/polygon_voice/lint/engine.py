"""Run the tiers cheapest first, skip those that cannot run, and score the five axes."""

from __future__ import annotations

import asyncio

from polygon_voice.lint import pairs, rules
from polygon_voice.lint.lexicon import LANGUAGES, word_lists
from polygon_voice.lint.model import TIER_NAMES, Finding, LintReport, TierSkip, score_axes
from polygon_voice.lint.surprisal import surprisal, unavailable
from polygon_voice.lint.text import Prompt, detect_language
from polygon_voice.llm import LLMSettings

MAX_TIER = 4
TIER3_SKIP = "not built yet (planned: the optional `embeddings` extra)"


class LintError(Exception):
    """The lint cannot run as asked (unknown language)."""


def lint(
    text: str,
    *,
    max_tier: int = MAX_TIER,
    language: str | None = None,
    settings: LLMSettings | None = None,
) -> LintReport:
    """Lint a prompt: tier 1 always, then each tier up to `max_tier` that can run here."""
    lang = language or detect_language(text)
    if lang not in LANGUAGES:
        raise LintError(f"unknown language {lang!r}; supported: {', '.join(LANGUAGES)}")
    prompt = Prompt(text)
    lists = word_lists(lang)
    found = rules.rules_of(prompt, lists)
    findings: list[Finding] = [
        *rules.overload(prompt, found),
        *rules.diluted(prompt, found),
        *pairs.contradictions(prompt, found),
        *rules.vague(prompt, lists),
        *pairs.duplicates(prompt, lists),
    ]
    run, skipped = [1], []

    def skip(tier: int, reason: str) -> None:
        skipped.append(TierSkip(tier=tier, name=TIER_NAMES[tier], reason=reason))

    for tier in (2, 3, 4):
        why = _why_not(tier, max_tier, settings)
        if why is not None:
            skip(tier, why)
        elif tier == 2:
            findings.extend(surprisal(prompt, lang))
            run.append(2)
        elif tier == 4 and settings is not None:
            findings.extend(asyncio.run(_judge(prompt, findings, settings)))
            run.append(4)
    return LintReport(
        language=lang, axes=score_axes(findings), tiers_run=run, tiers_skipped=skipped
    )


def _why_not(tier: int, max_tier: int, settings: LLMSettings | None) -> str | None:
    if tier > max_tier:
        return f"--max-tier {max_tier}"
    if tier == 2:
        return unavailable()
    if tier == 3:
        return TIER3_SKIP
    if settings is None or not settings.is_configured("judge"):
        return "no judge model configured (set POLYGON_JUDGE_MODEL or llm.judge.model)"
    return None


async def _judge(prompt: Prompt, candidates: list[Finding], settings: LLMSettings) -> list[Finding]:
    # Imported here: the judge tier is the only one that needs the LLM client's code.
    from polygon_voice.lint.judge import judge

    return await judge(prompt, candidates, settings)
