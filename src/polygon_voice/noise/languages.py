"""The languages recognition noise speaks: codes, fillers and digit words (no heavy imports)."""

from __future__ import annotations

import importlib.util

SUPPORTED_LANGUAGES = ("de", "en", "hr", "ru")

FILLERS: dict[str, tuple[str, ...]] = {
    "en": ("um", "uh", "hm", "hello?"),
    "de": ("äh", "ähm", "hm", "hallo?"),
    "hr": ("ovaj", "ono", "hm", "halo?"),
    "ru": ("э-э", "ну", "хм", "алло?"),
}

DIGIT_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"),
    "de": ("null", "eins", "zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun"),
    "hr": ("nula", "jedan", "dva", "tri", "četiri", "pet", "šest", "sedam", "osam", "devet"),
    "ru": ("ноль", "один", "два", "три", "четыре", "пять", "шесть", "семь", "восемь", "девять"),
}

# The optional dependencies (the `noise` extra); jiwer, for the word error rate, is core.
NOISE_MODULES = ("wordfreq", "num2words", "jellyfish")
INSTALL_HINT = "pip install 'polygon-voice[noise]'"


class NoiseError(Exception):
    """Recognition noise cannot run as asked (unknown language, missing dependencies)."""


class UnsupportedLanguage(NoiseError):
    """A language recognition noise has no word lists for."""


class NoiseUnavailable(NoiseError):
    """The optional dependencies of recognition noise are not installed."""


def language_code(language: str) -> str:
    """The supported language of a code such as 'ru' or 'en-GB'; raises UnsupportedLanguage."""
    code = language.strip().lower().replace("_", "-").split("-")[0]
    if code not in SUPPORTED_LANGUAGES:
        raise UnsupportedLanguage(
            f"recognition noise does not support language {language!r}; "
            f"supported: {', '.join(SUPPORTED_LANGUAGES)}"
        )
    return code


def require_dependencies() -> None:
    """Raise NoiseUnavailable, naming the install command, when the `noise` extra is missing."""
    missing = [name for name in NOISE_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise NoiseUnavailable(
            f"recognition noise needs {', '.join(missing)} (not installed): {INSTALL_HINT}"
        )
