"""Per-language examples: numbers, fillers, sound-alikes, word lists and phonetic keys."""

from __future__ import annotations

import pytest

from polygon_voice.noise import (
    SUPPORTED_LANGUAGES,
    UnsupportedLanguage,
    distort,
    language_code,
    read_digits,
    spoken_digits,
)
from polygon_voice.noise.croatian import croatian_number
from polygon_voice.noise.languages import FILLERS
from polygon_voice.noise.lexicon import lexicon
from polygon_voice.noise.phonetic import croatian_key, english_key, german_key, russian_key

SEEDS = range(400)


def heard_digits(text: str, language: str) -> list[str]:
    """The digit readings the agent hears of `text` at level 1 (every number is read)."""
    edits = distort(text, 1.0, language, 0).edits
    return [edit.to for edit in edits if edit.kind == "digits"]


@pytest.mark.parametrize(
    ("language", "said", "heard"),
    [
        ("en", "fifty", "five zero"),
        ("de", "fünfzig", "fünf null"),
        ("ru", "пятьдесят", "пять ноль"),
        ("hr", "pedeset", "pet nula"),
        ("en", "5590", "five five nine zero"),
        ("de", "5590", "fünf fünf neun null"),
        ("ru", "5590", "пять пять девять ноль"),
        ("hr", "5590", "pet pet devet nula"),
        ("en", "twenty-five", "two five"),
        ("en", "twenty five", "two five"),
        ("en", "one hundred and five", "one zero five"),
        ("en", "two thousand and twenty-four", "two zero two four"),
        ("en", "one thousand, nine hundred and ninety-nine", "one nine nine nine"),
        ("de", "fünfundzwanzig", "zwei fünf"),
        ("de", "hundertfünf", "eins null fünf"),
        ("de", "zweitausendvierundzwanzig", "zwei null zwei vier"),
        ("ru", "две тысячи двадцать четыре", "два ноль два четыре"),
        ("ru", "тысяча сто", "один один ноль ноль"),
        ("ru", "двадцать две", "два два"),
        ("hr", "dvije tisuće dvadeset četiri", "dva nula dva četiri"),
        ("hr", "dvadeset i pet", "dva pet"),
        ("hr", "dvjesta", "dva nula nula"),
        ("hr", "tisuću", "jedan nula nula nula"),
        ("en", "0045", "zero zero four five"),
        ("en", "12:30", "one two three zero"),
    ],
)
def test_numbers_are_read_digit_by_digit(language: str, said: str, heard: str) -> None:
    assert heard_digits(said, language) == [heard]


@pytest.mark.parametrize(
    ("language", "said", "readings"),
    [
        ("en", "one, two", []),  # single digits sound the same read one by one
        ("en", "twenty, five", ["two zero"]),  # a comma parts two numbers
        ("en", "I have two thousand cats", ["two zero zero zero"]),
        ("en", "a thousand", []),  # no count before "thousand" in English: left alone
        ("ru", "пять, шесть", []),
    ],
)
def test_number_phrases_stop_at_punctuation(language: str, said: str, readings: list[str]) -> None:
    assert heard_digits(said, language) == readings


def test_a_capitalised_number_is_heard_capitalised() -> None:
    assert heard_digits("Fifty, please.", "en") == ["Five zero"]


@pytest.mark.parametrize(
    ("number", "words"),
    [
        (0, "nula"),
        (1, "jedan"),
        (4, "četiri"),
        (11, "jedanaest"),
        (14, "četrnaest"),
        (16, "šesnaest"),
        (40, "četrdeset"),
        (50, "pedeset"),
        (60, "šezdeset"),
        (99, "devedeset devet"),
        (100, "sto"),
        (125, "sto dvadeset pet"),
        (200, "dvjesto"),
        (600, "šesto"),
        (1000, "tisuću"),
        (1001, "tisuću jedan"),
        (2000, "dvije tisuće"),
        (5000, "pet tisuća"),
        (12000, "dvanaest tisuća"),
        (21000, "dvadeset jedna tisuća"),
        (22000, "dvadeset dvije tisuće"),
        (999_999, "devetsto devedeset devet tisuća devetsto devedeset devet"),
    ],
)
def test_croatian_number_words_are_spelled_in_croatian(number: int, words: str) -> None:
    assert croatian_number(number) == words


def test_croatian_numbers_have_bounds() -> None:
    with pytest.raises(ValueError, match="0 to 999,999"):
        croatian_number(1_000_000)


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_digits_are_spoken_and_read_back_in_the_language(language: str) -> None:
    spoken = spoken_digits("0123456789", language)
    assert len(spoken.split()) == 10
    assert read_digits(spoken, language) == "0123456789"


def test_croatian_digit_words() -> None:
    expected = "nula jedan dva tri četiri pet šest sedam osam devet"
    assert spoken_digits("0123456789", "hr") == expected


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_each_language_uses_all_its_own_fillers(language: str) -> None:
    said = {"en": "My code", "de": "Mein Code", "hr": "Moj kod", "ru": "Мой код"}[language]
    seen = set()
    for seed in SEEDS:
        for edit in distort(said, 1.0, language, seed).edits:
            if edit.kind == "filler":
                seen.add(edit.to.lower().removesuffix("..."))
    assert seen == set(FILLERS[language])


