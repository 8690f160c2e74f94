"""The four distortions under one level knob, seeded per utterance (NOISE-1..5, PIPE-2).

At level L (0 <= L <= 1):

| distortion | chance at level L | applies to |
|---|---|---|
| filler at the start | L | each utterance |
| number read digit by digit | L | each number (digits or number words) |
| sound-alike word | 0.3 x L | each word of 3+ letters that has a sound-alike |
| dropped word | 0.15 x L | each word or number |

Every decision draws from one random stream seeded by `seed` alone, always the same draws in
the same order whatever the level: so for one seed a higher level changes every word a
lower level changed, and more. Level 0 is the identity, and at level 1 every utterance
starts with a filler, so it always changes. A drop never takes the whole utterance.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from polygon_voice.model import Edit, EditKind, Heard
from polygon_voice.noise.languages import FILLERS, language_code
from polygon_voice.noise.numbers import find_numbers, spoken_digits
from polygon_voice.noise.text import Words, assemble, split_words, with_case_of
from polygon_voice.noise.wer import word_error_rate

FILLER_RATE = 1.0
DIGITS_RATE = 1.0
SOUNDALIKE_RATE = 0.3
DROP_RATE = 0.15
MIN_SOUNDALIKE_LETTERS = 3


@dataclass(frozen=True)
class Rates:
    """The chance of each distortion at one level."""

    filler: float
    digits: float
    soundalike: float
    drop: float


def rates(level: float) -> Rates:
    """The chances at `level` (see the module's table)."""
    level = check_level(level)
    return Rates(
        filler=FILLER_RATE * level,
        digits=DIGITS_RATE * level,
        soundalike=SOUNDALIKE_RATE * level,
        drop=DROP_RATE * level,
    )


def check_level(level: float) -> float:
    """The level if it is a number from 0 to 1; raises ValueError otherwise."""
    if not (isinstance(level, int | float) and math.isfinite(level) and 0 <= level <= 1):
        raise ValueError(f"the noise level is a number from 0 to 1, not {level!r}")
    return float(level)


def distort(text: str, level: float, lang: str, seed: int) -> Heard:
    """What the agent hears of `text`, with every edit and the word error rate."""
    heard, edits = distorted(text, level, lang, seed)
    return Heard(said=text, heard=heard, edits=edits, wer=word_error_rate([text], [heard]))


def distorted(text: str, level: float, lang: str, seed: int) -> tuple[str, list[Edit]]:
    """The heard text and the edits (no WER: what a run needs per caller turn)."""
    chances = rates(level)
    language = language_code(lang)
    said = split_words(text)
    if level == 0 or not said.words:
        return text, []
    units = _units(said, language)
    rng = random.Random(seed)
    # Always the same draws in the same order: the level only moves the thresholds.
    filler_draw, filler_choice = rng.random(), rng.random()
    draws = [_Draws(rng.random(), rng.random(), rng.random()) for _ in units]
    outputs, edits = _word_edits(said, units, draws, chances, language)
    heard = assemble(said, [(u.start, u.end) for u in units], outputs)
    if filler_draw < chances.filler:
        filler, heard = _with_filler(heard, language, filler_choice)
        edits.insert(0, Edit(kind="filler", position=0, from_="", to=filler))
    return heard, edits


@dataclass(frozen=True)
class _Unit:
    """Said words start..end-1: one word, or a number (`digits` set) of one or more words."""

    start: int
    end: int
    digits: str | None = None


@dataclass(frozen=True)
class _Draws:
    drop: float
    change: float
    choice: float


def _units(said: Words, language: str) -> list[_Unit]:
    numbers = {n.start: n for n in find_numbers(said.words, said.gaps[1:-1], language)}
    units: list[_Unit] = []
    index = 0
    while index < len(said.words):
        number = numbers.get(index)
        unit = _Unit(index, index + 1)
        if number is not None:
            unit = _Unit(index, number.end, number.digits)
        units.append(unit)
        index = unit.end
    return units


def _word_edits(
    said: Words, units: list[_Unit], draws: list[_Draws], chances: Rates, language: str
) -> tuple[list[str | None], list[Edit]]:
    outputs: list[str | None] = []
    edits: list[Edit] = []
    for unit, draw, drop in zip(units, draws, _dropped(draws, chances.drop), strict=True):
        original = said.span(unit.start, unit.end)
        if drop:
            outputs.append(None)
            edits.append(Edit(kind="drop", position=unit.start, from_=original, to=""))
            continue
        kind, changed = _changed(original, unit, draw, chances, language)
        outputs.append(changed)
        if kind is not None:
            edits.append(Edit(kind=kind, position=unit.start, from_=original, to=changed))
    return outputs, edits


def _dropped(draws: list[_Draws], chance: float) -> list[bool]:
    dropped = [draw.drop < chance for draw in draws]
    if all(dropped):
        # Keep the word least likely to go: the same one at every level that drops all.
        keep = max(range(len(draws)), key=lambda i: draws[i].drop)
        dropped[keep] = False
    return dropped


def _changed(
    original: str, unit: _Unit, draw: _Draws, chances: Rates, language: str
) -> tuple[EditKind | None, str]:
    if unit.digits is not None:
        if draw.change >= chances.digits:
            return None, original
        spoken = with_case_of(original, spoken_digits(unit.digits, language))
        return ("digits", spoken) if spoken != original else (None, original)
    if draw.change >= chances.soundalike or not _may_sound_alike(original):
        return None, original
    from polygon_voice.noise.lexicon import lexicon  # the word list loads on first use

    choices = lexicon(language).sound_alikes(original)
    if not choices:
        return None, original
    return "soundalike", with_case_of(original, choices[int(draw.choice * len(choices))])


def _may_sound_alike(word: str) -> bool:
    return len(word) >= MIN_SOUNDALIKE_LETTERS and word.isalpha()


def _with_filler(heard: str, language: str, choice: float) -> tuple[str, str]:
    fillers = FILLERS[language]
    filler = fillers[int(choice * len(fillers))]
    if not filler.endswith("?"):
        filler += "..."  # a hesitation before the words: "Um... my code"
    rest = heard.lstrip()
    first_letter = next((c for c in rest if c.isalpha()), "")
    if first_letter.isupper():
        filler = filler[:1].upper() + filler[1:]
    return filler, f"{filler} {rest}"
