"""Hypothesis strategies: caller utterances in each language, with numbers in digits and words."""

from __future__ import annotations

from hypothesis import strategies as st

from polygon_voice.noise import SUPPORTED_LANGUAGES

# Everyday words (many with sound-alikes), number words and punctuation, per language.
VOCABULARY: dict[str, list[str]] = {
    "en": [
        "my",
        "code",
        "is",
        "need",
        "order",
        "number",
        "please",
        "change",
        "the",
        "date",
        "to",
        "friday",
        "boxes",
        "yes",
        "no",
        "fifty",
        "twenty-five",
        "one",
        "hundred",
        "and",
        "three",
        "thousand",
        "call",
        "me",
        "back",
        "tomorrow",
        "right",
    ],
    "de": [
        "meine",
        "Bestellnummer",
        "ist",
        "ich",
        "brauche",
        "Kartons",
        "bis",
        "Freitag",
        "ja",
        "nein",
        "bitte",
        "ändern",
        "fünfzig",
        "fünfundzwanzig",
        "hundert",
        "zweitausendvierundzwanzig",
        "Code",
        "morgen",
        "Haus",
    ],
    "hr": [
        "moj",
        "kod",
        "je",
        "trebam",
        "kutija",
        "do",
        "petka",
        "da",
        "ne",
        "molim",
        "promijeniti",
        "datum",
        "pedeset",
        "dvadeset",
        "pet",
        "sto",
        "tisuću",
        "dvije",
        "tisuće",
        "nazovite",
        "me",
        "sutra",
        "hvala",
        "broj",
    ],
    "ru": [
        "мой",
        "код",
        "номер",
        "заказа",
        "мне",
        "нужно",
        "коробок",
        "к",
        "пятнице",
        "да",
        "нет",
        "пожалуйста",
        "пятьдесят",
        "двадцать",
        "пять",
        "сто",
        "тысяча",
        "две",
        "тысячи",
        "перезвоните",
        "завтра",
        "спасибо",
        "дом",
        "год",
    ],
}
PUNCTUATION = ("", "", "", ",", ".", "?", "!")

languages = st.sampled_from(SUPPORTED_LANGUAGES)
seeds = st.integers(min_value=0, max_value=2**64 - 1)
levels = st.floats(min_value=0.0, max_value=1.0)


@st.composite
def utterances(draw: st.DrawFn, language: str, min_words: int = 1, max_words: int = 14) -> str:
    """A caller utterance: vocabulary words and digit strings, some followed by punctuation."""
    word = st.one_of(
        st.sampled_from(VOCABULARY[language]),
        st.from_regex(r"[0-9]{1,8}", fullmatch=True),
    )
    words = draw(st.lists(word, min_size=min_words, max_size=max_words))
    marks = draw(st.lists(st.sampled_from(PUNCTUATION), min_size=len(words), max_size=len(words)))
    text = " ".join(w + m for w, m in zip(words, marks, strict=True))
    return text[:1].upper() + text[1:] if draw(st.booleans()) else text


@st.composite
def language_and_utterance(
    draw: st.DrawFn, min_words: int = 1, max_words: int = 14
) -> tuple[str, str]:
    """A language and an utterance in it."""
    language = draw(languages)
    return language, draw(utterances(language, min_words, max_words))
