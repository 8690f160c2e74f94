"""What each persona of a batch must be: type, outcome, difficulty, language and its seed.

The plan is fixed before any persona is made, so the batch covers the types and outcomes
asked for whatever the generator does, and a failed persona can be made again alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from polygon_voice.model.persona import Outcome, Persona, PersonaType
from polygon_voice.seeding import derive_seed, rng_for

ALL_TYPES: tuple[PersonaType, ...] = tuple(PersonaType)
ALL_OUTCOMES: tuple[Outcome, ...] = tuple(Outcome)


@dataclass(frozen=True)
class PersonaPlan:
    """One persona to make; `index` is its place among all personas of its prompt."""

    index: int
    type: PersonaType
    outcome: Outcome
    difficulty: int
    language: str
    seed: int


def plan_personas(
    n: int,
    *,
    types: Sequence[PersonaType] = ALL_TYPES,
    outcomes: Sequence[Outcome] = ALL_OUTCOMES,
    language: str,
    seed: int,
    prompt_hash: str,
    start: int = 0,
) -> list[PersonaPlan]:
    """`n` plans: types and outcomes in turn, difficulty drawn 1..5 from the seed.

    `start` continues a prompt's earlier batches (the number of personas it already has), so
    a second batch with the same seed adds new personas rather than the same ones again.
    """
    if n < 1:
        raise ValueError("make at least one persona")
    if not types or not outcomes:
        raise ValueError("give at least one persona type and one outcome")
    plans = []
    for index in range(start, start + n):
        plans.append(
            PersonaPlan(
                index=index,
                type=types[index % len(types)],
                outcome=outcomes[index % len(outcomes)],
                difficulty=rng_for(seed, prompt_hash, index, "difficulty").randint(1, 5),
                language=language,
                seed=derive_seed(seed, prompt_hash, index),
            )
        )
    return plans


def replan(persona: Persona, *, language: str, seed: int, index: int = 0) -> PersonaPlan:
    """The plan that remakes `persona` alike (a refresh keeps type, outcome, difficulty)."""
    return PersonaPlan(
        index=index,
        type=persona.type,
        outcome=persona.intended_outcome,
        difficulty=persona.difficulty,
        language=persona.language or language,
        seed=seed,
    )
