"""What the reference agents understand of a caller's words (they transcribe precisely)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_ORDER = re.compile(r"\b(\d{4,6})\b")  # "four or more digits", as the order line asks
_QUANTITY = re.compile(
    # "6 items", and the scripted caller's "change the quantity (of order 5590) to 6",
    # "quantity 6", "make it 6"
    r"\b(\d{1,3})\s+(?:items?|pieces?)\b"
    r"|\bquantity\s+(?:of\s+order\s+\d+\s+)?(?:to\s+|of\s+)?(\d{1,3})\b(?![-\d])"
    r"|\bmake\s+it\s+(\d{1,3})\b(?![-\d])"
)
_AMOUNT = re.compile(r"\b(\d{1,3})\s+euros?\b")
_NEGATION = re.compile(r"\b(?:don't|do not|stop|leave it)\b")
_YES = re.compile(r"\b(?:yes|go ahead)\b")
_BYE = re.compile(r"\b(?:bye|goodbye)\b")


@dataclass
class Heard:
    """The request details and signals found in one utterance."""

    values: dict[str, Any] = field(default_factory=dict)
    kind: str | None = None
    negation: bool = False
    yes: bool = False
    bye: bool = False


def understand(text: str) -> Heard:
    """Order number, quantity, delivery date, refund amount; the last mention wins."""
    lowered = text.lower()
    heard = Heard(
        negation=bool(_NEGATION.search(lowered)),
        yes=bool(_YES.search(lowered)),
        bye=bool(_BYE.search(lowered)),
    )
    dates = _DATE.findall(lowered)
    if dates:
        heard.values["delivery_date"] = dates[-1]
    without_dates = _DATE.sub(" ", lowered)
    amounts = _AMOUNT.findall(without_dates)
    if amounts:
        heard.values["amount"] = int(amounts[-1])
    quantities = _QUANTITY.findall(without_dates)
    if quantities:
        heard.values["quantity"] = int(next(group for group in quantities[-1] if group))
    orders = _ORDER.findall(without_dates)
    if orders:
        heard.values["order_id"] = orders[-1]
    heard.kind = _kind(lowered, heard.values)
    return heard


def _kind(lowered: str, values: dict[str, Any]) -> str | None:
    if "refund" in lowered:
        return "refund"
    if "one more" in lowered:
        return "add_one"
    if "quantity" in values or "delivery_date" in values:
        return "update"
    return None
