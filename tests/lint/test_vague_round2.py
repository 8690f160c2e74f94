# ruff: noqa: RUF001
"""Vague wording read where it stands, and unclear references (docs/lint.md, "Vague wording,
read in place"). Every sentence here was written for the test, none from the corpus."""

from __future__ import annotations

import pytest

from polygon_voice.lint import lint

HEADS = {
    "en": "You are the phone agent of Lumen Energy and help customers with their accounts.\n",
    "de": "Du bist der Telefonassistent der Stadtwerke Lumen und hilfst bei Verträgen.\n",
    "hr": "Ti si telefonski asistent tvrtke Lumen i pomažeš korisnicima s ugovorima.\n",
    "ru": "Ты голосовой помощник компании Люмен и помогаешь клиентам с договорами.\n",
}


def marked(lang: str, sentence: str, kind: str = "vague-wording") -> list[str]:
    """The marked text of each finding of `kind` on one sentence after the language's head."""
    text = HEADS[lang] + sentence + "\n"
    report = lint(text, max_tier=1, env={}, language=lang)
    return [text[f.start : f.end] for f in report.axes["ambiguity"].findings if f.kind == kind]


def vague(lang: str, sentence: str) -> list[str]:
    return marked(lang, sentence)


# --- "a particular X" against "some X" ---------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "word"),
    [
        ("de", "Erstatten Sie die Gebühr nur in bestimmten Fällen.", "bestimmten"),
        ("hr", "Odobri popust samo za određene tarife.", "određene"),
        ("hr", "Neki korisnici dobivaju popust; pitaj ih za kod.", "Neki"),
        ("hr", "Neki od korisnika dobivaju popust; pitaj ih za kod.", "Neki"),
        ("ru", "Давай скидку только на определённые тарифы.", "определённые"),
        ("en", "Offer the discount only in certain cases.", "certain"),
    ],
)
def test_some_unnamed_things_are_vague(lang: str, sentence: str, word: str) -> None:
    assert vague(lang, sentence) == [word]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("de", "Versprechen Sie keinen Termin zu einer bestimmten Uhrzeit."),
        ("de", "Empfehlen Sie eine Werkstatt, ohne einen bestimmten Betrieb zu nennen."),
        ("hr", "Ne obećavaj dostavu na određenu adresu prije potvrde."),
        ("hr", "Ne govori što je neki član kupio."),
        ("ru", "Не обещай доставку к определённому часу."),
    ],
)
def test_one_particular_thing_is_not_vague(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


# --- judgement words and hedged cases bound orders ---------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "word"),
    [
        ("en", "Mention the late fee if relevant.", "relevant"),
        ("en", "Then respond appropriately to the complaint.", "appropriately"),
        ("de", "Bieten Sie einen Rückruf an, wenn es sinnvoll ist.", "sinnvoll"),
        ("hr", "Ponudi prikladnu nadoknadu.", "prikladnu"),
        ("ru", "Предложи уместную компенсацию.", "уместную"),
    ],
)
def test_judgement_in_an_order_is_vague(lang: str, sentence: str, word: str) -> None:
    assert vague(lang, sentence) == [word]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        # the one that fits, picked out by the article
        ("en", "At the end, read out the relevant booking code."),
        ("de", "Schicken Sie den passenden Antrag per E-Mail."),
        # what suffices, named by an infinitive
        ("hr", "Dovoljno je reći broj ugovora."),
        ("ru", "Достаточно назвать номер договора."),
        # a description: the judgement is not the agent's
        ("ru", "Споры о тарифах рассматривает соответствующий отдел."),
    ],
)
def test_judgement_that_picks_out_or_names_is_not_vague(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


@pytest.mark.parametrize(
    ("lang", "sentence", "word"),
    [
        ("en", "If possible, send the contract by email.", "If possible"),
        ("de", "Schicken Sie bei Bedarf einen Techniker.", "bei Bedarf"),
        ("hr", "Po potrebi uputi korisnika na poslovnicu.", "Po potrebi"),
        ("ru", "В случае необходимости предложи выезд мастера.", "В случае необходимости"),
    ],
)
def test_hedged_cases_in_orders_are_vague(lang: str, sentence: str, word: str) -> None:
    assert vague(lang, sentence) == [word]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        # the case said right after the hedge
        ("en", "Ask for a second phone number if possible, that is if the caller has one."),
        ("en", "Ask for a second phone number where possible, if the caller has time."),
        ("de", "Fragen Sie nach einer Zweitnummer, wenn möglich, falls der Kunde Zeit hat."),
        ("hr", "Pitaj za drugi broj po mogućnosti, ako korisnik ima vremena."),
        ("ru", "Второй номер спрашивай по возможности, если клиент не спешит."),
        # someone else decides: no order to the agent
        ("en", "Deliveries are rescheduled by the depot if necessary."),
    ],
)
def test_hedged_cases_said_or_not_ordered_are_not_vague(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


# --- made exact next to it -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Tell the caller the engineer comes soon, within two hours."),
        ("de", "Antworten Sie möglichst knapp, höchstens zwei Sätze."),
        ("de", "Sagen Sie, dass der Monteur in der Regel innerhalb von 30 Minuten kommt."),
        ("hr", "Reci korisniku da će tehničar doći uskoro, u roku od dva sata."),
        ("ru", "Скажи, что мастер приедет скоро, в течение двух часов."),
    ],
)
def test_a_vague_word_made_exact_next_to_it_is_not_marked(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


@pytest.mark.parametrize(
    ("lang", "sentence", "word"),
    [
        ("en", "Offer a few alternatives from the 3 nearest shops.", "a few"),
        ("de", "Bieten Sie ein paar Termine in den nächsten 5 Tagen an.", "ein paar"),
        ("hr", "Reci korisniku da će tehničar doći uskoro.", "uskoro"),
        ("ru", "Скажи, что мастер приедет скоро.", "скоро"),
    ],
)
def test_a_number_further_on_does_not_make_it_exact(lang: str, sentence: str, word: str) -> None:
    assert vague(lang, sentence) == [word]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "A meter exchange usually takes a few minutes."),
        ("de", "Ein Zählertausch dauert meistens ein paar Minuten."),
        ("hr", "Zamjena brojila obično traje nekoliko minuta."),
        ("ru", "Замена счётчика обычно занимает пару минут."),
    ],
)
def test_an_estimate_said_to_be_typical_is_not_marked(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


def test_as_soon_as_is_a_time_not_a_hedge() -> None:
    assert vague("en", "Block the meter as soon as the caller reports a leak.") == []
    assert vague("en", "Send the engineer as soon as possible.") == ["as soon as possible"]


# --- how often, in reported content ------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Ask which tariff they usually pay."),
        ("de", "Fragen Sie, welchen Tarif der Kunde meistens nutzt."),
        ("hr", "Pitaj koji tarif korisnik obično koristi."),
        ("ru", "Учитывай, что клиенты часто путают тарифы."),
    ],
)
def test_how_often_someone_else_does_a_thing_is_not_marked(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


# --- "try": the verb, not the noun -------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "word"),
    [
        ("en", "Try to solve the billing question yourself.", "Try to"),
        ("de", "Versuchen Sie, den Kunden zu beruhigen.", "Versuchen"),
        ("hr", "Pokušaj riješiti prigovor sam.", "Pokušaj"),
        ("ru", "Постарайся решить вопрос сам.", "Постарайся"),
    ],
)
def test_try_as_a_verb_is_vague(lang: str, sentence: str, word: str) -> None:
    assert vague(lang, sentence) == [word]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Do not try to fix the meter yourself."),
        ("en", "Book the next attempt to read the meter with `book_reading`."),
        ("de", "Trage die Uhrzeit für den nächsten Versuch ein."),
        ("hr", "Svaki novi pokušaj očitanja naplati 3 eura."),
        ("ru", "Попробуй ещё раз через `check_meter`."),
    ],
)
def test_the_noun_attempt_and_a_forbidden_try_are_not_vague(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


# --- Russian hedges set off by commas ----------------------------------------------------


def test_a_russian_hedge_is_one_only_between_commas() -> None:
    assert vague("ru", "Спроси, может быть, клиенту удобнее вечер.") == ["может быть"]
    assert vague("ru", "При опоздании запись может быть перенесена.") == []
    assert vague("ru", "Оформить возврат возможно только с чеком.") == []


# --- a case left to an impression --------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "case"),
    [
        ("en", "If the caller seems upset, offer a call back.", "If the caller seems upset"),
        ("de", "Wenn der Kunde verärgert wirkt, bieten Sie einen Rückruf an.", None),
        ("hr", "Ako korisnik djeluje zbunjeno, ponovi upute.", "Ako korisnik djeluje zbunjeno"),
        ("ru", "Если клиент выглядит растерянным, повтори инструкцию.", None),
    ],
)
def test_a_case_decided_by_an_impression_is_vague(
    lang: str, sentence: str, case: str | None
) -> None:
    expected = case or sentence.split(",")[0]
    assert vague(lang, sentence) == [expected]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "If the error appears again, restart the meter with `reset_meter`."),
        ("en", "If the alarm sounds, tell the caller to leave the building."),
        ("en", "You may skip the survey if the caller seems rushed."),
        ("de", "Wenn der Techniker nicht zum Termin erscheint, buchen Sie neu."),
        ("hr", "Ako lijek ne djeluje, uputi korisnika liječniku."),
        ("ru", "Если клиент говорит, что счётчик не работает, оформи заявку."),
    ],
)
def test_showing_up_sounding_and_permissions_are_not_impressions(lang: str, sentence: str) -> None:
    assert vague(lang, sentence) == []


