# ruff: noqa: RUF001, RUF003
"""The words the claim parser knows, per language (en, de, hr, ru).

Every entry is written as people write it; `claims.fold` reduces both the entries and the
spoken text to the same form (lower case, no diacritics), so "fünf" matches "funf" and
"četiri" matches "cetiri". An entry ending in "*" is a stem: it matches any word that starts
with it ("narudžb*" matches "narudžba", "narudžbu"), which covers the case endings of
Croatian, Russian and German without listing them.
"""

from __future__ import annotations

LANGUAGES = ("en", "de", "hr", "ru")

# --- cardinal numbers -------------------------------------------------------------------
# Word -> value for 0-19 and the tens; hr/ru also have one word per hundred. Oblique case
# forms are listed where callers and agents use them ("tri", "трёх", "dvije", "двух").
UNITS: dict[str, dict[str, int]] = {
    "en": {
        "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
        "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
        "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
        "eighteen": 18, "nineteen": 19, "dozen": 12,
    },
    "de": {
        "null": 0, "eins": 1, "ein": 1, "eine": 1, "einen": 1, "einem": 1, "einer": 1,
        "zwei": 2, "zwo": 2, "drei": 3, "vier": 4, "fünf": 5, "fuenf": 5, "sechs": 6,
        "sieben": 7, "acht": 8, "neun": 9, "zehn": 10, "elf": 11, "zwölf": 12,
        "dreizehn": 13, "vierzehn": 14, "fünfzehn": 15, "sechzehn": 16, "siebzehn": 17,
        "achtzehn": 18, "neunzehn": 19,
    },
    "hr": {
        "nula": 0, "jedan": 1, "jedna": 1, "jedno": 1, "jednu": 1, "jednog": 1,
        "jednoga": 1, "jedne": 1, "dva": 2, "dvije": 2, "dvaju": 2,
        "dvama": 2, "tri": 3, "triju": 3, "trima": 3, "četiri": 4, "četiriju": 4,
        "pet": 5, "šest": 6, "sedam": 7, "osam": 8, "devet": 9, "deset": 10,
        "jedanaest": 11, "dvanaest": 12, "trinaest": 13, "četrnaest": 14, "petnaest": 15,
        "šesnaest": 16, "sedamnaest": 17, "osamnaest": 18, "devetnaest": 19,
    },
    "ru": {
        "ноль": 0, "нуль": 0, "один": 1, "одна": 1, "одно": 1, "одного": 1, "одну": 1,
        "одной": 1, "одному": 1, "одним": 1, "одном": 1, "два": 2, "две": 2, "двух": 2,
        "двум": 2, "двумя": 2, "три": 3, "трёх": 3, "трём": 3, "тремя": 3, "четыре": 4,
        "четырёх": 4, "четырём": 4, "четырьмя": 4, "пять": 5, "пяти": 5, "пятью": 5,
        "шесть": 6, "шести": 6, "шестью": 6, "семь": 7, "семи": 7, "семью": 7,
        "восемь": 8, "восьми": 8, "восемью": 8, "девять": 9, "девяти": 9, "девятью": 9,
        "десять": 10, "десяти": 10, "десятью": 10, "одиннадцать": 11, "одиннадцати": 11,
        "двенадцать": 12, "двенадцати": 12, "тринадцать": 13, "тринадцати": 13,
        "четырнадцать": 14, "четырнадцати": 14, "пятнадцать": 15, "пятнадцати": 15,
        "шестнадцать": 16, "шестнадцати": 16, "семнадцать": 17, "семнадцати": 17,
        "восемнадцать": 18, "восемнадцати": 18, "девятнадцать": 19, "девятнадцати": 19,
    },
}  # fmt: skip

TENS: dict[str, dict[str, int]] = {
    "en": {
        "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
        "seventy": 70, "eighty": 80, "ninety": 90,
    },
    "de": {
        "zwanzig": 20, "dreißig": 30, "dreissig": 30, "vierzig": 40, "fünfzig": 50,
        "fuenfzig": 50, "sechzig": 60, "siebzig": 70, "achtzig": 80, "neunzig": 90,
    },
    "hr": {
        "dvadeset": 20, "trideset": 30, "četrdeset": 40, "pedeset": 50, "šezdeset": 60,
        "sedamdeset": 70, "osamdeset": 80, "devedeset": 90,
    },
    "ru": {
        "двадцать": 20, "двадцати": 20, "тридцать": 30, "тридцати": 30, "сорок": 40,
        "сорока": 40, "пятьдесят": 50, "пятидесяти": 50, "шестьдесят": 60,
        "шестидесяти": 60, "семьдесят": 70, "семидесяти": 70, "восемьдесят": 80,
        "восьмидесяти": 80, "девяносто": 90, "девяноста": 90,
    },
}  # fmt: skip

