"""Tier 2's direct reading of wordfreq's lists gives exactly wordfreq's frequencies."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest

from polygon_voice.lint import wordlists
from polygon_voice.lint.surprisal import TOKEN
from tests.lint.test_axes import ROOT

wordfreq = pytest.importorskip("wordfreq")

CODES = sorted(wordlists.PLAIN_WORD)
ALPHABETS = {
    "en": "abcdefghijklmnopqrstuvwxyz",
    "de": "abcdefghijklmnopqrstuvwxyzäöü",
    "ru": "".join(chr(c) for c in range(0x430, 0x450)),
    "sh": "abcdefghijklmnoprstuvzčćđšž",
}


@pytest.mark.parametrize("code", CODES)
def test_the_lists_plain_words_get_wordfreqs_frequency(code: str) -> None:
    index = wordlists._list_index(code)
    assert index is not None
    plain = sorted(word for word in index if wordlists.PLAIN_WORD[code].fullmatch(word))
    sample = random.Random(f"lists-{code}").sample(plain, min(5000, len(plain)))
    # The commonest words too (the first buckets), each rounded to three digits.
    sample += [word for word, _ in sorted(index.items(), key=lambda item: item[1])[:500]]
    differ = [
        w
        for w in sample
        if wordlists.PLAIN_WORD[code].fullmatch(w)
        and wordlists.frequency(w, code) != wordfreq.word_frequency(w, code)
    ]
    assert differ == []


@pytest.mark.parametrize("code", CODES)
def test_plain_words_in_no_list_get_wordfreqs_answer(code: str) -> None:
    draw = random.Random(f"made-up-{code}")
    letters = ALPHABETS[code]
    words = ["".join(draw.choices(letters, k=draw.randint(3, 12))) for _ in range(2000)]
    assert [
        w for w in words if wordlists.frequency(w, code) != wordfreq.word_frequency(w, code)
    ] == []


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("don't", "en"),
        ("caller\u2019s", "en"),
        ("straße", "de"),
        ("ёлка", "ru"),
        ("Order", "en"),
        ("naturlich\u0308", "de"),
        ("ćevapi", "sh"),
        ("здравствуйте", "ru"),
    ],
)
def test_any_other_token_is_answered_by_wordfreq(word: str, code: str) -> None:
    assert wordlists.frequency(word, code) == wordfreq.word_frequency(word, code)


def test_the_example_prompts_words_score_as_with_wordfreq() -> None:
    for path in sorted((ROOT / "examples").rglob("*.md")):
        for match in TOKEN.finditer(path.read_text(encoding="utf-8")):
            word = match.group().lower()
            assert wordlists.frequency(word, "en") == wordfreq.word_frequency(word, "en"), word


def test_a_lint_of_plain_words_does_not_import_wordfreq() -> None:
    code = (
        "import sys; from polygon_voice.lint import lint; "
        "lint('Always greet the caller by name. Never read out a card number.', max_tier=2); "
        "print('wordfreq' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"


def test_german_words_with_sharp_s_get_wordfreqs_frequency() -> None:
    index = wordlists._list_index("de")
    assert index is not None
    listed = sorted(word for word in index if "ss" in word and wordlists._plain_key(word, "de"))
    sample = random.Random("sharp-s").sample(listed, 2000)
    # "ß" for every "ss", and for only the first: wordfreq folds both back to the listed word.
    words = [w.replace("ss", "ß") for w in sample] + [w.replace("ss", "ß", 1) for w in sample]
    draw = random.Random("made-up-sharp-s")
    words += ["".join(draw.choices("abcdeißnorstuäöü", k=draw.randint(3, 12))) for _ in range(500)]
    assert all(wordlists._plain_key(w, "de") for w in words)  # the lists' path, not wordfreq's
    assert [
        w for w in words if wordlists.frequency(w, "de") != wordfreq.word_frequency(w, "de")
    ] == []


def test_latin_words_in_russian_get_wordfreqs_frequency() -> None:
    index = wordlists._list_index("ru")
    assert index is not None
    listed = sorted(word for word in index if re.fullmatch(r"[a-z]+", word))
    assert len(listed) > 1000  # the Russian list has Latin words: brands, abbreviations
    draw = random.Random("made-up-latin-ru")
    words = random.Random("latin-ru").sample(listed, 1000)
    words += ["".join(draw.choices(ALPHABETS["en"], k=draw.randint(2, 10))) for _ in range(1000)]
    assert [
        w for w in words if wordlists.frequency(w, "ru") != wordfreq.word_frequency(w, "ru")
    ] == []


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("sms\u043a\u0430", "ru"),  # Latin then Cyrillic letters in one word
        ("\u0451\u0436", "ru"),  # with "ё"
        ("stra\u1e9ee", "de"),  # capital sharp s
        ("Straße", "de"),
    ],
)
def test_mixed_scripts_and_other_letters_still_go_to_wordfreq(word: str, code: str) -> None:
    assert wordlists._plain_key(word, code) is None
    assert wordlists.frequency(word, code) == wordfreq.word_frequency(word, code)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Begrüßen Sie den Anrufer. Sie müssen die Straße und die Größe nennen.", "de"),
        ("Всегда называйте номер заявки. Никогда не отправляйте sms без cvc.", "ru"),
    ],
)
def test_a_lint_with_sharp_s_or_latin_words_does_not_import_wordfreq(
    text: str, language: str
) -> None:
    code = (
        "import sys; from polygon_voice.lint import lint; "
        f"lint({text!r}, max_tier=2, language={language!r}); "
        "print('wordfreq' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