def test_a_filler_takes_the_case_of_the_first_word() -> None:
    capital = distort("Yes", 1.0, "en", 1).heard
    lower = distort("yes", 1.0, "en", 1).heard
    assert capital.split()[0][0].isupper()
    assert lower.split()[0][0].islower()
    assert capital.endswith(" Yes") or "Yes" not in capital


def sound_alikes_seen(said: str, language: str) -> set[str]:
    found = set()
    for seed in SEEDS:
        for edit in distort(said, 1.0, language, seed).edits:
            if edit.kind == "soundalike":
                found.add(edit.to)
    return found


def test_russian_code_becomes_cat_for_some_seed() -> None:
    assert "кот" in sound_alikes_seen("код", "ru")


@pytest.mark.parametrize(
    ("language", "said", "one_heard"),
    [
        ("en", "need", "needy"),
        ("de", "Meine", "Mine"),
        ("hr", "kod", "god"),
        ("ru", "дом", "том"),
    ],
)
def test_sound_alikes_are_near_real_words(language: str, said: str, one_heard: str) -> None:
    heard = sound_alikes_seen(said, language)
    assert one_heard in heard
    assert heard <= {w.capitalize() for w in lexicon(language).words} | lexicon(language).words


def test_phonetic_keys_pair_the_confusable_words() -> None:
    assert russian_key("код") == russian_key("кот") == russian_key("год")
    assert russian_key("пьёшь") == russian_key("пьешь")
    assert russian_key("учиться") == russian_key("учится")
    assert russian_key("код") != russian_key("кит")
    assert croatian_key("kod") == croatian_key("kot")
    assert croatian_key("džep") == croatian_key("čep") == croatian_key("ćep")
    assert croatian_key("kod") != croatian_key("kad")
    assert english_key("code") == english_key("coat")
    assert german_key("Meier") == german_key("Mayer") == "67"


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("Müller-Lüdenscheidt", "65752682"),
        ("Wikipedia", "3412"),
        ("Breschnew", "17863"),
        ("Cäsar", "487"),
        ("Chemie", "46"),
        ("Xaver", "4837"),
        ("Axel", "0485"),
        ("Phonetik", "3624"),
    ],
)
def test_the_koelner_phonetik_of_known_words(word: str, code: str) -> None:
    assert german_key(word) == code


def test_the_croatian_list_is_latin_script_croatian() -> None:
    words = lexicon("hr").words
    assert {"lijepo", "mlijeko", "rijeka", "kruh", "tisuću", "pedeset", "prema"} <= words
    # Serbian ekavian forms and Serbian words are filtered out.
    assert not {"lepo", "mleko", "reka", "hleb", "hiljadu", "ko", "šta"} & words
    allowed = set("abcčćdđefghijklmnoprsštuvzž")
    assert all(set(word) <= allowed for word in words)


@pytest.mark.parametrize(
    ("language", "alphabet"),
    [
        ("en", set("abcdefghijklmnopqrstuvwxyz")),
        ("de", set("abcdefghijklmnopqrstuvwxyzäöüß")),
        ("ru", set("абвгдеёжзийклмнопрстуфхцчшщъыьэюя")),
    ],
)
def test_word_lists_are_large_and_in_the_language_alphabet(
    language: str, alphabet: set[str]
) -> None:
    words = lexicon(language).words
    assert len(words) == 40_000
    assert all(set(word) <= alphabet and len(word) >= 2 for word in words)


def test_word_lists_are_loaded_once() -> None:
    assert lexicon("ru") is lexicon("ru")


@pytest.mark.parametrize(
    ("given", "code"), [("en", "en"), ("en-GB", "en"), ("RU", "ru"), ("hr_HR", "hr")]
)
def test_language_codes_are_normalised(given: str, code: str) -> None:
    assert language_code(given) == code


def test_an_unknown_language_is_refused_with_the_supported_ones() -> None:
    with pytest.raises(UnsupportedLanguage, match=r"'fr'.*de, en, hr, ru"):
        distort("bonjour", 0.5, "fr", 0)


@pytest.mark.parametrize("level", [-0.1, 1.5, float("nan")])
def test_a_level_outside_zero_to_one_is_refused(level: float) -> None:
    with pytest.raises(ValueError, match="from 0 to 1"):
        distort("hello", level, "en", 0)


def test_the_json_record_names_edit_sides_from_and_to() -> None:
    record = distort("fifty", 1.0, "en", 0).model_dump()
    digits = [edit for edit in record["edits"] if edit["kind"] == "digits"]
    assert digits == [{"kind": "digits", "position": 0, "from": "fifty", "to": "five zero"}]
    assert set(record) == {"said", "heard", "edits", "wer"}