# --- unclear references ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "If the customer has a gas meter and a water meter, read it out first."),
        ("de", "Wenn der Kunde eine Kündigung und eine Umbuchung will, bestätige sie per E-Mail."),
        ("hr", "Ako korisnik ima ugovor i aneks, pošalji ga e-poštom."),
        ("ru", "Если у клиента есть договор и допсоглашение, отправь его на почту."),
    ],
)
def test_it_after_two_things_is_an_unclear_reference(lang: str, sentence: str) -> None:
    assert len(marked(lang, sentence, "unclear-reference")) == 1


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        # one thing named
        ("en", "If the customer has a gas meter, read it out first."),
        # both meant, said so
        ("en", "If the customer has a gas meter and a water meter, read them out."),
        # "and" joins actions, not things
        ("en", "If the customer calls back and asks for the code, read it out."),
        # the person the case is about
        ("hr", "Ako korisnik ima ugovor i aneks, reci mu da ih potpiše."),
        ("ru", "Если у клиента есть договор и допсоглашение, скажи ему номер."),
        # the address "Sie", not "sie" (them, her)
        ("de", "Wenn der Kunde Zähler und Vertrag wechselt, bestätigen Sie den Termin."),
    ],
)
def test_one_thing_both_or_a_person_is_not_unclear(lang: str, sentence: str) -> None:
    assert marked(lang, sentence, "unclear-reference") == []
