"""Personas from an agent's prompt (SIM-2, SIM-3): by a model, one request each, or without one.

`generate_personas` plans the batch (types and outcomes in turn, a seeded difficulty) and
makes each persona: with an LLM client, one request per persona, run concurrently, and a
failed request fails only its persona (returned in `failures`); without a client,
the deterministic generator reads the prompt's task and slots. Every persona is bound to
the content hash of the prompt it came from: when the file's hash changes it is stale.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from polygon_voice.llm import LLMClient, LLMError
from polygon_voice.llm.usage import RoleUsage
from polygon_voice.model.persona import Outcome, Persona, PersonaType
from polygon_voice.scenario.persona_deterministic import GENERATOR, deterministic_persona
from polygon_voice.scenario.persona_llm import generator_name, llm_persona
from polygon_voice.scenario.persona_plan import (
    ALL_OUTCOMES,
    ALL_TYPES,
    PersonaPlan,
    plan_personas,
    replan,
)
from polygon_voice.scenario.prompt_reading import read_prompt
from polygon_voice.seeding import content_hash

log = logging.getLogger("polygon_voice.personas")

PersonaStatus = Literal["current", "stale", "missing"]
# Called as each persona is done: its plan, and the persona (None when it failed).
OnDone = Callable[[PersonaPlan, Persona | None], None]

__all__ = [
    "ALL_OUTCOMES",
    "ALL_TYPES",
    "GeneratedPersona",
    "GenerationFailure",
    "GenerationResult",
    "PersonaPlan",
    "PersonaStatus",
    "generate_personas",
    "make_personas",
    "persona_status",
    "prompt_hash_of",
    "replan",
    "usage_line",
]


@dataclass(frozen=True)
class GeneratedPersona:
    """A persona made for a plan, and by what (`deterministic` or `llm:<model>`)."""

    plan: PersonaPlan
    persona: Persona
    generator: str
    # What this persona's own model requests spent (None without a model): the answered
    # requests and their tokens; retries and failed attempts are in the batch's `usage`.
    usage: RoleUsage | None = None


@dataclass(frozen=True)
class GenerationFailure:
    """A persona that could not be made, and why."""

    plan: PersonaPlan
    message: str


@dataclass
class GenerationResult:
    """The personas made (in plan order), the failures, and the prompt's content hash."""

    prompt_hash: str
    personas: list[GeneratedPersona] = field(default_factory=list)
    failures: list[GenerationFailure] = field(default_factory=list)
    # What the model requests of this batch spent (None without a model), retries included.
    usage: RoleUsage | None = None


async def generate_personas(
    prompt_text: str,
    n: int,
    types: Sequence[PersonaType] = ALL_TYPES,
    outcomes: Sequence[Outcome] = ALL_OUTCOMES,
    *,
    client: LLMClient | None,
    seed: int = 0,
    start: int = 0,
    language: str | None = None,
    concurrency: int = 8,
    on_done: OnDone | None = None,
) -> GenerationResult:
    """`n` personas from the prompt: by `client`, one request each, or deterministically.

    `language` defaults to the prompt's own (en, de, hr or ru, read from its words);
    `start` is the number of personas the prompt already has (see `plan_personas`).
    """
    plans = plan_personas(
        n,
        types=types,
        outcomes=outcomes,
        language=language or read_prompt(prompt_text).language,
        seed=seed,
        prompt_hash=content_hash(prompt_text),
        start=start,
    )
    return await make_personas(
        prompt_text, plans, client=client, concurrency=concurrency, on_done=on_done
    )


async def make_personas(
    prompt_text: str,
    plans: Sequence[PersonaPlan],
    *,
    client: LLMClient | None,
    concurrency: int = 8,
    on_done: OnDone | None = None,
) -> GenerationResult:
    """One persona per plan; with a client at most `concurrency` requests at once."""
    result = GenerationResult(prompt_hash=content_hash(prompt_text))
    if client is None:
        reading = read_prompt(prompt_text)
        for plan in plans:
            persona = deterministic_persona(reading, plan)
            result.personas.append(GeneratedPersona(plan, persona, GENERATOR))
            if on_done is not None:
                on_done(plan, persona)
        return result
    limit = asyncio.Semaphore(max(1, concurrency))
    before = client.usage.total
    outcomes = await asyncio.gather(
        *(_by_model(client, prompt_text, plan, limit, on_done) for plan in plans)
    )
    result.usage = _spent(before, client.usage.total)
    for plan, (made, spent) in zip(plans, outcomes, strict=True):
        if isinstance(made, Persona):
            result.personas.append(GeneratedPersona(plan, made, generator_name(client), spent))
        else:
            result.failures.append(GenerationFailure(plan, made))
    return result


async def _by_model(
    client: LLMClient,
    prompt_text: str,
    plan: PersonaPlan,
    limit: asyncio.Semaphore,
    on_done: OnDone | None,
) -> tuple[Persona | str, RoleUsage]:
    """The persona, or the message of the error that failed it (this persona only), and
    what its answered requests spent."""
    made: Persona | str
    spent = RoleUsage()
    async with limit:
        try:
            made = await llm_persona(client, prompt_text, plan, spent)
        except (LLMError, ValueError) as exc:
            made = failure_message(exc)
            where = f"persona {plan.index + 1} ({plan.type.value}, {plan.outcome.value})"
            # Returned in `failures` for the caller to report: logged for debugging only,
            # so a command that prints the failures does not show each one twice.
            log.info("%s failed: %s", where, made)
    if on_done is not None:
        on_done(plan, made if isinstance(made, Persona) else None)
    return made, spent


def _spent(before: RoleUsage, after: RoleUsage) -> RoleUsage:
    """The batch's share of a client's usage (the client may have served others before)."""
    start = asdict(before)
    return RoleUsage(**{name: value - start[name] for name, value in asdict(after).items()})


def usage_line(usage: RoleUsage) -> str:
    """The batch's model usage in one line, as `polygon personas generate` prints it."""
    line = (
        f"model usage: {usage.calls} requests ({usage.cached_calls} cached, "
        f"{usage.retries} retried, {usage.failed_calls} failed), "
        f"{usage.tokens_in} tokens in, {usage.tokens_out} out"
    )
    return f"{line}, ${usage.cost:.4f}" if usage.cost else line


def failure_message(exc: Exception) -> str:
    """One line saying why a persona could not be made (the client's errors name the role,
    the endpoint and what happened; other errors are the answer not fitting a persona)."""
    text = " ".join(str(exc).split())
    if isinstance(exc, LLMError):
        return text
    return f"the model's answer is not a usable persona: {text}"


def prompt_hash_of(path: str | Path) -> str | None:
    """The content hash of a prompt file as it is now; None when it cannot be read."""
    try:
        return content_hash(Path(path).read_bytes())
    except OSError:
        return None


def persona_status(stored_hash: str, current_hash: str | None) -> PersonaStatus:
    """`current`, `stale` (the prompt changed since) or `missing` (the file is gone)."""
    if current_hash is None:
        return "missing"
    return "current" if stored_hash == current_hash else "stale"
