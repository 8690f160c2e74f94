# ruff: noqa: RUF001, RUF002
"""What the agent just said, as far as a caller without a model can tell.

Keyword rules per language over case- and diacritic-folded words (so "narudzbe" from a
recogniser that drops diacritics still reads as "narudžbe"). The agent's turn is split
into sentences; a sentence is a question when it ends with "?" or makes a request
("tell me", "nennen Sie", "recite mi", "назовите"). From those the caller learns:

* which of its facts the agent asks for (by the fact's words, `caller.facts`), or that
  it asks for something the caller does not know ("your postcode");
* whether the agent proposes something (a yes/no question, an offer, a choice
  "X or Y?") — what a refusing caller declines;
* whether it reports the goal done ("updated", "erledigt", "gotovo", "готово", with
  no negation in the sentence), asks "anything else?", asks to repeat, says goodbye,
  or identifies itself ("this is ...", "hier ist ...", "ovdje je ...", "меня зовут ...");
* the numbers it said, to check a read-back against the facts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from polygon_voice.caller.facts import FORMS, canonical, fact_words

Table = dict[str, tuple[str, ...]]


def phrases(text: str) -> tuple[str, ...]:
    """Phrases written as "a|b c|d*" (one string keeps a table readable)."""
    return tuple(part.strip() for part in text.split("|") if part.strip())


REQUEST: Table = {
    "en": phrases(
        "tell me|give me|provide|need your|need the|can i have|please say|"
        "may i have|can i get|could i get|let me know|spell|could you tell|could you give|"
        "can you tell|can you give"
    ),
    "de": phrases(
        "nennen sie|sagen sie mir|geben sie mir|brauche ihre|brauche ich ihre|benötige ihre|"
        "benötige ich ihre|teilen sie mir|können sie mir|könnten sie mir|brauche noch|"
        "brauche ich noch|benötige noch|bitte nennen"
    ),
    "hr": phrases(
        "recite mi|kažite mi|dajte mi|trebam vaš*|trebat ću vaš*|navedite|mogu li dobiti|"
        "možete li mi|možete li reći|molim vaš*|trebam još|treba mi|trebao bih|trebala bih"
    ),
    "ru": phrases(
        "назовите|скажите|продиктуйте|укажите|сообщите|подскажите|нужен ваш|нужна ваша|"
        "нужно ваше|не могли бы вы|можете назвать|мне нужен|мне нужна|мне нужно знать"
    ),
}

WH: Table = {
    "en": phrases("what|which|when|where|who|whom|whose|why|how"),
    "de": phrases("was|welch*|wann|wo|wer|wem|wen|wessen|warum|wie|wieso|weshalb|wohin|woher"),
    "hr": phrases("što|šta|koj*|kad|kada|gdje|tko|kome|čij*|zašto|kako|koliko|kamo"),
    "ru": phrases("что|как*|когда|где|кто|кому|чей|чья|почему|зачем|сколько|куда|откуда|чем"),
}

OFFER: Table = {
    "en": phrases(
        "would you like|shall i|should i|do you want|i can offer|we can offer|how about|"
        "what about|i suggest|i recommend|i could|we could|is it ok if|is that ok"
    ),
    "de": phrases(
        "möchten sie|wollen sie|soll ich|sollen wir|ich kann ihnen|wir können ihnen|wie wäre es|"
        "ich schlage vor|ich empfehle|darf ich"
    ),
    "hr": phrases(
        "želite li|hoćete li|da li želite|mogu vam ponuditi|možemo vam ponuditi|što kažete na|"
        "predlažem|mogu li|trebam li|može li"
    ),
    "ru": phrases(
        "хотите|желаете|могу предложить|можем предложить|как насчет|предлагаю|давайте|можно я|"
        "подтверждаете|оформляем"
    ),
}

CHOICE: Table = {
    "en": phrases("or"),
    "de": phrases("oder"),
    "hr": phrases("ili"),
    "ru": phrases("или"),
}

DONE: Table = {
    "en": phrases(
        "done|updated|changed|cancelled|canceled|booked|confirmed|all set|scheduled|rescheduled|"
        "moved|processed|sorted|taken care of"
    ),
    "de": phrases(
        "erledigt|geändert|aktualisiert|storniert|gebucht|bestätigt|verschoben|eingetragen|"
        "fertig|umgestellt"
    ),
    "hr": phrases(
        "gotovo|promijenjen*|izmijenjen*|ažuriran*|otkazan*|rezerviran*|potvrđen*|pomaknut*|"
        "sređen*|upisan*|napravljen*"
    ),
    "ru": phrases(
        "готово|изменен|изменена|изменено|изменены|обновлен|обновлена|обновлено|обновлены|"
        "отменен|отменена|отменено|оформлен|оформлена|оформлено|подтвержден|подтверждена|"
        "подтверждено|перенесен|перенесена|перенесено|сделано"
    ),
}

NEGATION: Table = {
    "en": phrases("not|couldn t|can t|cannot|won t|didn t|wasn t|isn t|hasn t|unable|failed"),
    "de": phrases("nicht|kein*|leider|fehlgeschlagen"),
    "hr": phrases("nije|nisu|nismo|ne|nažalost|neuspješn*"),
    "ru": phrases("не|нет|к сожалению|невозможно|ошибк*"),
}

IDENTIFIED: Table = {
    "en": phrases(
        "this is|my name is|you re speaking|you are speaking|you ve reached|you have reached|"
        "calling from|speaking with|on behalf of|i m calling|i am calling|i work for|"
        "you re through to|you are through to"
    ),
    "de": phrases(
        "hier ist|hier spricht|mein name ist|ich heiße|sie sprechen mit|sie sind verbunden mit|"
        "im auftrag|ich arbeite für"
    ),
    "hr": phrases(
        "ovdje je|ovo je|zovem se|razgovarate s|razgovarate sa|dobili ste|u ime|radim u|radim za|"
        "ja sam"
    ),
    "ru": phrases(
        "меня зовут|вы позвонили в|вы дозвонились в|вы говорите с|вас приветствует|это служба|"
        "это компания|на связи|я оператор|я сотрудник|я из"
    ),
}

GOODBYE: Table = {
    "en": phrases("goodbye|bye|have a nice day|have a good day|take care"),
    "de": phrases("auf wiederhören|auf wiedersehen|tschüss|schönen tag"),
    "hr": phrases("doviđenja|do viđenja|ugodan dan|lijep pozdrav|bok|zbogom"),
    "ru": phrases("до свидания|всего доброго|всего хорошего|хорошего дня"),
}

ANYTHING_ELSE: Table = {
    "en": phrases("anything else|something else|anything more|else i can"),
    "de": phrases("sonst noch|noch etwas|sonst etwas|noch was|weiteres anliegen"),
    "hr": phrases("još nešto|nešto drugo|još nečim|još čime|još nečemu"),
    "ru": phrases("что то еще|что нибудь еще|еще чем|еще что|чем то еще"),
}

REPEAT: Table = {
    "en": phrases(
        "repeat|say that again|come again|pardon|didn t catch|did not catch|didn t understand|"
        "did not understand|didn t get that|sorry what"
    ),
    "de": phrases("wiederholen|noch einmal|nochmal|wie bitte|nicht verstanden"),
    "hr": phrases(
        "ponovite|ponoviti|nisam razumio|nisam razumjela|nisam čuo|nisam čula|još jednom"
    ),
    "ru": phrases("повторите|повторить|еще раз|не расслышал*|не понял*"),
}

# A whole turn that is only this asks to repeat ("Sorry?", "Molim?"); inside a sentence
# these words mean something else ("molim" is also "please").
BARE_REPEAT: Table = {
    "en": phrases("sorry|pardon|what|sorry what"),
    "de": phrases("bitte|wie bitte|was|entschuldigung"),
    "hr": phrases("molim|molim vas|što|oprostite"),
    "ru": phrases("простите|что|извините|что что"),
}

# "your ..." in a question: the agent asks for something of the caller's.
POSSESSIVE: dict[str, re.Pattern[str]] = {
    "en": re.compile(r"\byour\b"),
    "de": re.compile(r"\b(?:ihre|ihren|ihrem|ihrer)\b"),
    "hr": re.compile(r"\b(?:vaš|vaša|vaše|vašu|vašeg|vašem|vašoj|vaših|vašim)\b"),
    "ru": re.compile(r"\b(?:ваш|ваша|ваше|вашу|вашего|вашей|ваши|вашем)\b"),
}

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
_WORD = re.compile(r"\w+")
_VALUE = re.compile(r"\d{4}-\d{2}-\d{2}|\d+(?:[.,]\d+)?")


def fold(text: str) -> str:
    """Case-folded, diacritics stripped (đ -> d, ё -> е, ß -> ss)."""
    text = text.casefold().replace("đ", "d").replace("ё", "е")
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalise(text: str) -> str:
    """Folded words joined by single spaces: punctuation and hyphens become gaps."""
    return " ".join(_WORD.findall(fold(text)))


def _phrase_regex(phrase: str) -> str:
    """Words in order; a word ending in `*` takes any ending ("narudžb*": narudžba, -e, -u)."""
    parts = []
    for word in phrase.split():
        folded = normalise(word.rstrip("*"))
        if folded:
            any_ending = r"\w*" if word.endswith("*") else ""
            parts.append(re.escape(folded).replace(r"\ ", r"\s+") + any_ending)
    return r"\s+".join(parts)


def compile_phrases(phrases: Iterable[str]) -> re.Pattern[str]:
    """One regex for phrases over normalised text; longer phrases are tried first."""
    ordered = sorted(set(phrases), key=len, reverse=True)
    alternatives = "|".join(_phrase_regex(p) for p in ordered)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


@cache
def _markers(table: str, language: str) -> re.Pattern[str]:
    return compile_phrases(_TABLES[table][language])


_TABLES: dict[str, Table] = {
    "request": REQUEST,
    "wh": WH,
    "offer": OFFER,
    "choice": CHOICE,
    "done": DONE,
    "negation": NEGATION,
    "identified": IDENTIFIED,
    "goodbye": GOODBYE,
    "anything_else": ANYTHING_ELSE,
    "repeat": REPEAT,
}


def _has(table: str, language: str, normalised_text: str) -> bool:
    return _markers(table, language).search(normalised_text) is not None


@dataclass(frozen=True)
class Vocabulary:
    """The words of one caller's facts (and of facts it does not have) in its language."""

    language: str
    patterns: tuple[tuple[str, re.Pattern[str]], ...]
    known: frozenset[str]


