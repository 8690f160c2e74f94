# ruff: noqa: RUF001
"""The claim parser: values tied to fields, "done" statements and mentions, en/de/hr/ru."""

from __future__ import annotations

import json
import random
from datetime import date
from pathlib import Path

import pytest
from bench.claims_eval import SPLITS, load, score

from polygon_voice.checks import claims as parser
from polygon_voice.checks.claims import (
    Claim,
    FieldHint,
    claims_done,
    field_claims,
    hints_from_schema,
    mentions_value,
)

ORDER = {
    "order_id": FieldHint("id"),
    "quantity": FieldHint("integer"),
    "delivery_date": FieldHint("date"),
}
REFUND = {"order_id": FieldHint("id"), "amount": FieldHint("number")}
REFERENCE = date(2026, 11, 1)


def claimed(text: str, language: str = "en", fields: dict[str, FieldHint] = ORDER) -> list:
    return [(c.field, c.value) for c in field_claims(text, fields, language, REFERENCE)]


# --- field_claims -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "expected"),
    [
        ("en", "Your order 5590 now has 3 items.", [("order_id", "5590"), ("quantity", "3")]),
        ("en", "Order 5590 has twenty-one pieces.", [("order_id", "5590"), ("quantity", "21")]),
        ("de", "Bestellung 5590 hat jetzt einundzwanzig Stück.",
         [("order_id", "5590"), ("quantity", "21")]),
        ("hr", "Narudžba 5590 sada ima dvadeset i jedan komad.",
         [("order_id", "5590"), ("quantity", "21")]),
        ("ru", "В заказе 5590 теперь двадцать один товар.",
         [("order_id", "5590"), ("quantity", "21")]),
        ("hr", "Promijenio sam narudžbu 5590 na tri komada.",
         [("order_id", "5590"), ("quantity", "3")]),
        ("hr", "Narudžba 5590 sada ima četiri artikla.", [("order_id", "5590"), ("quantity", "4")]),
        ("ru", "Заказ 5590 на трёх штук подтверждён.", [("order_id", "5590"), ("quantity", "3")]),
        ("en", "I've changed order 5590 to 3.", [("order_id", "5590"), ("quantity", "3")]),
    ],
)  # fmt: skip
def test_a_value_next_to_its_cue_is_claimed_for_that_field(language, text, expected):
    assert claimed(text, language) == expected


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Order five five nine zero, please hold."),
        ("en", "That was order fifty-five ninety."),
        ("de", "Die Bestellung fünf fünf neun null."),
        ("hr", "Narudžba pet pet devet nula."),
        ("ru", "Заказ пять пять девять ноль."),
        ("en", "Order 5 5 9 0."),
    ],
)
def test_an_id_read_digit_by_digit_is_one_value(language, text):
    assert claimed(text, language) == [("order_id", "5590")]


def test_an_id_keeps_its_leading_zeros_and_a_count_drops_them():
    fields = {"code": FieldHint("id"), "quantity": FieldHint("integer")}
    assert claimed("Code 0042, quantity 07.", fields=fields) == [
        ("code", "0042"),
        ("quantity", "7"),
    ]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "You'll get an email within 1 hour."),
        ("en", "Press 2 to hear the options again."),
        ("en", "Your order will arrive in 3 days."),
        ("en", "Call 0800 123 456 any time."),
        ("en", "The order was updated at 3:15 today."),
        ("en", "We are open from 9 am to 5 pm."),
        ("en", "First, second and third: those are the steps."),
        ("de", "Das dauert etwa 2 Stunden, drücken Sie 1."),
        ("de", "Die Bestellung kommt um 14 Uhr."),
        ("hr", "Dobit ćete e-mail unutar 1 sata."),
        ("hr", "Narudžba će stići za 3 dana."),
        ("ru", "Вы получите письмо в течение 1 часа."),
        ("ru", "Заказ придёт через 3 дня."),
    ],
)
def test_durations_times_menu_keys_and_phone_numbers_are_not_claims(language, text):
    assert claimed(text, language) == []


def test_a_duration_after_a_confirmation_leaves_the_confirmation_alone():
    text = "Order 5590 now has 3 items. You'll get an email within 1 hour."
    assert claimed(text) == [("order_id", "5590"), ("quantity", "3")]


def test_a_number_no_cue_ties_is_not_a_claim_when_two_fields_could_take_it():
    assert claimed("We have 2 options for you.") == []