# Words that are a whole hundred by themselves (hr, ru).
HUNDREDS: dict[str, dict[str, int]] = {
    "en": {},
    "de": {},
    "hr": {
        "sto": 100, "stotinu": 100, "dvjesto": 200, "dvjesta": 200, "tristo": 300,
        "trista": 300, "četiristo": 400, "četiristotine": 400, "petsto": 500,
        "šeststo": 600, "šesto": 600, "sedamsto": 700, "osamsto": 800, "devetsto": 900,
    },
    "ru": {
        "сто": 100, "ста": 100, "двести": 200, "двухсот": 200, "триста": 300,
        "трёхсот": 300, "четыреста": 400, "четырёхсот": 400, "пятьсот": 500,
        "пятисот": 500, "шестьсот": 600, "шестисот": 600, "семьсот": 700,
        "семисот": 700, "восемьсот": 800, "восьмисот": 800, "девятьсот": 900,
        "девятисот": 900,
    },
}  # fmt: skip

# A word multiplying the unit before it by a hundred ("three hundred", "drei hundert").
HUNDRED_WORD: dict[str, tuple[str, ...]] = {
    "en": ("hundred",),
    "de": ("hundert",),
    "hr": (),
    "ru": (),
}
THOUSAND_WORD: dict[str, tuple[str, ...]] = {
    "en": ("thousand",),
    "de": ("tausend",),
    "hr": ("tisuću", "tisuća", "tisuće", "tisucu"),
    "ru": ("тысяча", "тысячи", "тысяч", "тысячу"),
}
# The word joining parts of one number ("one hundred and five", "dvadeset i jedan").
AND_WORD: dict[str, tuple[str, ...]] = {
    "en": ("and",),
    "de": ("und",),
    "hr": ("i",),
    "ru": ("и",),
}

# --- dates ------------------------------------------------------------------------------
MONTHS: dict[str, dict[str, int]] = {
    "en": {
        "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
        "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
        "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9, "october": 10,
        "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
    },
    "de": {
        "januar": 1, "jänner": 1, "jan": 1, "februar": 2, "feb": 2, "märz": 3,
        "maerz": 3, "april": 4, "apr": 4, "mai": 5, "juni": 6, "juli": 7, "august": 8,
        "aug": 8, "september": 9, "sept": 9, "oktober": 10, "okt": 10, "november": 11,
        "nov": 11, "dezember": 12, "dez": 12,
    },
    "hr": {
        "siječanj": 1, "siječnja": 1, "siječnju": 1, "veljača": 2, "veljače": 2,
        "veljači": 2, "ožujak": 3, "ožujka": 3, "ožujku": 3, "travanj": 4, "travnja": 4,
        "travnju": 4, "svibanj": 5, "svibnja": 5, "svibnju": 5, "lipanj": 6, "lipnja": 6,
        "lipnju": 6, "srpanj": 7, "srpnja": 7, "srpnju": 7, "kolovoz": 8, "kolovoza": 8,
        "kolovozu": 8, "rujan": 9, "rujna": 9, "rujnu": 9, "listopad": 10,
        "listopada": 10, "listopadu": 10, "studeni": 11, "studenoga": 11, "studenog": 11,
        "studenom": 11, "prosinac": 12, "prosinca": 12, "prosincu": 12,
    },
    "ru": {
        "январь": 1, "января": 1, "январе": 1, "февраль": 2, "февраля": 2, "феврале": 2,
        "март": 3, "марта": 3, "марте": 3, "апрель": 4, "апреля": 4, "апреле": 4,
        "май": 5, "мая": 5, "мае": 5, "июнь": 6, "июня": 6, "июне": 6, "июль": 7,
        "июля": 7, "июле": 7, "август": 8, "августа": 8, "августе": 8, "сентябрь": 9,
        "сентября": 9, "сентябре": 9, "октябрь": 10, "октября": 10, "октябре": 10,
        "ноябрь": 11, "ноября": 11, "ноябре": 11, "декабрь": 12, "декабря": 12,
        "декабре": 12,
    },
}  # fmt: skip