def vocabulary(language: str, keys: Sequence[str]) -> Vocabulary:
    """Patterns for the persona's fact keys, and for the common keys it lacks (unknowns)."""
    mine = {canonical(key) for key in keys}
    patterns = [(key, compile_phrases(fact_words(key, language))) for key in keys]
    others = [name for name in FORMS if name not in mine]
    patterns += [(name, compile_phrases(fact_words(name, language))) for name in others]
    return Vocabulary(language, tuple(patterns), frozenset(keys))


@dataclass(frozen=True)
class Heard:
    """What the caller made of the agent's last turn."""

    text: str
    asked: tuple[str, ...] = ()
    unknown: str | None = None
    mentioned: tuple[str, ...] = ()
    question: bool = False
    yes_no: bool = False
    choice: bool = False
    offer: bool = False
    done: bool = False
    anything_else: bool = False
    repeat: bool = False
    goodbye: bool = False
    identified: bool = False
    values: tuple[str, ...] = ()

    @property
    def proposal(self) -> bool:
        """The agent proposes or asks to confirm something (what a refusing caller declines)."""
        return self.offer or self.yes_no or self.choice

    @property
    def empty(self) -> bool:
        """The caller heard no words at all."""
        return not self.text.strip()


@dataclass
class _Reading:
    """Flags gathered sentence by sentence."""

    asked: list[str]
    mentioned: list[str]
    unknown: str | None = None
    question: bool = False
    yes_no: bool = False
    choice: bool = False
    offer: bool = False
    done: bool = False


