"""The prompt cut into sentences with their offsets, and the words of each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from polygon_voice.lint.confidence import confidence_of
from polygon_voice.lint.model import Axis, Finding

# A sentence ends at . ! ? (and a closing quote or bracket after it) before a capital (or
# the end): "etc. and", "e.g. words" go on.
_SENTENCE = re.compile(
    r"\s*.+?(?:[.!?]+[\"\u201c\u201d\u00bb\u00ab')]?(?=\s+[\W_]*[A-Z0-9ÄÖÜČĆĐŠŽ\u0410-\u042f\u0401]|\s*$)|$)",
    re.DOTALL,
)
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019][^\W\d_]+)?")
# Code and placeholders are names, not wording: `update_order`, {order_id}.
_CODE = re.compile(r"`[^`\n]*`|\{[^}\n]*\}")


@dataclass(frozen=True)
class Sentence:
    """One sentence (or list item) of the prompt."""

    index: int
    start: int
    end: int
    text: str

    @cached_property
    def words(self) -> tuple[str, ...]:
        """Lower-case words, code spans left out."""
        return tuple(w.lower() for w in _WORD.findall(_CODE.sub(" ", self.text)))


class Prompt:
    """The prompt's text, its sentences, and offset to line/column."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
        self.sentences = tuple(_split(text))

    @cached_property
    def word_count(self) -> int:
        return sum(len(s.words) for s in self.sentences)

    def position(self, offset: int) -> tuple[int, int]:
        """(line, column), both from 1."""
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._line_starts[lo] + 1

    def finding(
        self,
        axis: Axis,
        start: int,
        end: int,
        *,
        tier: int,
        kind: str,
        weight: float,
        message: str,
    ) -> Finding:
        line, column = self.position(start)
        return Finding(
            axis=axis,
            start=start,
            end=end,
            line=line,
            column=column,
            tier=tier,
            kind=kind,
            weight=round(weight, 3),
            message=message,
            confidence=confidence_of(kind),
        )


def _split(text: str) -> list[Sentence]:
    sentences: list[Sentence] = []
    for block_start, block_end in _blocks(text):
        for start, end in _date_joined(_pieces(text, block_start, block_end), text):
            stripped = text[start:end]
            if len(_WORD.findall(stripped)) < 2:
                continue
            sentences.append(Sentence(len(sentences), start, end, stripped))
    return sentences


def _pieces(text: str, block_start: int, block_end: int) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a block, spaces around left out."""
    found = []
    for match in _SENTENCE.finditer(text, block_start, block_end):
        piece = match.group()
        stripped = piece.strip()
        if stripped:
            start = match.start() + len(piece) - len(piece.lstrip())
            found.append((start, start + len(stripped)))
    return found


# "bis zum 15. Januar": the dot of a German date's day is no sentence's end.
_DAY_OF_DATE = re.compile(r"(?<![\d.])\b\d{1,2}\.$")
_MONTH = re.compile(
    r"(?:Januar|Jänner|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November"
    r"|Dezember)\b"
)


def _date_joined(pieces: list[tuple[int, int]], text: str) -> list[tuple[int, int]]:
    joined: list[tuple[int, int]] = []
    for start, end in pieces:
        if joined and _MONTH.match(text, start) and _DAY_OF_DATE.search(text, *joined[-1]):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def _blocks(text: str) -> list[tuple[int, int]]:
    """Paragraphs and list items as (start, end): a wrapped line continues its sentence."""
    blocks: list[tuple[int, int]] = []
    offset = 0
    lines = text.splitlines(keepends=True)
    for k, raw_line in enumerate(lines):
        line = raw_line.rstrip("\r\n")
        end = offset + len(line)
        mark = _LIST_MARK.match(line)
        # Markdown headings name a section; they give no instruction.
        if not line.strip() or line.lstrip().startswith("#"):
            blocks.append((end, end))
        elif mark or not blocks or blocks[-1][0] == blocks[-1][1]:
            blocks.append((offset + (mark.end() if mark else 0), end))
            if not mark and _is_title(line, lines[k + 1] if k + 1 < len(lines) else ""):
                # A title line ("Zum Schluss", "Returns") names the section below it: the
                # rule on the next line does not start with it.
                blocks.append((end, end))
        else:
            blocks[-1] = (blocks[-1][0], end)
        offset += len(raw_line)
    return [block for block in blocks if block[0] < block[1]]


# A section's title: a line of a few words, without a sentence's end or a comma.
_TITLE = re.compile(r"^\s*[^\W\d_][^.!?,;:\n]{0,40}(?<![.!?,;:])\s*$")
_TITLE_WORDS = 4


def _is_title(line: str, following: str) -> bool:
    """Whether a paragraph's first line is a title: short, unpunctuated, and the next line
    starts anew (a capital, a digit, a list mark); a wrapped line runs on in lower case."""
    if not _TITLE.match(line) or len(_WORD.findall(line)) > _TITLE_WORDS:
        return False
    head = following.lstrip()[:1]
    return bool(head) and not head.islower()


def detect_language(text: str) -> str:
    """en, de, hr or ru, from the alphabet and a few function words (good enough for prompts)."""
    lowered = text.lower()
    if len(re.findall(r"[\u0430-\u044f\u0451]", lowered)) > len(re.findall(r"[a-z]", lowered)):
        return "ru"
    words = _WORD.findall(lowered)
    hints = {
        "de": {"der", "die", "und", "nicht", "du", "sie", "ist", "mit", "immer", "niemals"},
        "hr": {"je", "i", "ne", "se", "da", "nikada", "uvijek", "ili", "što", "kako"},
        "en": {"the", "and", "you", "not", "is", "to", "never", "always", "with", "a"},
    }
    counts = {lang: sum(w in vocab for w in words) for lang, vocab in hints.items()}
    return max(("en", "de", "hr"), key=lambda lang: counts[lang])