# Ordinal day words, 1-31, as stems that any case ending may follow ("zwanzigsten",
# "dvadesetog", "двадцатого"). Compound ordinals are a cardinal ten followed by one of these
# ("twenty-first", "dvadeset prvog", "двадцать первое"); German writes them as one word and
# is built in claims.py from its cardinals.
ORDINALS: dict[str, dict[str, int]] = {
    "en": {
        "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
        "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11,
        "twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15,
        "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
        "twentieth": 20, "thirtieth": 30,
    },
    "de": {},
    "hr": {
        "prv*": 1, "drug*": 2, "treć*": 3, "četvrt*": 4, "pet*": 5, "šest*": 6,
        "sedm*": 7, "osm*": 8, "devet*": 9, "deset*": 10, "jedanaest*": 11,
        "dvanaest*": 12, "trinaest*": 13, "četrnaest*": 14, "petnaest*": 15,
        "šesnaest*": 16, "sedamnaest*": 17, "osamnaest*": 18, "devetnaest*": 19,
        "dvadeset*": 20, "trideset*": 30,
    },
    "ru": {
        "перв*": 1, "втор*": 2, "трет*": 3, "четвёрт*": 4, "пят*": 5, "шест*": 6,
        "седьм*": 7, "восьм*": 8, "девят*": 9, "десят*": 10, "одиннадцат*": 11,
        "двенадцат*": 12, "тринадцат*": 13, "четырнадцат*": 14, "пятнадцат*": 15,
        "шестнадцат*": 16, "семнадцат*": 17, "восемнадцат*": 18, "девятнадцат*": 19,
        "двадцат*": 20, "тридцат*": 30,
    },
}  # fmt: skip

# Words that may stand between the parts of a date ("the 20th of December", "20-го").
DATE_FILLERS = ("the", "of", "den", "dem", "der", "go", "го", "e", "е", "ого", "th", "st",
                "nd", "rd")  # fmt: skip
# Abbreviations whose dot does not end the sentence ("order no. 4410", "Nr. 5590").
ABBREVIATIONS = ("no", "nr", "br", "ref", "tel", "ca", "approx", "st", "vs", "etc", "bzw",
                 "usw", "npr", "tj", "itd", "шт", "тел", "стр", "ок", "др", "kom")  # fmt: skip
# Words between two days of one month ("from the 18th to the 22nd of December").
DAY_RANGE = ("to", "and", "until", "auf", "bis", "und", "na", "do", "i", "на", "до", "по", "и")
# Words that may follow a year ("2026 года", "2026. godine").
YEAR_WORDS = ("года", "год", "г", "godine", "godina", "g", "jahres")

# --- what is not a claim ----------------------------------------------------------------
# A number right before one of these is a duration, a time or a rate, not a field value.
UNIT_AFTER: dict[str, tuple[str, ...]] = {
    "en": (
        "hour*", "hr", "hrs", "minute*", "min", "mins", "second*", "sec", "secs", "day*",
        "week*", "month*", "year*", "business", "working", "percent", "pm", "am", "o",
        "clock", "oclock", "times", "ring*", "attempt*", "option*", "step*",
    ),
    "de": (
        "stunde*", "std", "minute*", "sekunde*", "tag", "tage", "tagen", "werktag*",
        "woche*", "monat*", "jahr", "jahre", "jahren", "prozent", "uhr", "mal", "versuch*",
    ),
    "hr": (
        "sat", "sata", "sati", "minut*", "sekund*", "dan", "dana", "radn*", "tjed*",
        "mjesec*", "godin*", "posto", "puta", "put", "pokušaj*",
    ),
    "ru": (
        "час", "часа", "часов", "часу", "минут*", "секунд*", "день", "дня", "дней",
        "рабоч*", "недел*", "месяц*", "лет", "год", "года", "процент*", "раз", "раза",
        "попыт*",
    ),
}  # fmt: skip
# A number right after one of these is a menu key, a phone number or a duration.
BLOCK_BEFORE: dict[str, tuple[str, ...]] = {
    "en": ("press", "dial", "call", "option", "extension", "ext", "within", "line",
           "step", "at", "top", "about", "every"),
    "de": ("drücken", "drucken", "wählen", "waehlen", "anrufen", "innerhalb", "option",
           "durchwahl", "um", "ca", "etwa", "schritt"),
    "hr": ("pritisnite", "pritisni", "birajte", "nazovite", "unutar", "opcija", "opciju",
           "korak", "oko", "u"),
    "ru": ("нажмите", "нажми", "позвоните", "звоните", "течение", "через", "около",
           "шаг", "опция", "опцию", "в"),
}  # fmt: skip
# A number right after one of these is the new value of the field being changed.
# "from five to nine": the word before the old value.
CHANGE_FROM = {
    "en": ("from",),
    "de": ("von",),
    "hr": ("s", "sa", "od"),
    "ru": ("с", "со", "от"),
}
CHANGE_TO = {
    "en": ("to",),
    "de": ("auf",),
    "hr": ("na",),
    "ru": ("на", "до"),
}

