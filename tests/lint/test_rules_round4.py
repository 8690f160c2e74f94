# Tables of example sentences in four languages: long lines and Cyrillic letters are data.
# ruff: noqa: E501, RUF001
"""The fourth round of rule changes (docs/lint.md): judgement calls as weakenings, duties
said without "must", German compounds, separable verbs and verb-first conditions, English
particles, Croatian and Russian verb forms, what a clause points back to, and what a
prohibition and a restatement are compared on.

Every example is written for this test (none is from the labelled corpus): what must be
caught, and the near misses that must not be.
"""

from __future__ import annotations

import pytest

from polygon_voice.lint.conflicts import _repeated
from polygon_voice.lint.numbers import numbers_in
from polygon_voice.lint.text import Prompt
from polygon_voice.lint.topics import (
    clauses,
    compound_parts,
    join_separable,
    lexicon,
    topic_of,
)
from tests.lint.test_rules_precision import kinds


def units(lang: str, text: str):  # type: ignore[no-untyped-def]
    return clauses(Prompt(text), lexicon(lang))


# --- a rule left to the agent's judgement weakens the rule before it --------------------


@pytest.mark.parametrize(
    ("lang", "rule", "judgement"),
    [
        (
            "en",
            "Returns must be booked within ten days of delivery.",
            "If a customer calls after that, you may still book the return if it seems fair.",
        ),
        (
            "en",
            "Never seat guests with dogs on the terrace.",
            "When a guest with a small dog asks for the terrace, you may seat them there if you think it is quiet.",
        ),
        (
            "de",
            "Gutscheine sind grundsätzlich vom Umtausch ausgeschlossen.",
            "Ist die Kundin verärgert, dürfen Sie den Gutschein doch umtauschen, falls Ihnen das vertretbar erscheint.",
        ),
        (
            "hr",
            "Kabel za punjenje moraju spajati naši tehničari.",
            "Ako korisnik žuri, smiješ mu dopustiti da sam spoji kabel, ako ti se to čini sigurno.",
        ),
        (
            "ru",
            "Перенос записи менее чем за сутки до занятия не производится.",
            "Если клиент болен, вы можете оформить перенос и позже, когда сочтёте это разумным.",
        ),
    ],
)
def test_a_judgement_call_weakens_the_rule_before_it(lang: str, rule: str, judgement: str) -> None:
    assert "modal-weakening" in kinds(lang, rule, judgement)


@pytest.mark.parametrize(
    ("lang", "rule", "other"),
    [
        # Not left to judgement: "you do not have to" agrees with a prohibition.
        (
            "en",
            "Never seat guests with dogs on the terrace.",
            "You do not have to seat guests with dogs on the terrace.",
        ),
        # A judgement call on another thing, far from the rule.
        (
            "en",
            "Returns must be booked within ten days of delivery.",
            "Offer a coffee voucher to callers who waited long, if it seems fair.",
        ),
        (
            "de",
            "Gutscheine sind grundsätzlich vom Umtausch ausgeschlossen.",
            "Bieten Sie einen Rückruf an, falls Ihnen das sinnvoll erscheint.",
        ),
    ],
)
def test_other_permissions_do_not_weaken_it(lang: str, rule: str, other: str) -> None:
    assert "modal-weakening" not in kinds(lang, rule, other)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "You may waive the fee as you see fit."),
        ("de", "Sie können die Gebühr nach eigenem Ermessen erlassen."),
        ("hr", "Naknadu možeš oprostiti po vlastitoj procjeni."),
        ("ru", "Сбор можно не взимать по своему усмотрению."),
    ],
)
def test_judgement_calls_are_read_in_four_languages(lang: str, text: str) -> None:
    (unit,) = units(lang, text)
    assert unit.discretion
    assert unit.polarity == "weak"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "You can also skip the survey question."),
        ("en", "The meter photo can be sent later if the caller is outside."),
        ("de", "Die Frage nach dem Geburtsdatum kannst du auch weglassen."),
        ("de", "Der Ausweis kann nachgereicht werden, falls er fehlt."),
        ("hr", "Pitanje o anketi možeš i preskočiti."),
        ("ru", "Вопрос об опросе можете и пропустить."),
    ],
)
def test_a_step_permitted_to_be_left_out_is_a_weakening(lang: str, text: str) -> None:
    (unit,) = units(lang, text)
    assert unit.polarity == "weak"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Skip the survey question."),  # an order to leave it out
        ("de", "Lass die Frage nach dem Geburtsdatum weg."),
        ("hr", "Preskoči pitanje o anketi."),
    ],
)
def test_an_order_to_leave_a_step_out_is_no_weakening(lang: str, text: str) -> None:
    (unit,) = units(lang, text)
    assert unit.polarity != "weak"


