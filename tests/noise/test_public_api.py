"""The names the runner, the report and the CLI import from polygon_voice.noise."""

from __future__ import annotations

import polygon_voice.model as model
import polygon_voice.noise as noise


def test_public_api_is_pinned() -> None:
    assert set(noise.__all__) == {
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
    }
    for name in noise.__all__:
        assert hasattr(noise, name)
    assert noise.SUPPORTED_LANGUAGES == ("de", "en", "hr", "ru")


def test_the_records_are_model_types() -> None:
    assert {"Edit", "EditKind", "Heard"} <= set(model.__all__)


def test_the_level_mapping_rises_with_the_level() -> None:
    low, high = noise.rates(0.2), noise.rates(0.9)
    for name in ("filler", "digits", "soundalike", "drop"):
        assert 0 < getattr(low, name) < getattr(high, name) <= 1
    assert noise.rates(0) == noise.Rates(0, 0, 0, 0)
    assert noise.rates(1) == noise.Rates(filler=1.0, digits=1.0, soundalike=0.3, drop=0.15)