def test_a_question_still_ties_its_values():
    assert claimed("Is it order 5590?") == [("order_id", "5590")]


def test_claims_come_in_text_order_with_their_spans():
    text = "Quantity 3 for order 5590, delivery on December 20."
    claims = field_claims(text, ORDER, "en", REFERENCE)
    assert [c.field for c in claims] == ["quantity", "order_id", "delivery_date"]
    assert [text[c.start : c.end] for c in claims] == ["3", "5590", "December 20"]
    at = text.index("December")
    assert claims[2] == Claim("delivery_date", "2026-12-20", at, at + len("December 20"))


def test_from_old_to_new_gives_both_values_to_the_same_field():
    assert claimed("Quantity changed from five to nine.") == [("quantity", "5"), ("quantity", "9")]
    assert claimed("Die Menge wurde von fünf auf neun geändert.", "de") == [
        ("quantity", "5"),
        ("quantity", "9"),
    ]


def test_cues_from_the_field_name_and_from_the_hint():
    fields = {"seat_count": FieldHint("integer"), "booking_ref": FieldHint("id", cues=("pnr",))}
    assert claimed("PNR 4471 with 2 seats.", fields=fields) == [
        ("booking_ref", "4471"),
        ("seat_count", "2"),
    ]


def test_a_decimal_amount_is_normalised_and_tied_to_the_money_field():
    assert claimed("A refund of 12,50 € for order 7781.", "de", REFUND) == [
        ("amount", "12.5"),
        ("order_id", "7781"),
    ]


# --- dates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Delivery on 2026-12-20."),
        ("en", "Delivery on December 20, 2026."),
        ("en", "Delivery on December 20th."),
        ("en", "Delivery on 20 December."),
        ("en", "Delivery on the 20th of December."),
        ("en", "Delivery on the twentieth of December."),
        ("en", "Delivery on 12/20/2026."),
        ("de", "Lieferung am 20.12.2026."),
        ("de", "Lieferung am 20.12."),
        ("de", "Lieferung am 20. Dezember."),
        ("de", "Lieferung am zwanzigsten Dezember 2026."),
        ("hr", "Dostava 20. prosinca."),
        ("hr", "Dostava dvadesetog prosinca 2026."),
        ("ru", "Доставка 20 декабря."),
        ("ru", "Доставка двадцатого декабря 2026 года."),
    ],
)
def test_dates_in_any_common_form(language, text):
    assert claimed(text, language) == [("delivery_date", "2026-12-20")]


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Delivery on December 20, twenty twenty-six."),
        ("en", "Delivery on December 20, two thousand and twenty-six."),
        ("de", "Lieferung am 20. Dezember zweitausendsechsundzwanzig."),
        ("hr", "Dostava 20. prosinca dvije tisuće dvadeset šeste."),
        ("ru", "Доставка 20 декабря две тысячи двадцать шестого года."),
    ],
)
def test_a_year_said_in_words_is_read_whole(language, text):
    fields = {"delivery_date": FieldHint("date")}
    assert [c.value for c in field_claims(text, fields, language, date(2030, 1, 1))] == [
        "2026-12-20"
    ]


def test_a_date_without_its_year_is_the_next_one_from_the_reference_date():
    fields = {"delivery_date": FieldHint("date")}
    december = field_claims("On January 5.", fields, "en", date(2026, 12, 10))
    assert [c.value for c in december] == ["2027-01-05"]
    recent = field_claims("On November 20.", fields, "en", date(2026, 12, 10))
    assert [c.value for c in recent] == ["2026-11-20"]


def test_an_impossible_date_is_no_date():
    assert claimed("Delivery on February 30.") == []


# --- claims_done ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "Done."),
        ("en", "All set, updated."),
        ("en", "I've changed it."),
        ("en", "Your refund is booked."),
        ("en", "Let me check. Done, your order now has 3 items."),
        ("de", "Erledigt."),
        ("de", "Ich habe die Bestellung geändert."),
        ("de", "Ihre Bestellung wurde aktualisiert."),
        ("hr", "Gotovo."),
        ("hr", "Promijenio sam."),
        ("ru", "Готово."),
        ("ru", "Я изменил заказ."),
    ],
)
def test_a_completed_change_is_done(language, text):
    assert claims_done(text, language)


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("en", "I will update it."),
        ("en", "I could not update it."),
        ("en", "I'm updating it now."),
        ("en", "Shall I change it?"),
        ("en", "Is it done?"),
        ("en", "Nothing was changed."),
        ("en", "It's not done yet."),
        ("en", "Once the system answers, it will be updated."),
        ("de", "Ich werde es ändern."),
        ("de", "Die Änderung ist noch nicht abgeschlossen."),
        ("hr", "Narudžba nije promijenjena."),
        ("hr", "Promijenit ću količinu."),
        ("ru", "Не удалось изменить заказ."),
        ("ru", "Сейчас изменю количество."),
        ("en", "Thanks for calling, goodbye!"),
    ],
)
def test_promises_failures_offers_and_questions_are_not_done(language, text):
    assert not claims_done(text, language)


