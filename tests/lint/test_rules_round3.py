# Tables of example sentences in four languages: long lines and Cyrillic letters are data.
# ruff: noqa: E501, RUF001
"""The third round of rule changes (docs/lint.md): numbers in words and time spans, German
dates, prohibitions of nobody, "without" as an exception, "every" as "always", plain
prohibitions against rules for some cases, tools named, and declined detail.

Every example is written for this test (none is from the labelled corpus): what must be
caught, and the near misses that must not be.
"""

from __future__ import annotations

import pytest

from polygon_voice.lint.numbers import minutes_of, numbers_in
from polygon_voice.lint.text import Prompt
from polygon_voice.lint.topics import clauses, lexicon, tools_named
from tests.lint.test_rules_precision import kinds


def values(lang: str, text: str) -> list[int]:
    return [v for v, _, _ in numbers_in(text, lexicon(lang))]


# --- numbers in words ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("de", "ab dreiundzwanzig Jahren, bis fünfunddreißig Euro", [23, 35]),
        ("de", "bis zum zwanzigsten März, am vierten Tag", [20, 4]),
        ("en", "seventy-two hours, ninety minutes, twenty one days", [72, 90, 21]),
        ("hr", "dvadeset i pet minuta, trideset sedam eura", [25, 37]),
        ("ru", "двадцать пять минут, в течение пятнадцати дней", [25, 15]),
        ("ru", "семидесяти рублей, девяноста секунд", [70, 90]),
    ],
)
def test_number_words_are_read_as_the_language_builds_them(
    lang: str, text: str, expected: list[int]
) -> None:
    assert values(lang, text) == expected


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("de", "Verschieben Sie die Zustellung auf einen anderen Werktag."),  # an article
        ("de", "Achten Sie auf die Uhrzeit und nennen Sie den ersten Termin."),  # to heed; first
        ("ru", "Продиктуйте номер брони по одной цифре."),  # one at a time
        ("hr", "Pročitaj broj po jednu znamenku."),
        ("de", "Nach § 12 der Satzung, Nr. 5 der Liste"),  # labels count nothing
    ],
)
def test_words_that_look_like_numbers_count_nothing(lang: str, text: str) -> None:
    assert values(lang, text) == []


def test_a_german_article_counts_after_a_bound() -> None:
    assert values("de", "Buchen Sie höchstens einen Termin pro Anruf.") == [1]


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        # One span of time in two units.
        (
            "en",
            "Repair requests are answered within 24 hours of the report.",
            "Tell customers repair requests are answered within three working days of the report.",
        ),
        (
            "de",
            "Rückrufe zur Zählerablesung erfolgen innerhalb von 48 Stunden.",
            "Sagen Sie, dass Rückrufe zur Zählerablesung innerhalb einer Woche erfolgen.",
        ),
        (
            "hr",
            "Zamjena brojila obavlja se u roku od pola sata od dolaska montera.",
            "Reci korisniku da zamjena brojila traje 90 minuta od dolaska montera.",
        ),
        (
            "ru",
            "Заявки на подключение рассматриваются в течение двух недель с подачи.",
            "Скажите клиенту, что заявки на подключение рассматриваются за 30 дней с подачи.",
        ),
        # Compound German words against digits.
        (
            "de",
            "Kunden mit Ratenzahlung zahlen bei Verzug eine Mahngebühr von 12 Euro je Mahnung.",
            "Nennen Sie Kunden mit Ratenzahlung bei Verzug eine Mahngebühr von fünfundzwanzig Euro je Mahnung.",
        ),
        # A known miss (docs/lint.md): the words right by two amounts name what is priced,
        # and do not count as the subject the two rules share.
        pytest.param(
            "de",
            "Die Mahngebühr für säumige Zahler beträgt 12 Euro.",
            "Nennen Sie säumigen Zahlern eine Mahngebühr von fünfundzwanzig Euro.",
            marks=pytest.mark.xfail(
                strict=True, reason="amounts whose subject is only the words beside them"
            ),
        ),
    ],
)
def test_one_thing_in_two_numbers_conflicts(lang: str, first: str, second: str) -> None:
    assert "conflicting-numbers" in kinds(lang, first, second)


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        # The same span said in two units.
        (
            "en",
            "Repair requests are answered within 24 hours of the report.",
            "Tell customers repair requests are answered within one day of the report.",
        ),
        (
            "en",
            "Refunds for meter faults reach the account within five working days.",
            "Tell customers refunds for meter faults reach the account within one week.",
        ),
        (
            "hr",
            "Zamjena brojila obavlja se u roku od pola sata od dolaska montera.",
            "Reci korisniku da zamjena brojila traje 30 minuta od dolaska montera.",
        ),
        # Two spans of different things.
        (
            "en",
            "Meter readings are due within 7 days of the reminder.",
            "Complaints about the app are answered within 14 days.",
        ),
    ],
)
def test_spans_that_agree_or_are_of_other_things_do_not(lang: str, first: str, second: str) -> None:
    assert "conflicting-numbers" not in kinds(lang, first, second)