def test_a_german_weakening_in_inverted_order() -> None:
    *_, last = units("de", "Die Kundennummer kannst du erfragen; nötig ist das nicht.")
    assert last.polarity == "weak"


# --- duties said without "must" -----------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The deposit has to be paid by card."),
        ("en", "Refunds are issued solely to the original card."),
        ("de", "Anträge werden ausschließlich schriftlich angenommen."),
        ("hr", "Reklamacije se primaju isključivo pisanim putem."),
        ("ru", "Справки выдаются лишь по предъявлении паспорта."),
    ],
)
def test_a_duty_or_a_sole_way_makes_a_rule_firm(lang: str, text: str) -> None:
    (unit,) = units(lang, text)
    assert unit.strong
    assert unit.instruction


def test_a_duty_said_after_a_dash_is_the_rule_before_it() -> None:
    first, _ = units("de", "Frag nach der Kundennummer – das ist Pflicht.")
    assert first.strong
    first, _ = units("de", "Frag nach der Kundennummer – das ist der Ablauf.")
    assert not first.strong


def test_a_weakening_in_a_purpose_clause_does_not_weaken_the_rule() -> None:
    (unit,) = units(
        "en", "Text the delivery slot in the morning, so the customer does not have to wait in."
    )
    assert unit.polarity == "pos"
    (unit,) = units("de", "Schicken Sie den Termin per SMS, damit niemand warten muss.")
    assert unit.polarity == "pos"


# --- German compounds, separable verbs, verb-first conditions --------------------------


@pytest.mark.parametrize(
    ("word", "parts"),
    [
        ("Zählernummer", ("Zähler", "Nummer")),
        ("Sendungsnummer", ("Sendung", "Nummer")),  # a linking "s"
        ("Lieferadresse", ("liefern", "Adresse")),  # a verb's stem
        ("Tierarztrechnungen", ("Tier", "Arzt", "Rechnungen")),  # a compound head
        ("Router-Neustart", ("Router", "Neustart")),
    ],
)
def test_german_compounds_are_read_by_their_parts(word: str, parts: tuple[str, ...]) -> None:
    assert compound_parts(word) == parts


@pytest.mark.parametrize(
    "word",
    ["Verletzung", "Bestellung", "Fahrerinnen", "Kundinnen", "Zusammenfassung", "Preis", "Telefon"],
)
def test_words_that_are_no_compounds_stay_whole(word: str) -> None:
    assert compound_parts(word) == ()


def test_a_compound_and_its_parts_said_apart_restate_one_rule() -> None:
    found = kinds(
        "de",
        "Fragen Sie am Anfang nach der Vertragsnummer und der Postleitzahl.",
        "Lassen Sie sich zu Beginn die Nummer des Vertrags und die Postleitzahl nennen.",
        axis="redundancy",
    )
    assert "paraphrase-rule" in found