# --- cues: the words that tie a value to a field ----------------------------------------
# Concept -> words per language. A field gets the concepts its name's parts select (see
# CONCEPT_OF_PART) and the parts themselves.
CONCEPT_CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "order": {
        "en": ("order*", "purchase"),
        "de": ("bestellung*", "bestellnummer*", "auftrag*", "auftrags*"),
        "hr": ("narudžb*", "narudzb*", "narudžbenic*"),
        "ru": ("заказ*",),
    },
    "id": {
        "en": ("number", "no", "id", "reference", "ref", "#", "code"),
        "de": ("nummer", "nr", "id", "referenz", "code", "#"),
        "hr": ("broj*", "id", "šifr*", "#"),
        "ru": ("номер*", "код", "#", "№"),
    },
    "quantity": {
        "en": ("quantity", "qty", "item*", "piece*", "unit*", "count", "cop*", "pcs",
               "pack*", "box*", "bottle*", "ticket*", "seat*"),
        "de": ("menge", "anzahl", "stück*", "stk", "artikel", "exemplar*", "einheit*",
               "packung*", "flasche*", "ticket*", "plätze", "platz", "karten"),
        "hr": ("količin*", "kolicin*", "komad*", "artikl*", "proizvod*", "stavk*",
               "kom", "artikal*", "primjer*", "ulaznic*", "mjest*"),
        "ru": ("количеств*", "штук*", "шт", "товар*", "единиц*", "позици*", "экземпляр*",
               "билет*", "мест*"),
    },
    "date": {
        "en": ("date", "day", "deliver*", "arriv*", "ship*", "on", "scheduled",
               "rescheduled", "moved", "appointment"),
        "de": ("datum", "tag", "liefer*", "termin*", "am", "zustell*", "geliefert",
               "verschoben"),
        "hr": ("datum*", "dan", "dostav*", "isporu*", "termin*", "dana"),
        "ru": ("дат*", "доставк*", "доставлен*", "числ*", "день", "срок*", "перенес*"),
    },
    "invoice": {
        "en": ("invoice*", "bill"),
        "de": ("rechnung*",),
        "hr": ("račun", "računa", "računu", "računom", "faktur*"),
        "ru": ("счёт", "счета", "счету", "счёте", "счет*"),
    },
    "account": {
        "en": ("account*",),
        "de": ("konto*",),
        "hr": ("račun", "računa", "računu", "računom"),
        "ru": ("счёт", "счета", "счету", "счёте", "счет*", "аккаунт*"),
    },
    "people": {
        "en": ("people", "person*", "guest*", "adult*"),
        "de": ("person*", "gäste*", "gast"),
        "hr": ("osob*", "gost*"),
        "ru": ("человек*", "персон*", "гост*"),
    },
    "amount": {
        "en": ("amount", "refund*", "euro*", "eur", "€", "dollar*", "usd", "$", "£",
               "pound*", "total", "price", "cost*", "credit*", "sum", "fee", "charge*"),
        "de": ("betrag*", "erstattung*", "rückerstattung*", "euro", "eur", "€", "gutschrift*",
               "summe", "preis*", "kosten", "gebühr*", "dollar", "$"),
        "hr": ("iznos*", "povrat*", "eur*", "€", "kun*", "cijen*", "ukupn*", "naknad*",
               "dolar*", "$"),
        "ru": ("сумм*", "возврат*", "евро", "€", "руб*", "₽", "стоимост*", "цен*",
               "доллар*", "$", "компенсац*"),
    },
}  # fmt: skip

