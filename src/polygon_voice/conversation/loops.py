"""Loop detection (LOOP-1, LOOP-2): do the agent's last two replies overlap too much?"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_WORD = re.compile(r"\w+")


def normalised_words(text: str) -> list[str]:
    """Lower-case words with punctuation and diacritics stripped."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _WORD.findall(stripped)


def reply_overlap(first: str, second: str) -> float:
    """Multiset intersection of normalised words over the longer reply's length (0..1)."""
    a, b = normalised_words(first), normalised_words(second)
    longer = max(len(a), len(b))
    if longer == 0:
        return 0.0
    shared = sum((Counter(a) & Counter(b)).values())
    return shared / longer
