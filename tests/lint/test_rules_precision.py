# Tables of example sentences in four languages: long lines and Cyrillic letters are data.
# ruff: noqa: E501, RUF001
"""The rules that made contradictions and restatements precise, in the four languages.

Every example is written for this test (none is from the labelled corpus): what must be
caught, and the near misses that must not be.
"""

from __future__ import annotations

import pytest

from polygon_voice.lint import LintError, lint
from polygon_voice.lint.confidence import CONFIDENCE, DEFAULT_MIN_CONFIDENCE
from polygon_voice.lint.numbers import numbers_in
from polygon_voice.lint.text import Prompt
from polygon_voice.lint.topics import clauses, lexicon, topic_of

HEADS = {
    "en": "You are the phone agent of Lumen Energy and help customers with their accounts.\n",
    "de": "Du bist der Telefonassistent der Stadtwerke Lumen und hilfst bei Verträgen.\n",
    "hr": "Ti si telefonski asistent tvrtke Lumen i pomažeš korisnicima s ugovorima.\n",
    "ru": "Ты голосовой помощник компании Люмен и помогаешь клиентам с договорами.\n",
}


def kinds(lang: str, *sentences: str, axis: str = "contradiction") -> list[str]:
    text = HEADS[lang] + "\n".join(sentences) + "\n"
    report = lint(text, max_tier=1, env={}, language=lang)
    return [f.kind for f in report.axes[axis].findings]  # type: ignore[index]


# --- brevity against full detail, across sentences ------------------------------------


@pytest.mark.parametrize(
    ("lang", "brief", "full"),
    [
        (
            "en",
            "Keep every answer to two sentences at most.",
            "When a customer asks about a bill, list every charge on it in full detail.",
        ),
        (
            "de",
            "Antworten Sie in höchstens zwei Sätzen.",
            "Erklären Sie jede Position der Rechnung ausführlich.",
        ),
        (
            "hr",
            "Odgovaraj uvijek kratko, jer korisnici često zovu iz auta.",
            "Detaljno pročitajte korisniku sve stavke računa.",
        ),
        (
            "ru",
            "Отвечайте коротко, не больше двух предложений.",
            "Подробно зачитайте клиенту все строки счёта.",
        ),
    ],
)
def test_a_brief_rule_and_a_full_detail_rule_conflict(lang: str, brief: str, full: str) -> None:
    assert "brevity-vs-detail" in kinds(lang, brief, "Greet the customer.", full)


def test_brevity_in_a_condition_or_detail_forbidden_is_no_conflict() -> None:
    # Short in one case only; and a prohibition of detail agrees with brevity.
    assert (
        kinds("en", "If the line is bad, keep your answers short.", "Explain the tariff in full.")
        == []
    )
    assert kinds("en", "Keep every answer short.", "Never read out the bill in full.") == []


# --- a prohibition limited to some cases --------------------------------------------


@pytest.mark.parametrize(
    ("lang", "rule", "prohibition"),
    [
        ("en", "Take the payment with `take_payment`.", "Never take a payment before the customer agrees to the total."),
        ("en", "Book a meter reading visit.", "Never book a visit without the account number."),
        ("de", "Buchen Sie den Termin mit `termin_buchen`.", "Buchen Sie nie einen Termin ohne Kundennummer."),
        ("hr", "Zakaži termin alatom `zakazi`.", "Nikad ne zakazuj termin bez broja ugovora."),
        ("ru", "Записывайте клиента на приём.", "Никогда не записывайте клиента на приём без номера договора."),
    ],
)  # fmt: skip
def test_a_rule_and_its_conditional_prohibition_do_not_contradict(
    lang: str, rule: str, prohibition: str
) -> None:
    assert kinds(lang, rule, prohibition) == []


def test_an_always_rule_meets_a_prohibition_in_some_cases() -> None:
    found = kinds(
        "en",
        "Always offer the customer a payment plan.",
        "Never offer a payment plan when the customer has missed two payments.",
    )
    assert found in (["reworded-directives"], ["opposite-directives"])


# --- one sentence, two clauses: a deliberate contrast --------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Never promise a visit date; we confirm the visit date by letter."),
        ("de", "Versprich nie einen Termin; den Termin bestätigen wir per Brief."),
        ("hr", "Nikad ne obećaj datum posjeta; datum posjeta potvrđujemo pismom."),
        ("ru", "Никогда не обещайте дату визита; дату визита мы подтверждаем письмом."),
    ],
)
def test_a_rule_and_its_way_out_in_one_sentence_are_no_contradiction(
    lang: str, sentence: str
) -> None:
    assert kinds(lang, sentence) == []