# A part of a field's name -> the concepts it brings.
CONCEPT_OF_PART: dict[str, tuple[str, ...]] = {
    "order": ("order", "id"),
    "id": ("id",),
    "number": ("id",),
    "no": ("id",),
    "nr": ("id",),
    "ref": ("id",),
    "reference": ("id",),
    "booking": ("order", "id"),
    "quantity": ("quantity",),
    "qty": ("quantity",),
    "count": ("quantity",),
    "items": ("quantity",),
    "pieces": ("quantity",),
    "seats": ("quantity", "people"),
    "tickets": ("quantity",),
    "date": ("date",),
    "day": ("date",),
    "delivery": ("date",),
    "amount": ("amount",),
    "refund": ("amount",),
    "price": ("amount",),
    "total": ("amount",),
    "credit": ("amount",),
    "invoice": ("invoice", "id"),
    "bill": ("invoice", "id"),
    "account": ("account", "id"),
    "ticket": ("quantity",),
    "party": ("people", "quantity"),
    "guests": ("people", "quantity"),
    "people": ("people", "quantity"),
    "appointment": ("date",),
    "event": ("date",),
    "top": ("amount",),
}

# Cue words that are generic across fields: they tie a value only when no specific cue does.
WEAK_CUES = frozenset({"number", "no", "id", "#", "on", "am", "code", "nummer", "nr", "broj*",
                       "номер*", "код", "№", "day", "tag", "dan", "день", "dana"})  # fmt: skip

# --- "the change was made" --------------------------------------------------------------
# Words and phrases that state a completed change. Multi-word entries match as a run; "nnn"
# stands for a number in digits ("теперь 2 штуки").
DONE: dict[str, tuple[str, ...]] = {
    "en": (
        "done", "all set", "all done", "updated", "changed", "booked", "processed",
        "completed", "confirmed", "cancelled", "canceled", "placed", "issued",
        "refunded", "rescheduled", "modified", "adjusted", "amended", "corrected",
        "submitted", "saved", "applied", "arranged", "credited", "finished", "sorted",
        "taken care of", "went through", "gone through", "is in", "is now", "now has",
        "now shows", "now contains", "now reads", "now set", "successfully", "moved",
        "switched", "fixed", "set up", "in place", "is through", "you re set",
        "you are set", "good to go", "locked in", "registered", "recorded", "lowered",
        "raised", "increased", "reduced", "bumped", "topped up", "gone ahead and",
        "went ahead and", "added", "removed", "upgraded", "downgraded", "put through",
    ),
    "de": (
        "erledigt", "geändert", "aktualisiert", "gebucht", "storniert", "bestätigt",
        "fertig", "abgeschlossen", "durchgeführt", "veranlasst", "angepasst",
        "gespeichert", "umgestellt", "korrigiert", "eingetragen", "erfasst",
        "verschoben", "gutgeschrieben", "erstattet", "ausgeführt", "umgebucht",
        "hat jetzt", "ist jetzt", "enthält jetzt", "lautet jetzt", "hat nun", "ist nun",
        "erfolgreich", "geklappt", "alles klar gemacht", "durchgegangen", "ist drin",
        "reduziert", "erhöht", "bearbeitet", "aufgeladen", "ist durch", "gesenkt",
        "hinzugefügt", "entfernt", "eingebucht", "vorgenommen", "verbucht", "aufgestockt",
        "registriert", "umfasst jetzt",
    ),
    "hr": (
        "gotovo", "promijenio", "promijenila", "promijenjeno", "promijenjena",
        "promijenjen", "izmijenio", "izmijenila", "izmijenjeno", "izmijenjena",
        "ažurirao", "ažurirala", "ažurirano", "ažurirana", "rezervirano", "rezervirao",
        "rezervirala", "proknjiženo", "obavljeno", "obavio", "obavila", "sređeno",
        "sredio", "sredila", "napravljeno", "napravio", "napravila", "potvrđeno",
        "potvrđena", "otkazano", "otkazana", "otkazao", "otkazala", "odobren",
        "odobreno", "uplaćen", "uplaćeno", "vraćen", "vraćeno", "premješten",
        "premještena", "pomaknut", "pomaknuta", "ispravio", "ispravila", "ispravljeno",
        "uspješno", "riješeno", "sada ima", "sada je", "sad je", "sad ima", "je sada",
        "ima sada", "postavljen",
        "postavljeno", "smanjio", "smanjila", "povećao", "povećala", "upisao", "upisala",
        "upisano", "upisan", "upisana", "izvršeno", "izvršen", "knjižen", "knjiženo",
        "proknjižen", "nadoplaćen", "nadoplaćeno", "obavljen", "obavljena", "obrađeno",
        "obrađen", "obrađena", "zakazan", "zakazana", "zakazano", "povećano", "smanjeno",
        "dodano", "dodan", "uklonjen", "uklonjeno", "odobreno", "unesen", "unesena",
        "uneseno", "prošao", "prošla", "prošlo", "pomaknuli", "pomaknuo", "pomaknula",
    ),
    "ru": (
        "готово", "изменил", "изменила", "изменили", "изменено", "изменён", "изменена",
        "обновил", "обновила", "обновили", "обновлено", "обновлён", "обновлена",
        "оформил", "оформила", "оформлено", "оформлен", "оформлена", "забронировано",
        "забронировал", "забронировала", "выполнено", "выполнен", "сделано", "сделал",
        "сделала", "подтверждено", "подтверждён", "подтверждена", "отменено",
        "отменён", "отменена", "отменил", "отменила", "поменял", "поменяла",
        "поменяли", "исправил", "исправила", "исправлено", "перенёс", "перенесла",
        "перенесено", "перенесена", "оформили", "возвращено", "возвращены", "зачислено",
        "начислено", "успешно", "теперь в заказе", "теперь у вас", "теперь стоит",
        "теперь составляет", "теперь nnn", "сохранено", "сохранил", "сохранила",
        "внесено", "внёс", "внесла", "уменьшил", "уменьшила", "увеличил", "увеличила",
        "проведено", "проведён", "проведена", "записал", "записала", "записано",
        "записаны", "записан", "записана", "зачислен", "зачислена", "пополнен",
        "пополнена", "пополнено", "назначена", "назначен", "назначено", "обработано",
        "обработан", "обработана", "увеличено", "уменьшено", "добавлено", "добавлен",
        "удалено", "прошёл", "прошла", "прошло", "перенесли",
    ),
}  # fmt: skip

