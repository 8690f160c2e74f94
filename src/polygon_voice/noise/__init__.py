"""Recognition (ASR) noise: dropped words, digits, sound-alikes and fillers (SPEC section 3).

`distort(text, level, lang, seed)` gives what the agent hears of one caller utterance;
`hearing(level)` is the same as the engine's `Hearing`. Word lists and number words load
on first use; importing this package loads neither.
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.noise.distort import Rates, check_level, distort, distorted, rates
    from polygon_voice.noise.hearing import hearing
    from polygon_voice.noise.languages import (
        SUPPORTED_LANGUAGES,
        NoiseError,
        NoiseUnavailable,
        UnsupportedLanguage,
        language_code,
        require_dependencies,
    )
    from polygon_voice.noise.numbers import read_digits, spoken_digits
    from polygon_voice.noise.wer import caller_wer, word_error_rate
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.noise.distort": (
                "Rates",
                "check_level",
                "distort",
                "distorted",
                "rates",
            ),
            "polygon_voice.noise.hearing": ("hearing",),
            "polygon_voice.noise.languages": (
                "SUPPORTED_LANGUAGES",
                "NoiseError",
                "NoiseUnavailable",
                "UnsupportedLanguage",
                "language_code",
                "require_dependencies",
            ),
            "polygon_voice.noise.numbers": ("read_digits", "spoken_digits"),
            "polygon_voice.noise.wer": ("caller_wer", "word_error_rate"),
        },
    )

__all__ = [
    "SUPPORTED_LANGUAGES",
    "NoiseError",
    "NoiseUnavailable",
    "Rates",
    "UnsupportedLanguage",
    "caller_wer",
    "check_level",
    "distort",
    "distorted",
    "hearing",
    "language_code",
    "rates",
    "read_digits",
    "require_dependencies",
    "spoken_digits",
    "word_error_rate",
]