# --- a narrowed rule agrees with the prohibition of the whole ------------------------


@pytest.mark.parametrize(
    ("lang", "narrow", "whole"),
    [
        ("en", "Always read out only the last four digits of the card.", "Never read out the card number."),
        ("de", "Nenne immer nur die letzten vier Ziffern der Karte.", "Nenne niemals die Kartennummer."),
        ("hr", "Uvijek pročitaj samo zadnje četiri znamenke kartice.", "Nikad ne čitaj broj kartice."),
        ("ru", "Всегда называйте только последние четыре цифры карты.", "Никогда не называйте номер карты."),
    ],
)  # fmt: skip
def test_only_part_of_a_thing_agrees_with_never_the_thing(
    lang: str, narrow: str, whole: str
) -> None:
    assert kinds(lang, narrow, whole) == []


# --- stacked rules: each hard marker is its own rule ----------------------------------


def test_each_must_of_a_stacked_sentence_has_its_own_polarity() -> None:
    lex = lexicon("en")
    text = "You must read the address back, must not book a Sunday and must send the date by text."
    parts = clauses(Prompt(text), lex)
    assert [c.polarity for c in parts] == ["pos", "neg", "pos"]


def test_a_stacked_prohibition_does_not_contradict_the_other_rules_of_the_prompt() -> None:
    found = kinds(
        "en",
        "Send the new date by text message.",
        "For a move, you must confirm the address, must not book a Sunday and must send the "
        "new date by text message.",
    )
    assert found == []


# --- polarity words that do not forbid ----------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "polarity"),
    [
        ("en", "The engineer removes the old meter at no charge.", "pos"),
        ("en", "Offer no more than two dates.", "pos"),
        ("ru", "Отвечайте не больше чем двумя предложениями.", "pos"),
        ("de", "Biete die Ratenzahlung nie am Telefon an.", "neg"),  # "die" is an article here
        ("de", "Wenn die Zahlung nicht eingegangen ist, erinnere den Kunden.", "pos"),
        ("en", "Find out from the customer what was not delivered.", "pos"),
        # A negated participle after a comma says how, not whether: the rule is an order.
        ("ru", "Отключите услугу сразу, не дожидаясь звонка оператора.", "pos"),
        ("hr", "Zatvori prijavu odmah, ne čekajući potvrdu.", "pos"),
        ("en", "Close the ticket at once, not waiting for a reply.", "pos"),
        ("ru", "Не отключайте услугу без согласия клиента.", "neg"),
    ],
)
def test_polarity(lang: str, sentence: str, polarity: str) -> None:
    parts = clauses(Prompt(sentence), lexicon(lang))
    assert [c.polarity for c in parts] == [polarity]


def test_the_action_of_a_rule_is_its_main_verb_not_the_callers() -> None:
    (clause,) = clauses(
        Prompt("If a customer asks about a refund, tell them the date."), lexicon("en")
    )
    assert clause.actions == frozenset({"~tell"})


def test_a_description_of_a_tool_is_not_an_order() -> None:
    (clause,) = clauses(Prompt("`rebook` books a new visit date."), lexicon("en"))
    assert not clause.instruction


# --- numbers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("en", "The deposit is returned within 5 working days of the move-out.", "Tell the customer the deposit is returned within ten working days of the move-out."),
        ("de", "Biete höchstens zwei freie Termine an.", "Biete vier freie Termine an."),
        ("hr", "Reci korisniku da se polog vraća u roku od pet dana nakon isteka ugovora.", "Polog se vraća u roku od 14 dana nakon isteka ugovora."),
        ("ru", "Скажите клиенту, что мастер приедет в течение двух часов после заявки.", "Мастер приезжает в течение 4 часов после заявки."),
    ],
)  # fmt: skip
def test_two_numbers_for_one_thing_conflict(lang: str, first: str, second: str) -> None:
    assert "conflicting-numbers" in kinds(lang, first, second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # One measure (working days) of two different things.
        (
            "A new card arrives within 5 working days.",
            "Tell the customer a dispute takes up to 10 working days.",
        ),
        # The same price written two ways: one number, grouped by a space or a dot.
        ("The limit is 100 000 roubles.", "Say that the limit is 100 000 roubles per claim."),
        # Two actions on one counted thing.
        ("Offer at most two rooms that match.", "Book no more than eight rooms under one name."),
    ],
)
def test_numbers_of_different_things_do_not_conflict(first: str, second: str) -> None:
    assert "conflicting-numbers" not in kinds("en", first, second)