# Words that make a completion statement not one: negation, failure, future, offers and
# questions. They count when they stand in the same clause before the completion word.
NOT_DONE: dict[str, tuple[str, ...]] = {
    "en": (
        "not", "never", "no", "nothing", "unable", "cannot", "failed", "fail",
        "error", "will", "ll", "going to", "gonna", "shall", "should", "would", "could",
        "can", "let me", "want me", "like me", "if", "once", "when", "as soon as", "yet",
        "unfortunately", "about to", "trying", "try", "attempt",
        "being", "until", "unless", "might", "may", "need to", "have to", "needs to",
        "whether", "still", "pending", "problem", "issue", "wasn", "isn", "didn",
        "hasn", "haven", "couldn", "won",
    ),
    "de": (
        "nicht", "kein", "keine", "keinen", "nichts", "nie", "leider", "werde", "werden",
        "wird", "soll", "sollen", "möchten", "möchtest", "wollen", "kann", "können",
        "könnte", "wenn", "sobald", "falls", "noch", "fehlgeschlagen",
        "fehler", "problem", "gleich", "versuche", "versucht", "bevor", "bis", "ob",
        "muss", "müssen",
    ),
    "hr": (
        "ne", "nije", "nisam", "nismo", "nisu", "nikad", "ništa", "nažalost", "ću",
        "ćemo", "će", "ćete", "hoću", "hoćete", "li", "mogu", "možete", "želite",
        "trebam", "treba", "ako", "kad", "kada", "čim", "još", "greška", "problem",
        "pokušavam", "pokušat", "prije", "dok", "moram", "bih", "bi",
    ),
    "ru": (
        "не", "нет", "ничего", "никогда", "к сожалению", "буду", "будет", "будем",
        "будут", "давайте", "хотите", "могу", "можете", "можно", "если", "когда",
        "как только", "пока", "ещё", "еще", "ошибка", "проблема", "сейчас изменю",
        "попробую", "пытаюсь", "до того", "ли", "нужно", "надо", "должен", "должна",
        "бы", "изменю", "обновлю", "оформлю", "сделаю", "поменяю", "исправлю",
        "перенесу", "отменю", "сохраню", "внесу",
    ),
}  # fmt: skip
