# ruff: noqa: RUF001
"""How the persona caller names and states its facts, per language.

A persona's facts are free-form (`{order_id: "5590", quantity: 3}`). Common keys have
forms here: the words an agent uses to ask for them ("Bestellnummer", "broj narudžbe",
"номер заказа"; a trailing `*` allows any ending, for inflected languages) and the
sentences that state them. Any other key falls back to its own words
(`booking_ref` -> "booking ref") and a generic sentence.

Only fact values are ever put into these sentences, so whatever number the caller says
is ground truth (SIM-1).
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from polygon_voice.caller.phrases import phrases_for
from polygon_voice.model.persona import FactValue

Register = Literal["state", "terse"]


@dataclass(frozen=True)
class FactForm:
    """The words for one kind of fact and the sentences that state it."""

    words: Mapping[str, tuple[str, ...]]
    state: Mapping[str, tuple[str, ...]]
    terse: Mapping[str, str]
    private: bool = False


def _terse(en: str, de: str, hr: str, ru: str) -> dict[str, str]:
    return {"en": en, "de": de, "hr": hr, "ru": ru}


_VALUE = _terse("{value}.", "{value}.", "{value}.", "{value}.")

FORMS: dict[str, FactForm] = {
    "order_id": FactForm(
        words={
            "en": ("order number", "order id", "order no", "order"),
            "de": ("bestellnummer*", "auftragsnummer*", "bestellung*", "auftrag*"),
            "hr": ("broj* narudžb*", "narudžb*"),
            "ru": ("номер* заказ*", "заказ*"),
        },
        state={
            "en": ("The order number is {value}.", "It's order {value}."),
            "de": ("Die Bestellnummer ist {value}.", "Es geht um die Bestellung {value}."),
            "hr": ("Broj narudžbe je {value}.", "Radi se o narudžbi {value}."),
            "ru": ("Номер заказа — {value}.", "Речь о заказе {value}."),
        },
        terse=_terse(
            "Order {value}.", "Bestellung {value}.", "Narudžba {value}.", "Заказ {value}."
        ),
    ),
    "quantity": FactForm(
        words={
            "en": ("quantity", "how many", "number of items", "pieces"),
            "de": ("menge", "anzahl", "wie viele", "stückzahl", "stück"),
            "hr": ("količin*", "koliko komad*", "koliko", "komad*"),
            "ru": ("количеств*", "сколько", "штук*"),
        },
        state={
            "en": ("Change the quantity to {value}, please.", "Make it {value}, please."),
            "de": ("Die Menge bitte auf {value} ändern.", "Ich brauche {value} Stück."),
            "hr": ("Količinu treba promijeniti na {value}.", "Neka količina bude {value}."),
            "ru": ("Количество нужно поменять на {value}.", "Поставьте количество {value}."),
        },
        terse=_terse(
            "Quantity {value}.", "Menge {value}.", "Količina {value}.", "Количество {value}."
        ),
    ),
    "delivery_date": FactForm(
        words={
            "en": ("delivery date", "delivery", "deliver*"),
            "de": ("liefertermin*", "lieferdatum*", "lieferung*", "liefer*", "geliefert"),
            "hr": ("datum* dostav*", "dostav*", "isporuk*"),
            "ru": ("дат* доставк*", "доставк*", "доставит*", "привез*"),
        },
        state={
            "en": ("The delivery should be on {value}.", "I'd like it delivered on {value}."),
            "de": ("Die Lieferung bitte am {value}.", "Liefern Sie bitte am {value}."),
            "hr": ("Dostava neka bude {value}.", "Trebam dostavu {value}."),
            "ru": ("Мне нужна доставка {value}.", "Привезите, пожалуйста, {value}."),
        },
        terse=_terse(
            "Delivery {value}.", "Lieferung am {value}.", "Dostava {value}.", "Доставка {value}."
        ),
    ),
    "name": FactForm(
        words={
            "en": (
                "name",
                "who am i speaking",
                "who am i talking",
                "who is calling",
                "who's calling",
            ),
            "de": ("name*", "wie heißen sie", "mit wem spreche"),
            "hr": ("ime", "imena", "imenom", "prezime*", "kako se zovete", "s kim razgovaram"),
            "ru": ("имя", "имени", "фамили*", "как вас зовут", "с кем я говорю"),
        },
        state={
            "en": ("My name is {value}.", "It's {value}."),
            "de": ("Mein Name ist {value}.", "Ich heiße {value}."),
            "hr": ("Zovem se {value}.", "Ja sam {value}."),
            "ru": ("Меня зовут {value}.", "Это {value}."),
        },
        terse=_VALUE,
        private=True,
    ),
    "phone": FactForm(
        words={
            "en": ("phone number", "phone", "telephone", "mobile", "contact number", "reach you"),
            "de": ("telefonnummer*", "telefon*", "handynummer*", "rufnummer*", "erreichen"),
            "hr": ("broj* telefon*", "telefon*", "mobitel*"),
            "ru": ("номер* телефон*", "телефон*"),
        },
        state={
            "en": ("My number is {value}.", "You can reach me on {value}."),
            "de": ("Meine Nummer ist {value}.", "Sie erreichen mich unter {value}."),
            "hr": ("Moj broj je {value}.", "Možete me dobiti na {value}."),
            "ru": ("Мой номер — {value}.", "Мой телефон — {value}."),
        },
        terse=_VALUE,
        private=True,
    ),
    "email": FactForm(
        words={
            "en": ("email address", "e-mail address", "email", "e-mail"),
            "de": ("e-mail-adresse*", "e-mail*", "email*", "mailadresse*"),
            "hr": ("adres* e-pošt*", "e-pošt*", "e-mail*", "email*"),
            "ru": ("электронн* почт*", "почт*", "email", "e-mail", "имейл*"),
        },
        state={
            "en": ("My email is {value}.",),
            "de": ("Meine E-Mail-Adresse ist {value}.",),
            "hr": ("Moj e-mail je {value}.",),
            "ru": ("Моя почта — {value}.",),
        },
        terse=_VALUE,
        private=True,
    ),
    "address": FactForm(
        words={
            "en": ("address", "street", "where do you live"),
            "de": ("adresse*", "anschrift*", "straße", "wo wohnen sie"),
            "hr": ("adres*", "ulic*", "gdje stanujete", "gdje živite"),
            "ru": ("адрес*", "улиц*", "где вы живете"),
        },
        state={
            "en": ("My address is {value}.",),
            "de": ("Meine Adresse ist {value}.",),
            "hr": ("Moja adresa je {value}.",),
            "ru": ("Мой адрес — {value}.",),
        },
        terse=_VALUE,
        private=True,
    ),
    "postcode": FactForm(
        words={
            "en": ("postcode", "post code", "postal code", "zip code", "zip"),
            "de": ("postleitzahl*", "plz"),
            "hr": ("poštansk* broj*",),
            "ru": ("почтов* индекс*", "индекс*"),
        },
        state={
            "en": ("The postcode is {value}.",),
            "de": ("Die Postleitzahl ist {value}.",),
            "hr": ("Poštanski broj je {value}.",),
            "ru": ("Индекс — {value}.",),
        },
        terse=_VALUE,
    ),
    "date": FactForm(
        words={
            "en": ("date", "which day", "what day", "when"),
            "de": ("datum", "welchen tag", "welchem tag", "wann"),
            "hr": ("datum*", "koji dan", "kojeg dana", "kada", "kad"),
            "ru": ("дат*", "какой день", "какого числа", "когда"),
        },
        state={
            "en": ("On {value}, please.", "The date is {value}."),
            "de": ("Am {value}, bitte.", "Das Datum ist {value}."),
            "hr": ("Datum je {value}.", "Neka bude {value}."),
            "ru": ("Дата — {value}.", "Давайте {value}."),
        },
        terse=_VALUE,
    ),
    "time": FactForm(
        words={
            "en": ("time", "what time"),
            "de": ("uhrzeit*", "um wie viel uhr", "wie spät"),
            "hr": ("vrijeme", "u koliko sati", "koliko sati"),
            "ru": ("время", "во сколько"),
        },
        state={
            "en": ("At {value}, please.",),
            "de": ("Um {value}, bitte.",),
            "hr": ("U {value}, molim.",),
            "ru": ("В {value}, пожалуйста.",),
        },
        terse=_VALUE,
    ),
    "customer_id": FactForm(
        words={
            "en": ("customer number", "customer id", "customer reference"),
            "de": ("kundennummer*",),
            "hr": ("broj* kupc*", "korisničk* broj*"),
            "ru": ("номер* клиент*", "клиентск* номер*"),
        },
        state={
            "en": ("My customer number is {value}.",),
            "de": ("Meine Kundennummer ist {value}.",),
            "hr": ("Moj korisnički broj je {value}.",),
            "ru": ("Мой номер клиента — {value}.",),
        },
        terse=_VALUE,
    ),
    "account_number": FactForm(
        words={
            "en": ("account number", "account"),
            "de": ("kontonummer*", "konto*", "iban"),
            "hr": ("broj* račun*", "iban"),
            "ru": ("номер* счет*", "лицев* счет*", "счет*"),
        },
        state={
            "en": ("My account number is {value}.",),
            "de": ("Meine Kontonummer ist {value}.",),
            "hr": ("Broj računa je {value}.",),
            "ru": ("Номер счёта — {value}.",),
        },
        terse=_VALUE,
    ),
    "birth_date": FactForm(
        words={
            "en": ("date of birth", "birthday", "born"),
            "de": ("geburtsdatum*", "geburtstag*", "geboren"),
            "hr": ("datum* rođenja", "rođendan*", "rođen*"),
            "ru": ("дат* рождени*", "день рождени*", "родил*"),
        },
        state={
            "en": ("I was born on {value}.",),
            "de": ("Mein Geburtsdatum ist der {value}.",),
            "hr": ("Datum rođenja mi je {value}.",),
            "ru": ("Дата рождения — {value}.",),
        },
        terse=_VALUE,
        private=True,
    ),
    "amount": FactForm(
        words={
            "en": ("amount", "how much", "sum"),
            "de": ("betrag*", "summe*", "wie viel"),
            "hr": ("iznos*",),
            "ru": ("сумм*",),
        },
        state={
            "en": ("The amount is {value}.",),
            "de": ("Der Betrag ist {value}.",),
            "hr": ("Iznos je {value}.",),
            "ru": ("Сумма — {value}.",),
        },
        terse=_VALUE,
    ),
    "product": FactForm(
        words={
            "en": ("product", "item", "what did you order"),
            "de": ("produkt*", "artikel*"),
            "hr": ("proizvod*", "artikl*"),
            "ru": ("товар*", "продукт*"),
        },
        state={
            "en": ("It's the {value}.",),
            "de": ("Es geht um {value}.",),
            "hr": ("Radi se o proizvodu {value}.",),
            "ru": ("Речь о товаре {value}.",),
        },
        terse=_VALUE,
    ),
}

ALIASES: dict[str, str] = {
    "order": "order_id",
    "order_no": "order_id",
    "order_number": "order_id",
    "qty": "quantity",
    "count": "quantity",
    "phone_number": "phone",
    "telephone": "phone",
    "mobile": "phone",
    "full_name": "name",
    "customer_name": "name",
    "caller_name": "name",
    "email_address": "email",
    "zip": "postcode",
    "zip_code": "postcode",
    "postal_code": "postcode",
    "appointment_date": "date",
    "appointment_time": "time",
    "customer_number": "customer_id",
    "account": "account_number",
    "iban": "account_number",
    "date_of_birth": "birth_date",
    "dob": "birth_date",
    "birthday": "birth_date",
}

# Sentences for keys without a form of their own.
_GENERIC_STATE = {
    "en": "The {label} is {value}.",
    "de": "{label}: {value}.",
    "hr": "{label}: {value}.",
    "ru": "{label}: {value}.",
}
_GENERIC_ANSWER = {
    "en": "It's {value}.",
    "de": "Das ist {value}.",
    "hr": "To je {value}.",
    "ru": "Это {value}.",
}


def canonical(key: str) -> str:
    """The form name of a fact key (`order_number` -> `order_id`); unknown keys stay as they are."""
    lowered = key.strip().lower()
    return ALIASES.get(lowered, lowered)


def form_of(key: str) -> FactForm | None:
    """The form of a fact key, or None for a key without one."""
    return FORMS.get(canonical(key))


def label(key: str) -> str:
    """A key's own words: `booking_ref` -> `booking ref`."""
    return key.replace("_", " ").replace("-", " ").strip()


