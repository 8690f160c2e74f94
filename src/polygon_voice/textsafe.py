"""Text from outside Polygon, made safe to store and safe to show.

Models, agents and files can send any string. Two kinds of character do harm here:

* **Unstorable** code points: a lone surrogate (U+D800..U+DFFF, which a JSON escape such
  as ``"\\ud800"`` produces) cannot be encoded as UTF-8, so JSON, SQLite and PostgreSQL
  all refuse it; PostgreSQL also refuses NUL in a text column. `storable_text` and
  `storable` replace each with U+FFFD and count the replacements, so a caller can flag
  them (the engine's trace note ``text_sanitised``) instead of losing the call.
* **Terminal controls**: ESC, OSC and the other C0/C1 controls, bidirectional overrides
  and lone surrogates would act on the terminal (clear it, set its title, write the
  clipboard) or crash the write. `visible` shows each as an escape (``\\x1b``,
  ``\\u202e``); newlines and tabs stay, since the views are multi-line.

Both are pure and idempotent: cleaning clean text returns it unchanged (and the same
object, so the common case costs one regex scan).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

REPLACEMENT = "\ufffd"
log = logging.getLogger("polygon_voice.files")

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# C0 controls but tab and newline, DEL, C1 controls, the line/paragraph separators and the
# bidirectional embedding/override/isolate marks (they reorder what the terminal shows).
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)

T = TypeVar("T")
_SCALARS = frozenset({int, float, bool, type(None)})


def storable_text(text: str) -> tuple[str, int]:
    """`text` with every lone surrogate and NUL replaced by U+FFFD, and how many were."""
    if not _unstorable(text):
        return text, 0
    return _UNSTORABLE.subn(REPLACEMENT, text)


def _unstorable(text: str) -> bool:
    # ASCII text (most of it) can only hold NUL: two C scans, ~30x faster than the regex.
    if text.isascii():
        return "\x00" in text
    return _UNSTORABLE.search(text) is not None


def _dirty(value: object) -> bool:
    """Whether `value` holds an unstorable string: the walk without building anything."""
    if isinstance(value, str):
        return _unstorable(value)
    if type(value) in _SCALARS:  # before the isinstance checks below: most leaves are these
        return False
    if isinstance(value, dict):
        return any(_dirty(key) or _dirty(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_dirty(item) for item in value)
    if isinstance(value, BaseModel):
        return any(_dirty(item) for item in value.__dict__.values())
    return isinstance(value, Mapping) and _dirty(dict(value))


def storable(value: T) -> tuple[T, int]:
    """`value` with every string in it made storable, keys included, and the count.

    Walks dicts, lists, tuples and pydantic models (rebuilt with the cleaned fields only
    when something changed); anything else is returned as is.
    """
    if not _dirty(value):  # the common case: one read-only pass
        return value, 0
    cleaned, count = _clean(value)
    return (cleaned if count else value), count


def storable_file_data(data: T, file: str) -> T:
    """`data` parsed from `file`, made storable; a warning names the file and the count.

    A JSON or YAML escape such as "\\ud800" gives a string no database can store: it is
    replaced and said once here rather than failing every call that uses it.
    """
    cleaned, count = storable(data)
    if count:
        log.warning(
            "%s: %d invalid code point(s) (lone surrogates or NUL) replaced with U+FFFD",
            file,
            count,
        )
    return cleaned


def _clean(value: Any) -> tuple[Any, int]:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, Mapping):
        return _clean_mapping(value)
    if isinstance(value, list | tuple):
        return _clean_sequence(value)
    if isinstance(value, BaseModel):
        return _clean_model(value)
    return value, 0


def _clean_mapping(value: Mapping[Any, Any]) -> tuple[Any, int]:
    total = 0
    items: list[tuple[Any, Any]] = []
    for key, item in value.items():
        clean_key, key_count = _clean(key)
        clean_item, item_count = _clean(item)
        total += key_count + item_count
        items.append((clean_key, clean_item))
    return (dict(items) if total else value), total


def _clean_sequence(value: list[Any] | tuple[Any, ...]) -> tuple[Any, int]:
    total = 0
    items: list[Any] = []
    for item in value:
        clean_item, count = _clean(item)
        total += count
        items.append(clean_item)
    if not total:
        return value, 0
    return (tuple(items) if isinstance(value, tuple) else items), total


def _clean_model(model: BaseModel) -> tuple[BaseModel, int]:
    total = 0
    changes: dict[str, Any] = {}
    for name in type(model).model_fields:
        clean_item, count = _clean(getattr(model, name))
        if count:
            total += count
            changes[name] = clean_item
    return (model.model_copy(update=changes) if total else model), total


def has_invisible(text: str) -> bool:
    """Whether `visible` would change `text`."""
    return _INVISIBLE.search(text) is not None


def invisible_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every character `visible` escapes, in order."""
    return [match.span() for match in _INVISIBLE.finditer(text)]


def visible(text: str) -> str:
    """`text` with every terminal control shown as an escape: ESC as ``\\x1b``, C1 controls
    as ``\\x9b``, bidi marks and lone surrogates as ``\\u202e``; newline and tab are kept."""
    if _INVISIBLE.search(text) is None:
        return text
    return _INVISIBLE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