def test_spans_are_counted_in_minutes() -> None:
    lex = lexicon("en")
    day = next(word for word, minutes in lex.durations.items() if minutes == 24 * 60)
    assert minutes_of(2, frozenset({"hour"}), lex) == 120
    working = next(iter(lex.working_days))  # the lemma of "working"
    assert minutes_of(5, frozenset({working, day}), lex) == minutes_of(1, frozenset({"week"}), lex)
    assert minutes_of(5, frozenset({day}), lex) == 5 * 24 * 60
    assert minutes_of(3, frozenset({"room"}), lex) is None


# --- German dates ------------------------------------------------------------------------


def test_a_german_date_does_not_end_its_sentence() -> None:
    prompt = Prompt("Zählerstände melden Sie bis zum 15. Januar. Danach schätzen wir.")
    assert [s.text for s in prompt.sentences] == [
        "Zählerstände melden Sie bis zum 15. Januar.",
        "Danach schätzen wir.",
    ]
    # A number at a sentence's end before a month that starts the next one is left alone.
    assert len(Prompt("Wir schließen um 18 Uhr. Mai ist ruhig.").sentences) == 2


# --- polarity and cases --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "positive", "negative"),
    [
        # A prohibition of nobody.
        (
            "de",
            "Verbinden Sie Anrufende auf Wunsch direkt mit der zuständigen Sachbearbeiterin.",
            "Verbinden Sie niemanden direkt mit der zuständigen Sachbearbeiterin.",
        ),
        # "every" holds always, as "always" does; "without" in a rule that asks names the thing.
        (
            "de",
            "Bieten Sie bei jeder Buchung den Reifenschutz ohne Selbstbehalt an.",
            "Bieten Sie den Reifenschutz ohne Selbstbehalt nicht an.",
        ),
        # A plain prohibition holds in every case, so it meets a rule for some.
        (
            "en",
            "Put callers through to the billing team when they ask about a late fee.",
            "Do not put callers through to the billing team.",
        ),
        # Two plain rules in nearly the same words.
        (
            "hr",
            "Klijentima recite okvirnu cijenu priključka već na telefonu.",
            "Ne recite klijentima okvirnu cijenu priključka na telefonu.",
        ),
    ],
)
def test_opposite_rules_are_found(lang: str, positive: str, negative: str) -> None:
    found = kinds(lang, positive, negative)
    assert any(k in found for k in ("opposite-directives", "reworded-directives")), found


@pytest.mark.parametrize(
    ("lang", "rule", "prohibition"),
    [
        (
            "hr",
            "Ako korisnik nije kod kuće, paket uvijek preusmjeri u najbliži paketomat.",
            "Nikad ne preusmjeravaj paket u paketomat bez pristanka korisnika.",
        ),
        (
            "en",
            "Always reset the router remotely when the line test fails.",
            "Never reset the router remotely without the customer's consent.",
        ),
    ],
)
def test_an_always_rule_meets_a_prohibition_excepted_by_without(
    lang: str, rule: str, prohibition: str
) -> None:
    assert kinds(lang, rule, prohibition), (rule, prohibition)