def test_thousands_are_one_number() -> None:
    from polygon_voice.lint.numbers import numbers_in

    lex = lexicon("de")
    assert [v for v, _, _ in numbers_in("ab 2.000 Euro, bis 3.5 Tonnen, 100 000 Rubel", lex)] == [
        2000,
        3,
        100000,
    ]


# --- restatements: the same action on the same things --------------------------------


@pytest.mark.parametrize(
    ("lang", "first", "second"),
    [
        ("en", "Ask the customer for the meter number and the postcode.", "Request the meter number and the postcode before you look anything up."),
        ("de", "Fragen Sie nach der Zählernummer und der Postleitzahl.", "Lassen Sie sich die Zählernummer und die Postleitzahl geben."),
        ("hr", "Zatražite broj brojila i poštanski broj.", "Pitajte korisnika za broj brojila i poštanski broj."),
        ("ru", "Спросите номер счётчика и почтовый индекс.", "Уточните у клиента номер счётчика и почтовый индекс."),
    ],
)  # fmt: skip
def test_the_same_request_in_other_words_is_redundant(lang: str, first: str, second: str) -> None:
    assert kinds(lang, first, "Greet the customer.", second, axis="redundancy")


def test_a_short_rule_sharing_two_words_with_a_long_list_is_not_a_restatement() -> None:
    found = kinds(
        "en",
        "Ask for the meter number.",
        "At the start, ask for the name, the address, the postcode, the date of birth, the "
        "tariff, the meter number, the payment day and the email.",
        axis="redundancy",
    )
    assert found == []


# --- vague wording: quotes, kinds, and how often --------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", 'Explain the "Heating when needed" tariff to customers with a heat pump.'),
        ("de", "Erkläre den Tarif „Strom bei Bedarf“ nur Kunden mit Wärmepumpe."),
        ("hr", "Usluga „Odvoz po potrebi“ namijenjena je obrtima."),
        ("ru", "Услуга «Уборка при необходимости» означает уборку по заявке."),
        ("en", "Ask for the kind of meter the customer has."),
        ("en", "Customers usually call because a bill is higher than they expected."),
        ("hr", "Korisnici obično zovu kad im ne radi internet."),
    ],
)
def test_names_kinds_and_descriptions_are_not_vague(lang: str, sentence: str) -> None:
    assert kinds(lang, sentence, axis="ambiguity") == []


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Confirm the reading with the customer, usually at the end."),
        ("en", "Handle complaints appropriately."),
        ("de", "Nenne meistens den Tarif."),
        ("ru", "Обычно называйте клиенту тариф."),
    ],
)
def test_vague_words_in_orders_are_marked(lang: str, sentence: str) -> None:
    assert kinds(lang, sentence, axis="ambiguity") == ["vague-wording"]


# --- confidence ---------------------------------------------------------------------


def test_findings_under_the_cut_are_counted_not_reported() -> None:
    pytest.importorskip("wordfreq")
    text = HEADS["en"] + "Log the PII in the CRM with `log_call`.\n"
    shown = lint(text, max_tier=2, env={})
    everything = lint(text, max_tier=2, env={}, min_confidence=0.0)
    jargon = [f for f in everything.axes["ambiguity"].findings if f.kind == "jargon"]
    assert jargon
    assert all(f.confidence < DEFAULT_MIN_CONFIDENCE for f in jargon)
    assert not [f for f in shown.axes["ambiguity"].findings if f.kind == "jargon"]
    assert shown.below_confidence >= len(jargon)
    assert shown.min_confidence == DEFAULT_MIN_CONFIDENCE


def test_each_finding_carries_its_kinds_confidence() -> None:
    text = HEADS["en"] + "Always confirm the order number.\nNever confirm the order number.\n"
    report = lint(text, max_tier=1, env={})
    (finding,) = report.axes["contradiction"].findings
    assert finding.confidence == CONFIDENCE[finding.kind]


@pytest.mark.parametrize("value", [-0.1, 1.5])
def test_a_confidence_cut_out_of_range_is_refused(value: float) -> None:
    with pytest.raises(LintError, match="min_confidence"):
        lint("Ask for the number.", max_tier=1, env={}, min_confidence=value)


# --- two rules for some cases meet when their cases are one --------------------------