@pytest.mark.parametrize(
    ("text", "joined"),
    [
        ("Nehmen Sie Name, Adresse und Telefonnummer auf.", "aufnehmen"),
        ("Lesen Sie die Bedingungen vollständig vor.", "vorlesen"),
        ("Sagen Sie keinen Termin zu, wenn die Werkstatt voll ist.", "zusagen"),
        ("Bezahlte Tickets nimmst du nicht zurück und tauschst sie nicht um.", "umtauschen"),
    ],
)
def test_german_separable_verbs_are_joined(text: str, joined: str) -> None:
    assert joined in join_separable(text)


def test_a_german_preposition_at_the_end_stays() -> None:
    assert join_separable("Fragen Sie nach dem Namen.") == "Fragen Sie nach dem Namen."


def test_a_german_condition_with_its_verb_first() -> None:
    (unit,) = units("de", "Meldet ein Kunde einen Rohrbruch, schick sofort den Notdienst.")
    assert unit.conditional
    assert unit.instruction
    (unit,) = units("de", "Antworte knapp, in höchstens zwei Sätzen.")
    assert not unit.conditional  # an order in the Du-Form, no condition
    (unit,) = units("de", "Halte jede Antwort kurz.")
    assert unit.instruction  # "Halte" is the verb's, not the noun "Halt"


# --- English particles, Croatian and Russian verb forms --------------------------------


def test_an_english_verb_parted_from_its_particle_is_its_phrase() -> None:
    assert "~confirm" in topic_of("Read the booking number back to the guest.", lexicon("en"))[1]
    assert "~transfer" in topic_of("Put the caller through to billing.", lexicon("en"))[1]


@pytest.mark.parametrize(
    ("lang", "text", "group"),
    [
        ("hr", "Provjeri datum rođenja.", "~potvrditi"),  # read as the noun "provjera"
        ("hr", "Agent rezervira termin.", "~rezervirati"),  # an "-irati" present
        ("hr", "Novac se ne vraća.", "~vratiti"),  # the imperfective
    ],
)
def test_croatian_verb_forms_find_their_group(lang: str, text: str, group: str) -> None:
    assert group in topic_of(text, lexicon(lang))[0]


def test_two_aspects_of_one_russian_verb_are_one_word() -> None:
    lex = lexicon("ru")
    assert topic_of("вызови мастера", lex)[0] & topic_of("вызывать мастера нельзя", lex)[0] >= {
        "мастер"
    }
    assert "вызвать" in topic_of("вызывать мастера нельзя", lex)[0]


def test_an_indirect_question_forbids_nothing() -> None:
    (unit,) = units("ru", "Перед записью уточни, не было ли у клиента аллергии.")
    assert unit.polarity == "pos"
    (unit,) = units("ru", "Не записывай клиентов без паспорта.")
    assert unit.polarity == "neg"


# --- what two rules are compared on --------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "rule", "prohibition"),
    [
        (
            "en",
            "Recommend the cheapest plan for the caller's household.",
            "Do not recommend a plan.",
        ),
        ("ru", "Сам вызови мастера через систему.", "Вызывать мастера нельзя."),
        (
            "hr",
            "Prijavu kvara primi telefonom i upiši je u sustav.",
            "Kvarovi se ne prijavljuju telefonom, nego isključivo putem obrasca.",
        ),
    ],
)
def test_a_prohibition_of_the_whole_rule_contradicts_it(
    lang: str, rule: str, prohibition: str
) -> None:
    assert "reworded-directives" in kinds(lang, rule, prohibition)


@pytest.mark.parametrize(
    ("lang", "rule", "prohibition"),
    [
        # The prohibition names more than the rule: another case.
        (
            "en",
            "Recommend the cheapest plan for the caller's household.",
            "Do not recommend a plan to business customers.",
        ),
        # The two share only the case one of them names.
        (
            "en",
            "When a caller asks about a debt under 50 pounds, offer to take the full payment.",
            "Never offer a write-off of a debt.",
        ),
    ],
)
def test_rules_on_other_cases_or_things_do_not(lang: str, rule: str, prohibition: str) -> None:
    assert "reworded-directives" not in kinds(lang, rule, prohibition)