# --- mentions_value ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("language", "text", "value"),
    [
        ("en", "That's three items.", 3),
        ("en", "Three items.", "3"),
        ("en", "On December 20, 2026.", "2026-12-20"),
        ("en", "On December 20.", date(2026, 12, 20)),
        ("en", "Order five five nine zero.", "5590"),
        ("en", "Order fifty-five ninety.", "5590"),
        ("de", "Bestellung fünf fünf neun null.", "5590"),
        ("de", "Das sind einundzwanzig.", 21),
        ("hr", "To je dvadeset i jedan.", 21),
        ("ru", "Это двадцать один.", 21),
        ("ru", "Доставка 20 декабря 2026 года.", "2026-12-20"),
        ("en", "A refund of 12.50.", 12.5),
        ("en", "Your code is 0800.", "0800"),
        ("en", "It is now shipped.", "shipped"),
    ],
)
def test_a_value_is_mentioned_in_any_of_its_forms(language, text, value):
    assert mentions_value(text, value, language)


@pytest.mark.parametrize(
    ("language", "text", "value"),
    [
        ("en", "Order 5599.", "5590"),
        ("en", "At 3:15 today.", 3),
        ("en", "First things first.", 1),
        ("en", "On December 21.", "2026-12-20"),
        ("en", "Your code is 800.", "0800"),
        ("en", "Anything else?", None),
        ("en", "True story.", True),
        ("en", "It is not shipped-ish.", "shipped-out"),
    ],
)
def test_a_value_not_said_is_not_mentioned(language, text, value):
    assert not mentions_value(text, value, language)


def test_every_number_below_a_thousand_is_read_in_words_in_every_language():
    num2words = pytest.importorskip("num2words").num2words  # in the `noise` extra
    croatian = pytest.importorskip("polygon_voice.noise.croatian")
    for n in range(1000):
        for language in ("en", "de", "ru"):
            assert mentions_value(num2words(n, lang=language), n, language), (language, n)
        for words in croatian.variants(n):
            assert mentions_value(words, n, "hr"), ("hr", n, words)


# --- hints_from_schema ------------------------------------------------------------------


def test_hints_from_a_tool_schema():
    parameters = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^[0-9]{4}$"},
            "quantity": {"type": "integer"},
            "amount": {"type": ["number", "null"]},
            "delivery_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
            "day": {"type": "string", "format": "date"},
            "note": {"type": "string"},
        },
    }
    kinds = {name: hint.kind for name, hint in hints_from_schema(parameters).items()}
    assert kinds == {
        "order_id": "id",
        "quantity": "integer",
        "amount": "number",
        "delivery_date": "date",
        "day": "date",
        "note": "text",
    }


@pytest.mark.parametrize("parameters", [None, {}, {"properties": [1]}, {"properties": {"a": 5}}])
def test_a_malformed_schema_gives_no_or_text_hints(parameters):
    assert all(h.kind == "text" for h in hints_from_schema(parameters).values())


# --- hostile input ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["", " ", "\ud800order 5590\udfff", "\x00\u200b\ufeff", "٥٥٩٠", "½ ² ⅔", "🙂" * 50, "..."],
)
def test_odd_text_never_raises(text):
    assert isinstance(field_claims(text, ORDER, "en", REFERENCE), list)
    assert claims_done(text, "xx-YY") in (True, False)
    assert mentions_value(text, 5590, "ru") in (True, False)


FUZZ_PIECES = (
    "order 5590 3 20.12. 20.12.2026 2026-12-20 12/20/2026 12.50. 3:15 20th the of December "
    "Dezember prosinca декабря twenty one hundred thousand , . ? - — no. Nr. to from na s с "
    "на auf von five fünf tausend einundzwanzig zweitausend tisuća тысяч двадцать первого "
    "dvadeset i и and € % # ( ) 0800 99 31 32 0 00 2199 may second prvog двадцатого "
    "zwanzigsten 18th bis do до items комада штук done not"
)