def test_the_same_case_with_opposite_orders_contradicts() -> None:
    found = kinds(
        "en",
        "Always arrange a meter visit before you give a quote.",
        "Never arrange a meter visit before you give a quote.",
    )
    assert found in (["reworded-directives"], ["opposite-directives"])


def test_two_rules_for_different_cases_do_not_contradict() -> None:
    found = kinds(
        "en",
        "If the customer is over 75, always arrange a meter visit.",
        "If the meter is outside, never arrange a meter visit.",
    )
    assert found == []


# --- what to tell is not a prohibition ----------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "Tell the customer that meters cannot be moved by phone."),
        ("de", "Sagen Sie dem Kunden, dass Zähler nicht telefonisch umgemeldet werden."),
        ("hr", "Recite korisniku da se brojilo ne može premjestiti telefonom."),
        ("ru", "Скажите клиенту, что счётчик нельзя перенести по телефону."),
    ],
)
def test_a_negation_in_what_to_tell_is_not_the_rules_polarity(lang: str, sentence: str) -> None:
    (clause,) = clauses(Prompt(sentence), lexicon(lang))
    assert clause.polarity == "pos"


def test_remember_that_we_cannot_is_still_a_prohibition() -> None:
    (clause,) = clauses(Prompt("Remember that we cannot move meters by phone."), lexicon("en"))
    assert clause.polarity == "neg"


# --- orders in German, Croatian and Russian ------------------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "orders"),
    [
        ("de", "Antworten Sie in einem Satz.", True),
        ("de", "Die Antwort kommt per Brief.", False),
        ("hr", "Kad korisnik pita za račun, detaljno mu opiši sve stavke.", True),
        ("hr", "Uređaj je bijele boje.", False),
        ("ru", "Когда клиент спрашивает о счёте, подробно перечислите все строки.", True),
        ("ru", "Этот случай бывает редко.", False),
        # A relative clause left without its closing comma ends at the imperative.
        ("hr", "Kupcima koji otkazuju pretplatu ponudite besplatan mjesec.", True),
        ("hr", "Kupci koji otkazuju pretplatu dobivaju besplatan mjesec.", False),
    ],
)
def test_an_imperative_gives_an_order(lang: str, sentence: str, orders: bool) -> None:
    (clause,) = clauses(Prompt(sentence), lexicon(lang))
    assert clause.orders is orders


def test_the_main_verb_after_a_relative_clause_without_a_comma_is_the_rules_action() -> None:
    (clause,) = clauses(
        Prompt("Kupcima koji otkazuju pretplatu ponudite besplatan mjesec."), lexicon("hr")
    )
    assert clause.actions == frozenset({"~ponuditi"})


def test_a_quote_that_ends_a_sentence_ends_it() -> None:
    text = "Greet with „Guten Tag, wie kann ich helfen?“\nFragen Sie nach der Kundennummer."
    assert [s.text for s in Prompt(text).sentences] == [
        "Greet with „Guten Tag, wie kann ich helfen?“",
        "Fragen Sie nach der Kundennummer.",
    ]


# --- free in one rule, priced in another ---------------------------------------------


@pytest.mark.parametrize(
    ("lang", "free", "priced"),
    [
        ("en", "The meter exchange is always free of charge.", "A meter exchange costs £40."),
        ("de", "Der Zählertausch ist immer kostenlos.", "Für jeden Zählertausch berechnen wir 40 Euro."),
        ("hr", "Zamjena brojila uvijek je besplatna.", "Zamjena brojila naplaćuje se 40 eura."),
        ("ru", "Замена счётчика всегда бесплатна.", "Замена счётчика стоит 4 000 рублей."),
    ],
)  # fmt: skip
def test_a_thing_free_and_priced_contradicts(lang: str, free: str, priced: str) -> None:
    assert kinds(lang, free, "Greet the customer.", priced) == ["free-vs-price"]


def test_two_free_and_priced_things_are_no_conflict() -> None:
    found = kinds("en", "Paper bills are free of charge.", "A meter exchange costs £40.")
    assert found == []


# --- a rule said again whole ---------------------------------------------------------


def test_a_rule_said_again_whole_is_redundant() -> None:
    from polygon_voice.lint.conflicts import _repeated

    lex = lexicon("en")
    text = "Take one reading per meter per call. Remember: one reading per meter per call."
    first, again = clauses(Prompt(text), lex)
    assert _repeated(first, again)
    other = clauses(Prompt("Take one reading per meter. Remember: two visits per year."), lex)
    assert not _repeated(*other)