def test_a_rule_that_supplies_the_without_agrees() -> None:
    # "Children must be with an adult" names what the prohibition is not done without.
    assert (
        kinds(
            "en",
            "Every child ticket must be booked together with an adult ticket.",
            "Never book a child ticket without an adult ticket in the same booking.",
        )
        == []
    )


def test_a_reason_given_does_not_hide_the_opposite() -> None:
    assert kinds(
        "de",
        "Nennen Sie auf Nachfrage den Preis der Zählerprüfung.",
        "Nennen Sie am Telefon auf keinen Fall den Preis der Zählerprüfung, weil jede Prüfung anders abgerechnet wird.",
    )


def test_german_orders_are_read_after_a_phrase_put_first() -> None:
    lex = lexicon("de")
    for text in (
        "Auf Nachfrage nennen Sie den Eltern die Zahl der Anmeldungen.",
        "Für das Erstgespräch berechnest du Selbstzahlern 25 Euro.",
        "Fass dich kurz.",
    ):
        assert clauses(Prompt(text), lex)[0].instruction, text
    # A description: no order.
    assert not clauses(Prompt("Die Anfahrtspauschale beträgt 89 Euro."), lex)[0].instruction


# --- restatements --------------------------------------------------------------------------


def test_tools_are_named_by_their_names() -> None:
    assert tools_named("Use `book_visit(account, slot)` and then cancel_order.") == {
        "book_visit",
        "cancel_order",
    }


@pytest.mark.parametrize(
    ("lang", "first", "later"),
    [
        # Two tools, two rules.
        (
            "hr",
            "Novu rezervaciju upiši alatom rezerviraj_termin i potvrdi je korisniku.",
            "Otkazivanje rezervacije upiši alatom otkazi_termin i potvrdi ga korisniku.",
        ),
        # A tool's signature says what the tool does; the rule says when to use it.
        (
            "en",
            "- book_engineer(account_id, slot): books an engineer visit for the customer",
            "Book an engineer visit for the customer with book_engineer while they are on the call.",
        ),
        # A rule for some cases narrows one for all: a weakening, not a restatement.
        (
            "hr",
            "Registarsku oznaku vozila morate upisati kod svake narudžbe.",
            "Registarsku oznaku vozila upišite ako je klijent zna napamet.",
        ),
    ],
)
def test_near_misses_are_not_restatements(lang: str, first: str, later: str) -> None:
    assert kinds(lang, first, later, axis="redundancy") == []


def test_the_same_rule_with_the_same_tool_is_a_restatement() -> None:
    assert kinds(
        "en",
        "Book an engineer visit for the customer with `book_engineer` during the call.",
        "During the call, use `book_engineer` to book the customer an engineer visit.",
        axis="redundancy",
    )


# --- brevity and detail ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "brief", "full"),
    [
        (
            "ru",
            "Говорите кратко: одна-две фразы на ответ, без лишних подробностей.",
            "Если клиент спрашивает о тарифе, подробно объясните все условия.",
        ),
        (
            "hr",
            "Odgovaraj kratko, jednom ili dvjema rečenicama, i pusti korisnika da pita dalje ako ga nešto zanima.",
            "Kad korisnik pita za tarifu, objasni mu detaljno sve uvjete.",
        ),
        # A Du-Form order before a possessive; "list them all" in each language.
        (
            "de",
            "Halte deine Antworten kurz und sachlich.",
            "Wenn jemand nach der Rechnung fragt, nenne alle Posten mit Betrag und Datum.",
        ),
        (
            "ru",
            "Отвечай коротко, в одну-две фразы.",
            "Если клиент спрашивает о счёте, перечисли все начисления с суммами.",
        ),
        ("hr", "Odgovaraj kratko.", "Kad korisnik pita za račun, nabroji sve stavke s iznosima."),
    ],
)
def test_brevity_against_detail_is_found(lang: str, brief: str, full: str) -> None:
    assert "brevity-vs-detail" in kinds(lang, brief, full)


def test_declined_detail_is_no_detail() -> None:
    assert kinds("en", "Answer in one sentence, without going into detail.") == []
    assert kinds("ru", "Отвечайте кратко, без лишних подробностей.") == []
