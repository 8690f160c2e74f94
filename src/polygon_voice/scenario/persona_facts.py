"""Plausible caller facts per slot and language, drawn from a seeded random stream.

Dates are ISO (YYYY-MM-DD) in every language: a fact is ground truth that agents, stub
tools and the judge compare, so it has one canonical form; how a caller *says* a date is
the caller's business. Phone numbers, addresses and names follow the language's country
(fictional ranges: 555 numbers in the US). Dates fall in 2026, a fixed year, so the same
seed gives the same facts whenever it runs.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Callable
from datetime import date, timedelta

from polygon_voice.model.persona import FactValue

NAMES = {
    "en": (
        "Anna Miller",
        "James Carter",
        "Maria Lopez",
        "David Brown",
        "Emily Clark",
        "Tom Wilson",
    ),
    "de": ("Jonas Becker", "Lena Schmidt", "Paul Wagner", "Sophie Hoffmann", "Felix Braun"),
    "hr": ("Ivana Horvat", "Marko Kovačević", "Ana Babić", "Luka Marić", "Petra Jurić"),
    "ru": ("Ольга Смирнова", "Иван Петров", "Анна Кузнецова", "Дмитрий Соколов", "Елена Попова"),
}
_STREETS = {
    "en": ("Maple", "Oak", "Lake", "Hill", "Park"),
    "de": ("Linden", "Garten", "Berg", "Schul", "Wald"),
    "hr": ("Ilica", "Vukovarska", "Savska cesta", "Frankopanska", "Maksimirska"),
    "ru": ("Ленина", "Садовая", "Мира", "Пушкина", "Лесная"),
}
_CITIES = {
    "en": ("Springfield", "Riverton", "Fairview", "Lakewood"),
    "de": (("10115", "Berlin"), ("80331", "München"), ("50667", "Köln"), ("20095", "Hamburg")),
    "hr": (("10000", "Zagreb"), ("21000", "Split"), ("51000", "Rijeka"), ("31000", "Osijek")),
    "ru": ("Москва", "Казань", "Самара", "Тверь"),
}
_LATIN = (
    *("a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "y", "k", "l", "m", "n", "o", "p"),
    *("r", "s", "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya"),
)
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя", _LATIN, strict=True))
CALLBACK_TIMES = {
    "en": "tomorrow after 17:00",
    "de": "morgen nach 17 Uhr",
    "hr": "sutra nakon 17 sati",
    "ru": "завтра после 17:00",
}
# How a goal names each fact, per language ("order number 5590").
LABELS = {
    "en": {
        "order_id": "order number",
        "customer_id": "customer number",
        "delivery_date": "delivery date",
        "birth_date": "date of birth",
        "callback_time": "call back",
    },
    "de": {
        "order_id": "Bestellnummer",
        "customer_id": "Kundennummer",
        "quantity": "Menge",
        "delivery_date": "Liefertermin",
        "birth_date": "Geburtsdatum",
        "name": "Name",
        "phone": "Telefon",
        "address": "Adresse",
        "appointment": "Termin",
        "date": "Datum",
        "callback_time": "Rückruf",
    },
    "hr": {
        "order_id": "broj narudžbe",
        "customer_id": "broj korisnika",
        "quantity": "količina",
        "delivery_date": "datum dostave",
        "birth_date": "datum rođenja",
        "name": "ime",
        "phone": "telefon",
        "address": "adresa",
        "appointment": "termin",
        "date": "datum",
        "callback_time": "povratni poziv",
    },
    "ru": {
        "order_id": "номер заказа",
        "customer_id": "номер клиента",
        "quantity": "количество",
        "delivery_date": "дата доставки",
        "birth_date": "дата рождения",
        "name": "имя",
        "phone": "телефон",
        "address": "адрес",
        "appointment": "запись",
        "date": "дата",
        "callback_time": "перезвонить",
    },
}


def label(fact: str, language: str) -> str:
    """How a goal names a fact in `language` (English, else the fact name with spaces)."""
    return LABELS.get(language, LABELS["en"]).get(fact) or fact.replace("_", " ")


def pick_name(rng: random.Random, language: str) -> str:
    """A plausible caller name for the language (English names for other languages)."""
    return rng.choice(NAMES.get(language, NAMES["en"]))


def fact_value(fact: str, rng: random.Random, language: str, name: str) -> FactValue:
    """A plausible value for one slot; unknown slots get a short reference code."""
    make = _MAKERS.get(fact)
    if make is None:
        return f"{rng.choice('ABCDEFGHJKLMNPRSTUVWXYZ')}-{rng.randint(1000, 9999)}"
    return make(rng, language, name)


def _order_id(rng: random.Random, language: str, name: str) -> FactValue:
    return str(rng.randint(1000, 99999))


def _customer_id(rng: random.Random, language: str, name: str) -> FactValue:
    return str(rng.randint(100000, 9999999))


def _quantity(rng: random.Random, language: str, name: str) -> FactValue:
    return rng.randint(1, 12)


def _day_2026(rng: random.Random) -> date:
    return date(2026, 1, 5) + timedelta(days=rng.randint(0, 350))


def _date(rng: random.Random, language: str, name: str) -> FactValue:
    return _day_2026(rng).isoformat()


def _birth_date(rng: random.Random, language: str, name: str) -> FactValue:
    return (date(1950, 1, 1) + timedelta(days=rng.randint(0, 54 * 365))).isoformat()


def _appointment(rng: random.Random, language: str, name: str) -> FactValue:
    hour, minute = rng.randint(8, 17), rng.choice((0, 15, 30, 45))
    return f"{_day_2026(rng).isoformat()} {hour:02d}:{minute:02d}"


def _phone(rng: random.Random, language: str, name: str) -> FactValue:
    if language == "de":
        return f"+49 15{rng.randint(1, 9)} {_digits(rng, 4)} {_digits(rng, 4)}"
    if language == "hr":
        return f"+385 9{rng.choice('12578')} {_digits(rng, 3)} {_digits(rng, 4)}"
    if language == "ru":
        return f"+7 9{_digits(rng, 2)} {_digits(rng, 3)}-{_digits(rng, 2)}-{_digits(rng, 2)}"
    return f"+1 555 {rng.randint(100, 999)} {_digits(rng, 4)}"


def _digits(rng: random.Random, count: int) -> str:
    return "".join(str(rng.randint(0, 9)) for _ in range(count))


def _address(rng: random.Random, language: str, name: str) -> FactValue:
    street = rng.choice(_STREETS.get(language, _STREETS["en"]))
    city = rng.choice(_CITIES.get(language, _CITIES["en"]))
    number = rng.randint(1, 120)
    if language == "de" and isinstance(city, tuple):
        return f"{street}straße {number}, {city[0]} {city[1]}"
    if language == "hr" and isinstance(city, tuple):
        return f"{street} {number}, {city[0]} {city[1]}"
    if language == "ru":
        return f"ул. {street}, д. {number}, {city}"
    return f"{number} {street} Street, {city}"


def _email(rng: random.Random, language: str, name: str) -> FactValue:
    local = ".".join(_ascii(part) for part in name.lower().split())
    return f"{local}{rng.randint(1, 99)}@example.com"


def _name(rng: random.Random, language: str, name: str) -> FactValue:
    return name


def _ascii(word: str) -> str:
    word = "".join(_CYRILLIC.get(c, c) for c in word)
    decomposed = unicodedata.normalize("NFKD", word.replace("đ", "dj"))
    return "".join(c for c in decomposed if c.isascii() and c.isalnum())


_Maker = Callable[[random.Random, str, str], FactValue]
_MAKERS: dict[str, _Maker] = {
    "order_id": _order_id,
    "customer_id": _customer_id,
    "quantity": _quantity,
    "delivery_date": _date,
    "date": _date,
    "birth_date": _birth_date,
    "appointment": _appointment,
    "phone": _phone,
    "address": _address,
    "email": _email,
    "name": _name,
}
