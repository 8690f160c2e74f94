"""Reading an agent's prompt without a model: its language, its task, the details it asks for.

Used by the deterministic persona generator (no model configured). It is a reader of
keywords, not of meaning: each slot kind has a few phrasings per language (en, de, hr, ru),
tried most specific first, and a phrase already claimed by one slot is not read again (so
"delivery date" is not also a plain "date", nor "email address" an "address").
"""

# Cyrillic phrasings are data here, not look-alikes of Latin letters.
# ruff: noqa: RUF001

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

# (fact name, phrasings). Order matters: the specific before the general.
_SLOT_PATTERNS: tuple[tuple[str, str], ...] = (
    ("email", r"\be-?mail(?:[- ]?address)?\b|e-?pošt\w*|электронн\w* почт\w*|имейл\w*"),
    (
        "birth_date",
        r"date of birth|birth ?date|birthday|geburtsdatum|datum\w* rođenja|дат\w* рождения",
    ),
    (
        "delivery_date",
        r"deliver(?:y)?[- ](?:date|day)|liefer(?:termin|datum|tag)\w*|datum\w* dostave"
        r"|дат\w* доставки",
    ),
    (
        "customer_id",
        r"\b(?:customer|account|member(?:ship)?|client)[- ](?:number|no\b|id\b)|kundennummer"
        r"|kontonummer|mitgliedsnummer|broj korisnika|korisnički broj|номер (?:клиента|договора)",
    ),
    (
        "order_id",
        r"\border[- ](?:number|no\b|id\b|reference)|bestellnummer|broj narudžb\w*|номер заказа"
        r"|(?<!\bin )\borders?\b(?! to\b)|\bbestellung\w*|narudžb\w*|заказ\w*",
    ),
    (
        "phone",
        r"\b(?:tele)?phone[- ]number|mobile number|callback number|contact number|telefonnummer"
        r"|handynummer|rufnummer|rückrufnummer|broj (?:telefona|mobitela)|telefonski broj"
        r"|номер телефона|телефонн\w* номер",
    ),
    ("address", r"\baddress\w*|\badresse\b|\banschrift\b|\badres\w*|\bадрес\w*"),
    (
        "quantity",
        r"\bquantit(?:y|ies)\b|\bhow many\b|\bmenge\b|\banzahl\b|\bstückzahl\b|količin\w*"
        r"|количеств\w*",
    ),
    ("appointment", r"\bappointment\w*|\breservation\w*|\btermin\w*|запис\w* на при[её]м"),
    (
        "name",
        r"\b(?:full |first |last |sur)?names?\b|\bnamen?\b|\bime\b|\bprezime\b|\bимя\b|фамили\w*",
    ),
    ("date", r"\bdates?\b|\bdatum\w*|\bдат[аеуы]\b"),
)
_SLOTS = tuple((name, re.compile(pattern, re.IGNORECASE)) for name, pattern in _SLOT_PATTERNS)

# Two slots joined by "or" in the task: a caller wants one of them, not both.
_OR_WORD = r"(?:or|oder|ili|или)"
_ARTICLE = r"(?:(?:the|a|an|die|den|das|der|dem)\s+)?"
_OR = re.compile(rf"^\s*(?:,\s*)?{_OR_WORD}\s+{_ARTICLE}$", re.IGNORECASE)

# The sentence that says what the agent is for, and the phrase after its verb.
_TASK_CUES = re.compile(
    r"\b(?:you (?:help|handle|take|process|assist|book|change|cancel|update|manage)\w*"
    r"|your (?:job|task|role|goal) is|callers? (?:can|may|want|call)"
    r"|sie helfen|du hilfst|ihre aufgabe|deine aufgabe|pomažete|pomažeš|vaš zadatak|tvoj zadatak"
    r"|вы помогаете|ты помогаешь|ваша задача|твоя задача)",
    re.IGNORECASE,
)
_HELPED = r"(?:callers?|customers?|clients?|people|users?|patients?|guests?|members?|them)"
# The phrase after the task's verb, per language; the first that matches wins.
_TASK_PHRASES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b(?:help|assist)\w*\s+(?:{_HELPED}\s+)?(?:to\s+|with\s+)?(?P<task>.+)$",
        r"\b(?:job|task|role|goal) is to\s+(?P<task>.+)$",
        r"\b(?:sie helfen|du hilfst)\s+\w+,?\s+(?P<task>.+)$",
        r"\b(?:ihre|deine) aufgabe ist(?: es)?,?\s+(?P<task>.+)$",
        r"\b(?:pomažete|pomažeš)\s+\w+\s+(?P<task>.+)$",
        r"\b(?:vaš|tvoj) zadatak je\s+(?P<task>.+)$",
        r"\b(?:вы помогаете|ты помогаешь)\s+\w+\s+(?P<task>.+)$",
        r"\b(?:ваша|твоя) задача\s*[—–-]?\s*(?P<task>.+)$",
    )
)
# A list item or a blank line starts a new block; lines inside a block are one text.
_BLOCK_BREAK = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MARKUP = re.compile(r"[#*_`>|]+|^\s*[-+]\s+|^\s*\d+[.)]\s+", re.MULTILINE)
# A plain "date" says nothing new next to a date of a known kind.
_DATED = frozenset({"delivery_date", "birth_date", "appointment"})