def test_an_explanation_after_a_colon_is_not_the_rule() -> None:
    (unit,) = units(
        "ru", "Цены по телефону не озвучиваются: точную сумму называет мастер после осмотра."
    )
    assert "мастер" in unit.topic
    assert "мастер" not in unit.rule_topic


def test_a_clause_that_points_back_acts_on_what_the_one_before_names() -> None:
    _, second = units("en", "Booking codes are sent by text only; never read them out.")
    assert {"booking", "code"} <= second.topic
    _, second = units("en", "Booking codes are sent by text only; never read out the PIN.")
    assert "booking" not in second.topic


def test_a_policy_stated_twice_is_a_restatement_and_a_title_is_not() -> None:
    first, second = units(
        "ru",
        "Если клиент опаздывает больше чем на 20 минут, занятие переносится на другой день.\n"
        "Занятие переносится на другой день, когда клиент опаздывает более чем на 20 минут.",
    )
    assert not first.instruction
    assert not second.instruction
    assert _repeated(first, second)
    title, statement = units(
        "de",
        "Dienstanweisung Kundenservice Stadtwerke Lumen Vertragsberatung\n\n"
        "Diese Dienstanweisung gilt für den Kundenservice der Stadtwerke Lumen bei Vertragsberatung.",
    )
    assert not _repeated(title, statement)


def test_a_tool_described_after_its_signature_restates_nothing() -> None:
    (unit,) = units("de", "- `termin_buchen(datum, zeit)` trägt einen Termin ein.")
    assert unit.describes_tool
    (unit,) = units("de", "Buchen Sie den Termin mit `termin_buchen(datum, zeit)`.")
    assert not unit.describes_tool


# --- free against priced, brevity against detail -----------------------------------


@pytest.mark.parametrize(
    ("lang", "free", "priced"),
    [
        (
            "de",
            "Das Erstgespräch für Neukunden kostet nichts.",
            "Für das Erstgespräch berechnest du Neukunden 30 Euro.",
        ),
        (
            "hr",
            "Prvi pregled za nove članove uvijek je besplatan.",
            "Novim članovima za prvi pregled naplati 20 eura.",
        ),
    ],
)
def test_free_said_in_other_words_against_a_price(lang: str, free: str, priced: str) -> None:
    assert "free-vs-price" in kinds(lang, free, priced)


@pytest.mark.parametrize(
    ("lang", "brief", "full"),
    [
        (
            "ru",
            "Отвечайте как можно короче.",
            "Когда клиент спрашивает о тарифе, подробно расскажите обо всех условиях.",
        ),
        (
            "de",
            "Halte jedes Gespräch kurz.",
            "Lies vor jeder Buchung die Hausordnung wörtlich vor.",
        ),
    ],
)
def test_brevity_and_detail_in_other_forms(lang: str, brief: str, full: str) -> None:
    assert "brevity-vs-detail" in kinds(lang, brief, full)


# --- one unit of time said without a number -------------------------------------------


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "We call back within an hour.", [1]),
        ("ru", "Мастер перезвонит в течение часа.", [1]),
        ("hr", "Tehničar dolazi u roku od sat vremena.", [1]),
        ("en", "Wait an hour before you call.", []),  # no bound: no span promised
        ("ru", "Каждый час проверяйте очередь.", []),
        ("hr", "Sat na zidu kasni.", []),
    ],
)
def test_one_unit_of_time_after_a_bound_is_one(lang: str, text: str, expected: list[int]) -> None:
    assert [v for v, _, _ in numbers_in(text, lexicon(lang))] == expected


def test_an_hour_said_without_a_number_conflicts_with_minutes() -> None:
    found = kinds(
        "ru",
        "Скажите клиенту, что курьер службы доставки документов приедет в течение часа.",
        "Курьер службы доставки документов приезжает к клиенту за 30 минут.",
    )
    assert "conflicting-numbers" in found
