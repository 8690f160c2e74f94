"""Recognition noise as the engine's `Hearing`: what the agent hears of each caller turn."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polygon_voice.noise.distort import check_level, distorted

if TYPE_CHECKING:
    from polygon_voice.conversation import Hearing


def hearing(level: float) -> Hearing:
    """The agent's ear at this noise level; level 0 is the clear line (nothing is loaded)."""
    level = check_level(level)
    if level == 0:
        # Imported here so that importing noise does not import the engine.
        from polygon_voice.conversation import clear_line

        return clear_line

    def hear(text: str, language: str, seed: int) -> str:
        return distorted(text, level, language, seed)[0]

    return hear