def fact_words(key: str, language: str) -> tuple[str, ...]:
    """Words that name a fact in a language (English too: agents mix in `e-mail`, `ID`)."""
    form = form_of(key)
    own = (label(key),)
    if form is None:
        return own
    words = [*form.words.get(language, ()), *form.words["en"], *own]
    return tuple(dict.fromkeys(words))


# Facts that identify the caller or their records: what a distrustful caller asks about.
IDENTIFYING = frozenset(
    [
        "order_id",
        "customer_id",
        "account_number",
        "name",
        "phone",
        "email",
        "address",
        "postcode",
        "birth_date",
    ]
)


def is_identifying(key: str) -> bool:
    """A fact that identifies the caller or their records (a distrustful caller asks why)."""
    return canonical(key) in IDENTIFYING


def is_private(key: str) -> bool:
    """Personal data a caller declines to give rather than "does not know"."""
    form = form_of(key)
    return form is not None and form.private


def spoken(value: FactValue, language: str) -> str:
    """A fact value as the caller says it: exactly the ground truth (yes/no for booleans)."""
    if isinstance(value, bool):
        phrases = phrases_for(language)
        return phrases.yes_word if value else phrases.no_word
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def say_fact(
    key: str,
    value: FactValue,
    language: str,
    rng: random.Random,
    register: Register = "state",
) -> str:
    """A sentence stating one fact: `state` names it, `terse` is what a busy caller says."""
    text = spoken(value, language)
    form = form_of(key)
    if form is None:
        template = _GENERIC_STATE[language] if register == "state" else "{value}."
        return _capitalised(template.format(label=label(key), value=text))
    if register == "terse":
        return form.terse[language].format(value=text)
    return rng.choice(form.state[language]).format(value=text)


def answer_fact(
    key: str, value: FactValue, language: str, rng: random.Random, register: Register
) -> str:
    """A sentence answering a question about one fact (keys without a form: "It's 42.")."""
    if form_of(key) is None and register == "state":
        return _GENERIC_ANSWER[language].format(value=spoken(value, language))
    return say_fact(key, value, language, rng, register)


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]