def test_a_description_said_again_in_part_is_not_a_rule_said_again() -> None:
    found = kinds(
        "en",
        "Customers read meters, change tariffs and ask about bills.",
        "Read the meter number back and change the tariff with `set_tariff`.",
        axis="redundancy",
    )
    assert found == []


def test_a_kinds_confidence_is_smoothed_for_how_often_it_was_seen() -> None:
    from bench.lint import smoothed_precision

    # Once right in one try is not certain; many tries keep close to the rate.
    assert smoothed_precision(1, 1) == pytest.approx(2 / 3)
    assert smoothed_precision(0, 7) == pytest.approx(1 / 9)
    assert abs(smoothed_precision(29, 32) - 29 / 32) < 0.03
    # The measured kinds' values in use never claim more than their smoothed precision.
    assert CONFIDENCE["opposite-directives"] <= smoothed_precision(1, 1)
    assert CONFIDENCE["free-vs-price"] <= smoothed_precision(3, 3)


# --- how words and clauses are read (the 3 December revision) --------------------------


def test_a_must_and_its_weakening_in_other_forms_of_one_word_conflict() -> None:
    # "provjeriti rezervaciju" / "provjera rezervacije": a verb and its noun, two cases.
    found = kinds(
        "hr",
        "Prije svake izmjene uvijek moraš provjeriti rezervaciju.",
        "Pozdravi korisnika.",
        "Provjera rezervacije prije izmjene nije obavezna.",
    )
    assert found == ["modal-weakening"]


def test_a_weakening_of_something_else_is_no_conflict() -> None:
    found = kinds("hr", "Uvijek moraš provjeriti rezervaciju.", "Rezultat ankete nije obavezan.")
    assert found == []


def test_an_order_after_a_colon_is_a_rule_of_its_own() -> None:
    text = "Messages are switched off for privacy: send no messages to patients."
    found = [(c.polarity, c.orders) for c in clauses(Prompt(text), lexicon("en"))]
    assert found == [("pos", False), ("neg", True)]


def test_a_list_of_things_after_a_colon_stays_with_its_rule() -> None:
    text = "Ask for three things: the name, the date of birth and the postcode."
    assert len(clauses(Prompt(text), lexicon("en"))) == 1


def test_a_german_compound_takes_its_heads_synonym_group() -> None:
    topic, _ = topic_of("Die Umbuchungsgebühr beträgt 30 Euro.", lexicon("de"))
    assert "~preis" in topic
    assert "umbuchungsgebühr" not in topic


def test_a_croatian_imperative_the_dictionary_reads_as_a_noun_gives_an_order() -> None:
    # "ponudi": the dative of "ponuda" to the dictionary, and "offer!" to the caller.
    (clause,) = clauses(Prompt("Korisniku ponudi zamjenski termin."), lexicon("hr"))
    assert clause.orders
    assert clause.actions == frozenset({"~ponuditi"})


def test_thousands_in_croatian_words_are_counted() -> None:
    assert [n for n, _, _ in numbers_in("Odobri do tri tisuće eura.", lexicon("hr"))] == [3000]
    found = kinds(
        "hr",
        "Kredit od najviše tri tisuće eura odobri odmah.",
        "Pozdravi korisnika.",
        "Kredit od najviše 2000 eura odobri odmah.",
    )
    assert found == ["conflicting-numbers"]


# --- Russian imperatives of "ты", German ones of "du" ----------------------------------


@pytest.mark.parametrize(
    ("lang", "sentence", "orders"),
    [
        ("ru", "Назови клиенту номер его договора.", True),
        ("ru", "Проверь баланс лицевого счёта.", True),
        ("ru", "Убедись, что договор активен.", True),
        # The past plural and the second person end alike; a noun in "-и" is a noun.
        ("ru", "Монтажники приехали вовремя и всё починили.", False),
        ("ru", "Ты обычно скажешь это сам.", False),
        ("ru", "Заявки хранятся в системе три года.", False),
        ("de", "Lies dem Kunden die Zählernummer vor.", True),
        ("de", "Nenne den Abschlag für den nächsten Monat.", True),
        ("de", "Frag nach der Vertragsnummer.", True),
        # A capitalised noun is read as a noun, not as "sperre!", "reise!".
        ("de", "Sperre gilt bis zum Monatsende.", False),
        ("de", "Reise und Unterkunft zahlt der Kunde selbst.", False),
    ],
)
def test_an_imperative_of_the_familiar_form_gives_an_order(
    lang: str, sentence: str, orders: bool
) -> None:
    (clause,) = clauses(Prompt(sentence), lexicon(lang))
    assert clause.orders is orders