_STOPWORDS = {
    "en": {"the", "you", "and", "to", "of", "is", "your", "a", "for", "with"},
    "de": {"der", "die", "das", "und", "sie", "ist", "nicht", "mit", "ein", "eine", "zu"},
    "hr": {"je", "i", "za", "se", "ste", "vi", "da", "na", "u", "ako", "ili"},
}


@dataclass(frozen=True)
class Slot:
    """A detail the agent asks for: its fact name and the words the prompt used for it."""

    name: str
    label: str
    position: int
    end: int


@dataclass(frozen=True)
class PromptReading:
    """What a prompt is about: language, task phrase, slots, and slot alternatives."""

    language: str
    task: str
    slots: tuple[Slot, ...]
    # Groups of slot names the task joins with "or" ("the quantity or delivery date").
    alternatives: tuple[tuple[str, ...], ...] = ()


def read_prompt(text: str) -> PromptReading:
    """Read a prompt's language, task and slots; never fails (an empty prompt has none)."""
    sentences = _sentences(text)
    plain = " ".join(sentences)
    task = find_task(sentences)
    slots = find_slots(plain)
    if _DATED & {slot.name for slot in slots}:
        slots = tuple(slot for slot in slots if slot.name != "date")
    return PromptReading(
        language=detect_language(plain),
        task=task,
        slots=slots,
        alternatives=_alternatives(task),
    )


def _sentences(text: str) -> list[str]:
    blocks = (" ".join(_MARKUP.sub(" ", block).split()) for block in _BLOCK_BREAK.split(text))
    return [s.strip() for block in blocks for s in _SENTENCE_END.split(block) if s.strip()]


def detect_language(text: str) -> str:
    """en, de, hr or ru, by script and by the commonest short words; en when unsure."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum("\u0400" <= c <= "\u04ff" for c in letters) > len(letters) / 5:
        return "ru"
    words = re.findall(r"\w+", text.lower())
    scores = {lang: sum(w in stop for w in words) for lang, stop in _STOPWORDS.items()}
    if any(c in text.lower() for c in "čćđ"):
        scores["hr"] += len(words) // 10 + 1
    if any(c in text.lower() for c in "äöüß"):
        scores["de"] += len(words) // 10 + 1
    best = max(scores, key=lambda lang: (scores[lang], lang == "en"))
    return best if scores[best] > 0 else "en"


def find_task(sentences: list[str]) -> str:
    """The phrase saying what the agent does for callers ("change ... of an order"), or "".

    Without a sentence that says what callers get, there is no task: a prompt's first line
    ("You are the order line") is no goal a caller could have.
    """
    chosen = next((s for s in sentences if _TASK_CUES.search(s)), "")
    phrase = chosen
    for pattern in _TASK_PHRASES:
        found = pattern.search(chosen)
        if found is not None:
            phrase = found.group("task")
            break
    phrase = re.sub(r"\btheir\b", "your", phrase.strip().rstrip(".!?:;"), flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", phrase)


def find_slots(text: str) -> tuple[Slot, ...]:
    """Every slot the text mentions, in the order of first mention."""
    masked = text
    found: list[Slot] = []
    for name, pattern in _SLOTS:
        match = pattern.search(masked)
        if match is None:
            continue
        found.append(Slot(name, match.group(0).lower(), match.start(), match.end()))
        # Claim every mention, so a general pattern does not read it again.
        masked = pattern.sub(lambda m: " " * len(m.group(0)), masked)
    return tuple(sorted(found, key=lambda slot: slot.position))


def _alternatives(task: str) -> tuple[tuple[str, ...], ...]:
    slots = find_slots(task)
    groups: list[list[str]] = []
    for first, second in itertools.pairwise(slots):
        if not _OR.match(task[first.end : second.position]):
            continue
        if groups and groups[-1][-1] == first.name:
            groups[-1].append(second.name)
        else:
            groups.append([first.name, second.name])
    return tuple(tuple(group) for group in groups)


def drop_alternative(task: str, drop: str) -> str:
    """The task phrase without one slot of an "X or Y" pair ("the quantity or date" -> ...)."""
    pattern = dict(_SLOTS)[drop]
    match = pattern.search(task)
    if match is None:
        return task
    before, after = task[: match.start()], task[match.end() :]
    joined = re.search(rf"\s*(?:,\s*)?\b{_OR_WORD}\s+{_ARTICLE}$", before)
    if joined is not None:  # "the quantity or [the date] of": drop " or the date"
        return _tidy(before[: joined.start()] + after)
    follows = re.match(rf"\s*(?:,\s*)?{_OR_WORD}\s+", after)
    if follows is not None:  # "the [quantity] or the date": drop "the quantity or "
        return _tidy(re.sub(rf"\b{_ARTICLE}$", "", before) + after[follows.end() :])
    return task


def _tidy(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