def test_random_mixtures_of_numbers_dates_and_cues_read_without_the_safety_net():
    # The public functions swallow any error (and then claim nothing); the readers under
    # them must never need that, or a claim would silently go missing.
    pieces = FUZZ_PIECES.split()
    rng = random.Random(11)
    for _ in range(3000):
        words = [rng.choice(pieces) for _ in range(rng.randint(0, 12))]
        text = rng.choice(["", ",", " "]).join(words)
        language = rng.choice(["en", "de", "hr", "ru"])
        parser._field_claims(text, ORDER | REFUND, language, REFERENCE)
        parser._mentions(text, rng.choice([5590, "2026-12-20", 3, 12.5, "0800"]), language)


def test_lone_surrogates_do_not_hide_a_claim():
    assert claimed("\ud800 order 5590 \udfff") == [("order_id", "5590")]


def test_odd_arguments_never_raise():
    assert field_claims(None, ORDER, "en") == []  # type: ignore[arg-type]
    assert field_claims("order 5590", {"x": "id"}, "en") == []  # type: ignore[dict-item]
    assert claims_done(None, "en") is False  # type: ignore[arg-type]
    assert mentions_value("5590", object(), None) is False  # type: ignore[arg-type]


def test_a_run_of_digits_longer_than_int_converts_does_not_hide_other_claims():
    claims = claimed("Quantity " + "9" * 5000 + ", order 5590.")
    assert claims == [("quantity", "9" * 5000), ("order_id", "5590")]


def test_a_megabyte_of_text_is_read_completely():
    sentence = "Order 5590 now has 3 items, delivery December 20. "
    repeats = 1_000_000 // len(sentence)
    claims = field_claims(sentence * repeats, ORDER, "en", REFERENCE)
    assert len(claims) == 3 * repeats
    assert claims_done(sentence * repeats + "Done.", "en")


@pytest.mark.parametrize("text", ["1, " * 200_000, "nine " * 200_000, "." * 600_000])
def test_a_megabyte_of_repeated_tokens_gives_a_plain_answer(text):
    claims = field_claims(text, ORDER, "en", REFERENCE)
    assert all(c.field in ORDER for c in claims)
    assert claims_done(text, "en") is False


# --- the labelled evaluation set --------------------------------------------------------

# The rules were tuned on the tuning split; they must keep reading it this well.
TUNING_FLOOR = {"field_claims": 0.95, "claims_done": 0.95, "mentions_value": 0.95}
LANGUAGE_FLOOR = 0.9
# The held-out parts were measured before any fix they prompted (docs/claims.md); their
# first figures were about 0.90/0.85 (claims), 1.00/0.63-0.68 (done), 1.00/0.97+ (mentions).
HELD_OUT_FLOOR = 0.9


def test_the_evaluation_set_is_large_enough_in_every_language():
    items = [item for split in SPLITS for item in load(split)]
    assert len(items) >= 200
    per_language = {
        lang: sum(1 for i in items if i["lang"] == lang) for lang in ["en", "de", "hr", "ru"]
    }
    assert min(per_language.values()) >= 40, per_language


def test_the_evaluation_files_are_well_formed():
    folder = Path(__file__).parent / "claims_eval"
    for split in SPLITS:
        for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            item = json.loads(line)
            assert {"lang", "text", "claims", "done"} <= item.keys()


def test_precision_and_recall_on_the_tuning_set_stay_above_their_floors():
    scores = score(load("tuning"))
    for function, floor in TUNING_FLOOR.items():
        total = scores.overall(function)
        assert total.precision >= floor, (function, total)
        assert total.recall >= floor, (function, total)
        for language in scores.tallies:
            part = scores.tally(language, function)
            assert min(part.precision, part.recall) >= LANGUAGE_FLOOR, (language, function, part)


@pytest.mark.parametrize("split", ["held_out", "fresh"])
def test_precision_and_recall_on_the_held_out_parts_stay_above_their_floor(split):
    scores = score(load(split))
    for function in TUNING_FLOOR:
        total = scores.overall(function)
        assert total.precision >= HELD_OUT_FLOOR, (function, total)
        assert total.recall >= HELD_OUT_FLOOR, (function, total)