def test_a_russian_familiar_imperative_after_a_condition_is_compared() -> None:
    found = kinds(
        "ru",
        "Отвечай коротко, не больше двух предложений.",
        "Если клиент спрашивает про тариф, подробно перечисли все условия договора.",
    )
    assert found == ["brevity-vs-detail"]


# --- dictating is telling ----------------------------------------------------------------


def test_dictating_a_number_and_naming_it_are_one_rule() -> None:
    found = kinds(
        "ru",
        "В конце разговора продиктуй клиенту номер заявки.",
        "Перед тем как попрощаться, назови клиенту номер его заявки.",
        axis="redundancy",
    )
    assert found == ["paraphrase-rule"]


def test_dictating_a_number_and_asking_for_it_are_two_rules() -> None:
    found = kinds(
        "ru",
        "В конце разговора продиктуй клиенту номер заявки.",
        "В начале разговора спроси у клиента номер договора.",
        axis="redundancy",
    )
    assert found == []


# --- a title line names its section ---------------------------------------------------


def test_a_title_line_is_not_the_start_of_the_next_rule() -> None:
    text = "Zum Schluss\nLies die neue Anschrift noch einmal vor.\n"
    assert [s.text for s in Prompt(text).sentences] == [
        "Zum Schluss",
        "Lies die neue Anschrift noch einmal vor.",
    ]


def test_a_short_wrapped_line_continues_its_sentence() -> None:
    text = "Frag den Kunden immer\nnach der Vertragsnummer.\n"
    assert [s.text for s in Prompt(text).sentences] == [
        "Frag den Kunden immer\nnach der Vertragsnummer."
    ]


def test_a_rule_under_a_title_said_again_is_redundant() -> None:
    found = kinds(
        "de",
        "Lies die neue Anschrift zur Kontrolle vor.",
        "Begrüße den Kunden freundlich.",
        "",
        "Zum Schluss",
        "Lies die neue Anschrift zur Kontrolle noch einmal vor, bevor du auflegst.",
        axis="redundancy",
    )
    assert len(found) == 1


# --- function words say nothing of what a rule is about ---------------------------------


@pytest.mark.parametrize(
    ("lang", "word"),
    [
        ("en", "whether"),
        ("de", "werden"),
        ("de", "jeder"),
        ("hr", "njegov"),
        ("ru", "какой"),
        ("ru", "прежде"),
    ],
)
def test_function_words_are_left_out_of_a_topic(lang: str, word: str) -> None:
    sentences = {
        "en": "Ask whether the customer has a smart meter.",
        "de": "Jeder Zählerstand muss geprüft werden.",
        "hr": "Zabilježi njegov broj mobitela.",
        "ru": "Прежде чем оформить заказ, уточни, какой тариф у клиента.",
    }
    topic, _ = topic_of(sentences[lang], lexicon(lang))
    assert word not in topic


def test_a_question_asked_in_other_words_is_redundant() -> None:
    found = kinds(
        "ru",
        "Попроси назвать адрес, номер дома и номер квартиры.",
        "Уточни у жильца, в каком доме и в какой квартире он живёт.",
        axis="redundancy",
    )
    assert found == ["paraphrase-rule"]


def test_a_question_on_another_thing_is_not_redundant() -> None:
    found = kinds(
        "ru",
        "Попроси назвать адрес, номер дома и номер квартиры.",
        "Уточни у жильца, какой у него тариф и какой номер договора.",
        axis="redundancy",
    )
    assert found == []


# --- a weakening is compared without the case it names -----------------------------------


def test_a_rule_made_optional_in_a_long_case_is_weakened() -> None:
    found = kinds(
        "en",
        "Every caller must be told that the engineer needs a clear path to the gas meter in the cellar.",
        "You may skip the gas meter reminder if the caller sounds stressed or says they are in a rush.",
    )
    assert found == ["modal-weakening"]


def test_an_only_if_is_the_weakening_and_its_case_counts() -> None:
    # "only if" is the weakening itself: what it allows is the case, compared whole.
    found = kinds(
        "en",
        "Restaurants must confirm every order on the tablet within three minutes.",
        "A restaurant may refuse an order only if it has run out of an ingredient.",
    )
    assert found == []