def hear(text: str, words: Vocabulary) -> Heard:
    """Recognise what the agent said (`text` is what the caller heard of it)."""
    language = words.language
    whole = normalise(text)
    reading = _Reading(asked=[], mentioned=[])
    for sentence in _SENTENCE_END.split(text.strip()):
        _read_sentence(sentence, words, reading)
    return Heard(
        text=text,
        asked=tuple(dict.fromkeys(reading.asked)),
        unknown=reading.unknown if not reading.asked else None,
        mentioned=tuple(dict.fromkeys(reading.mentioned)),
        question=reading.question,
        yes_no=reading.yes_no,
        choice=reading.choice,
        offer=reading.offer,
        done=reading.done,
        anything_else=_has("anything_else", language, whole),
        repeat=_has("repeat", language, whole) or whole in BARE_REPEAT[language],
        goodbye=_has("goodbye", language, whole) and not reading.question,
        identified=_has("identified", language, whole),
        values=tuple(_VALUE.findall(text)),
    )


def _read_sentence(sentence: str, words: Vocabulary, reading: _Reading) -> None:
    language = words.language
    norm = normalise(sentence)
    if not norm:
        return
    named = named_facts(norm, words)
    known = [key for key in named if key in words.known]
    reading.mentioned += known
    request = _has("request", language, norm)
    asking = sentence.rstrip().endswith("?") or request
    if not asking:
        reading.done = reading.done or _is_done(norm, language)
        return
    reading.question = True
    # "How about Friday?" offers; "Welche Menge möchten Sie?" asks: look for question words
    # outside the offer phrase.
    offered = _markers("offer", language).sub(" ", norm)
    wh = _has("wh", language, offered)
    offer = offered != norm and not request and not wh
    choice = _has("choice", language, norm)
    other = _has("anything_else", language, norm) or _has("repeat", language, norm)
    # "So that's order 5599, correct?" names a fact with a number: a read-back to confirm.
    readback = _VALUE.search(sentence) is not None and not (wh or request)
    if named and (request or wh or not offer) and not readback:
        reading.asked += known
        unknown = [key for key in named if key not in words.known]
        if unknown and not known:
            reading.unknown = unknown[0]
    elif not named and _asks_for_yours(sentence, language) and not offer:
        reading.unknown = reading.unknown or "?"
    reading.offer = reading.offer or offer
    reading.choice = reading.choice or choice
    plain = not (named or wh or request or offer or other)
    reading.yes_no = reading.yes_no or plain or offer or readback


def named_facts(norm: str, words: Vocabulary) -> list[str]:
    """Fact keys named in a normalised sentence, in order; a longer name wins an overlap."""
    spans: list[tuple[int, int, str]] = []
    for key, pattern in words.patterns:
        spans += [(m.start(), m.end(), key) for m in pattern.finditer(norm)]
    spans.sort(key=lambda span: (span[0] - span[1], span[0]))
    taken: list[tuple[int, int, str]] = []
    for start, end, key in spans:
        if all(end <= s or start >= e for s, e, _ in taken):
            taken.append((start, end, key))
    return list(dict.fromkeys(key for _, _, key in sorted(taken)))


def _is_done(norm: str, language: str) -> bool:
    return _has("done", language, norm) and not _has("negation", language, norm)


def _asks_for_yours(sentence: str, language: str) -> bool:
    soft = sentence.casefold().replace("ё", "е")
    return POSSESSIVE[language].search(soft) is not None
