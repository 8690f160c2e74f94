"""How each persona type talks, and how difficulty 1-5 makes it harder.

Rates are chances per utterance (or per point of the agent's speech for `interrupt`),
drawn from the caller's seeded streams. Difficulty raises interruptions, corrections
(`mixup`) and digressions, and lowers how many facts come up front, so a level-5 caller
makes the agent ask for more and gets in its way more often.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from polygon_voice.model.persona import PersonaType


@dataclass(frozen=True)
class Traits:
    """One persona type at one difficulty."""

    opening_share: float  # share of the facts stated in the opening
    volunteer: int  # untold facts offered at once when the agent asks nothing specific
    terse: bool  # bare facts ("Order 5590."), no small talk
    filler: float  # a filler ("um", "äh", "ovaj", "э-э") before an utterance
    digression: float  # an off-topic line
    extra: float  # an extra detail that is no fact ("It's a present for my sister")
    hostility: float  # a hostile remark
    interrupt: float  # talking over the agent at a mid_speech point
    max_interrupts: int  # per call, so the agent can still finish a sentence
    mixup: float  # giving another fact first, then correcting itself
    clarify: float  # asking again instead of answering
    always_clarifies_first: bool  # the first question about a fact is always asked back
    patience: int  # slow or repeating agent turns tolerated before hanging up (0: no limit)
    slow_seconds: float  # waiting longer than this for the agent is slow
    long_words: int  # an agent turn longer than this is slow
    asks_why: bool  # asks why a fact is needed before giving the first one
    withhold_limit: int  # refusals to talk to an unidentified agent before hanging up
    budget: int  # replies before the caller gives up and hangs up


def _above(difficulty: int, level: int, step: float) -> float:
    """`step` for each difficulty level above `level`, else 0."""
    return max(0.0, step * (difficulty - level))


def _base(d: int) -> Traits:
    """The cooperative caller; the other types change what makes them themselves."""
    s = d - 1
    return Traits(
        opening_share=max(0.0, 1.0 - 0.25 * s),
        volunteer=99 if d <= 2 else 1,
        terse=False,
        filler=0.15 + 0.05 * s,
        digression=_above(d, 2, 0.1),
        extra=0.0,
        hostility=0.0,
        interrupt=_above(d, 3, 0.05),
        max_interrupts=1 if d >= 4 else 0,
        mixup=_above(d, 2, 0.1),
        clarify=_above(d, 3, 0.1),
        always_clarifies_first=False,
        patience=0,
        slow_seconds=15.0,
        long_words=80,
        asks_why=False,
        withhold_limit=3,
        budget=8 + d,
    )


def traits_for(kind: PersonaType, difficulty: int) -> Traits:
    """The traits of a persona type at a difficulty (1..5)."""
    d = min(5, max(1, difficulty))
    s = d - 1
    base = _base(d)
    if kind is PersonaType.BUSY:
        return replace(
            base,
            opening_share=max(0.0, 1.0 - 0.2 * s),
            volunteer=99,
            terse=True,
            filler=0.05,
            digression=0.0,
            patience=3 - s // 2,
            slow_seconds=8.0 - s,
            long_words=30 - 3 * s,
            budget=6 + s // 2,
        )
    if kind is PersonaType.DISTRUSTFUL:
        return replace(
            base,
            opening_share=max(0.0, 0.75 - 0.2 * s),
            volunteer=1,
            asks_why=d >= 3,
            withhold_limit=3 if d <= 2 else 2,
            budget=9 + d,
        )
    if kind is PersonaType.CONFUSED:
        return replace(
            base,
            opening_share=max(0.0, 0.5 - 0.1 * s),
            volunteer=1,
            filler=0.45 + 0.05 * s,
            digression=0.1 + 0.05 * s,
            mixup=0.3 + 0.1 * s,
            clarify=0.3 + 0.1 * s,
            always_clarifies_first=True,
            budget=10 + d,
        )
    if kind is PersonaType.AGGRESSIVE:
        return replace(
            base,
            opening_share=max(0.0, 0.75 - 0.15 * s),
            volunteer=99,
            filler=0.05,
            digression=0.0,
            hostility=0.5 + 0.1 * s,
            interrupt=0.3 + 0.1 * s,
            max_interrupts=1 + (d + 1) // 2,
        )
    if kind is PersonaType.CHATTY:
        return replace(
            base,
            opening_share=max(0.0, 0.75 - 0.15 * s),
            volunteer=1,
            filler=0.25,
            digression=0.5 + 0.08 * s,
            extra=0.5,
            budget=12 + d,
        )
    return base
