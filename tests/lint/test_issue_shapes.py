"""Three shapes tiers 1-2 once missed, in a short prompt and in other words and languages."""

from __future__ import annotations

import pytest

from polygon_voice.lint import lint

HEAD = "You are the phone agent of Norda Air. Callers ask about bookings and refunds.\n"
HEADS = {
    "de": "Du bist der Telefonassistent von Norda Air und hilfst bei Buchungen.\n",
    "hr": "Ti si telefonski asistent tvrtke Norda Air i pomažeš s rezervacijama.\n",
    "ru": "Ты голосовой помощник авиакомпании Норда и помогаешь с бронированиями.\n",  # noqa: RUF001
}


def head(sentence: str) -> str:
    """A first line in the sentence's language (the language is detected from the text)."""
    if any("\u0400" <= ch <= "\u04ff" for ch in sentence):
        return HEADS["ru"]
    if any(ch in "äöüß" for ch in sentence) or sentence.split()[0] in {"Biete", "Frag", "Antworte"}:
        return HEADS["de"]
    if any(ch in "čćđšž" for ch in sentence) or sentence.split()[0] in {"Uvijek", "Pitaj", "Budi"}:
        return HEADS["hr"]
    return HEAD


def marked(text: str, axis: str) -> list[str]:
    report = lint(text, max_tier=2, env={})
    return [text[f.start : f.end] for f in report.axes[axis].findings]  # type: ignore[index]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # The sentences of the original report.
        (
            "Always offer a refund when the caller is unhappy.",
            "Never offer a refund under any circumstances.",
        ),
        # The same conflict in other words, and in the other languages.
        (
            "Always offer a voucher when the customer is disappointed.",
            "Do not offer vouchers to anyone, whatever happens.",
        ),
        (
            "Biete immer eine Erstattung an, wenn der Kunde unzufrieden ist.",
            "Biete niemals eine Erstattung an.",
        ),
        ("Uvijek ponudi povrat novca nezadovoljnom korisniku.", "Nikad ne nudi povrat novca."),
        (
            "Всегда предлагай возврат денег недовольному клиенту.",
            "Никогда не предлагай возврат денег.",
        ),
    ],
)
def test_opposite_directives_in_partly_different_words_contradict(first: str, second: str) -> None:
    text = f"{head(first)}{first}\n{second}\n"
    assert marked(text, "contradiction") == [second]


@pytest.mark.parametrize(
    "rules",
    [
        # The sentences of the original report.
        (
            "Ask for the order number.",
            "Request the order number from the caller.",
            "Make sure you get the order number.",
        ),
        (
            "Ask the caller for the booking reference.",
            "Obtain the booking reference from the customer.",
        ),
        ("Frag nach der Kundennummer.", "Erfrage die Kundennummer des Anrufers."),
        ("Pitaj korisnika za broj narudžbe.", "Zatraži od korisnika broj narudžbe."),
        ("Спроси у клиента номер заказа.", "Уточни у клиента номер заказа."),  # noqa: RUF001
    ],
)
def test_paraphrased_duplicates_with_synonyms_are_redundant(rules: tuple[str, ...]) -> None:
    text = head(rules[0]) + " ".join(rules) + "\n"
    assert marked(text, "redundancy") == list(rules[1:])


@pytest.mark.parametrize(
    "sentence",
    [
        "Try to be brief if possible but explain everything in full detail.",
        "Keep your answers short, and walk the caller through every detail of the fare.",
        "Antworte kurz, aber erkläre alle Details ausführlich.",
        "Budi sažet, ali detaljno objasni sve uvjete.",
        "Отвечай кратко, но подробно объясняй все условия.",
    ],
)
def test_brevity_against_full_detail_contradicts(sentence: str) -> None:
    report = lint(f"{head(sentence)}{sentence}\n", max_tier=2, env={})
    kinds = [f.kind for f in report.axes["contradiction"].findings]
    assert kinds == ["brevity-vs-detail"]


@pytest.mark.parametrize(
    "text",
    [
        # Near misses: a rule with its exception, two rules on one topic that agree, a rule
        # about another action on the same thing, brevity without detail.
        "Never give refunds, except when a supervisor approves one. Offer a refund only "
        "after a supervisor approves it.",
        "Never read out the full card number. Always read back the last four digits.",
        "Ask for the order number. Never confirm the delivery address before the caller "
        "is verified.",
        "Keep answers short. Spell names letter by letter.",
    ],
)
def test_near_misses_are_not_contradictions(text: str) -> None:
    assert marked(HEAD + text, "contradiction") == []


def test_a_term_repeated_in_different_rules_is_not_redundant() -> None:
    text = HEAD + (
        "Ask for the order number. Look the order up with `find_order`. "
        "Read the order status to the caller in one sentence."
    )
    assert marked(text, "redundancy") == []
