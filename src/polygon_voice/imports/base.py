"""The shapes every import format produces, and small helpers for writing parsers.

A record is one JSON value (a JSON document, a JSONL line) or a whole CSV / text file as a
string; a `Format` turns one record into an `ImportedCall` or raises `RecordError` naming the
field that is wrong. Parsers never let another exception escape: hostile input is normal.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, TypeVar, overload

import pydantic_core

Speaker = Literal["agent", "caller"]

T = TypeVar("T")

# Records beyond these are refused: a real call is far smaller, and a cap keeps memory bounded.
MAX_RECORD_BYTES = 20 * 1024 * 1024
MAX_TURNS = 10_000
MAX_TOOL_CALLS = 10_000


@dataclass
class ImportedTurn:
    speaker: Speaker
    text: str
    start: float | None = None  # seconds from the call's start
    end: float | None = None
    interrupted: bool = False  # cut off by the other side (barge-in)
    extra: dict[str, Any] = field(default_factory=dict)  # fields not mapped, kept


@dataclass
class ImportedToolCall:
    call_id: str
    tool: str
    args: dict[str, Any]
    result: Any = None  # the tool's answer, parsed from JSON when it is JSON text
    error: str | None = None  # the tool failed (text of the failure)
    start: float | None = None
    end: float | None = None
    after_turn: int | None = None  # index into turns of the turn after which it was made
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportedCall:
    call_id: str
    source_format: str  # the Format.name that parsed it
    turns: list[ImportedTurn]
    tool_calls: list[ImportedToolCall] = field(default_factory=list)
    started_at: datetime | None = None
    duration: float | None = None
    language: str | None = None
    ended_reason: str | None = None  # as the source says it
    metadata: dict[str, Any] = field(default_factory=dict)  # unknown/unmapped fields, KEPT
    # What should have happened, when the record says (tau-bench's gold actions): an `expect:`
    # block in the suite's YAML shape (model Expect), checked when the call is judged.
    expect: dict[str, Any] | None = None


class RecordError(Exception):
    """One record that cannot be imported; `where` is the field path inside the record."""

    def __init__(self, where: str, message: str) -> None:
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}" if where else message)


class Format(Protocol):
    # Read-only properties, so that a class attribute, a plain field or a frozen dataclass
    # field all satisfy the protocol.
    @property
    def name(self) -> str: ...  # e.g. "vapi"

    @property
    def description(self) -> str: ...

    def detect(self, record: object) -> bool: ...  # cheap, never raises

    def parse(self, record: object) -> ImportedCall: ...  # RecordError on bad input


# --- helpers for parsers ---------------------------------------------------------------------


def type_name(value: object) -> str:
    """A JSON-ish name for a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_EXPECTED = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "a list",
    dict: "an object",
}


def show(value: object, limit: int = 60) -> str:
    """A short printable form of a value, for error messages (never huge)."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def join_path(base: str, key: str | int) -> str:
    """`artifact` + `messages` -> `artifact.messages`; `messages` + 3 -> `messages[3]`."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    return f"{base}.{key}" if base else key


def expect_type(value: object, kind: type[T], where: str) -> T:
    """`value` if it is a `kind` (ints count as floats, bools never as numbers); else an error."""
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)  # type: ignore[return-value]
    if kind is int and isinstance(value, bool):
        raise RecordError(where, f"expected an integer, got {show(value)}")
    if isinstance(value, kind):
        return value
    raise RecordError(where, f"expected {_EXPECTED.get(kind, kind.__name__)}, got {show(value)}")


_MISSING = object()


@overload
def get(record: object, path: str, kind: type[T]) -> T: ...
@overload
def get(record: object, path: str, kind: type[T], default: T | None) -> T | None: ...
def get(record: object, path: str, kind: type[T], default: object = _MISSING) -> T | None:
    """The value at dotted `path` inside `record`, checked to be a `kind`.

    Missing (or null) -> `default` when one is given, else a RecordError naming the path; a
    value of the wrong type is always a RecordError (a wrong type is never silently defaulted).
    """
    current: object = record
    walked = ""
    for key in path.split("."):
        if not isinstance(current, dict):
            raise RecordError(walked or "(record)", f"expected an object, got {show(current)}")
        walked = join_path(walked, key)
        current = current.get(key)
        if current is None:
            if default is _MISSING:
                raise RecordError(walked, "missing")
            return default  # type: ignore[return-value]
    return expect_type(current, kind, walked)


def optional(record: object, path: str, kind: type[T]) -> T | None:
    """`get` with None when the field is absent or null."""
    return get(record, path, kind, None)


def loads(text: str) -> Any:
    """`json.loads(text)`, the same values, about twice as fast: pydantic's JSON parser
    (Rust) reads the common record, and whatever it refuses goes to `json.loads`, which
    gives the answer or the error. It refuses all that `json` refuses (and more: a lone
    surrogate escape, nesting deeper than 200), so a record never reads differently."""
    try:
        return pydantic_core.from_json(text)
    except ValueError:
        return json.loads(text)


def json_args(value: object, where: str) -> dict[str, Any]:
    """Tool arguments given as a JSON object or as JSON text -> a dict (empty when absent)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        try:
            value = loads(value)
        except (ValueError, RecursionError) as exc:
            raise RecordError(where, f"expected JSON arguments, got {show(value)}") from exc
    if not isinstance(value, dict):
        raise RecordError(where, f"expected an object of arguments, got {show(value)}")
    return value


def json_result(value: object) -> Any:
    """A tool result: parsed when it is JSON text, else kept as it is."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false", "null"):
            try:
                return loads(stripped)
            except (ValueError, RecursionError):
                return value
    return value


def seconds(value: object, where: str, unit: Literal["s", "ms"] = "s") -> float:
    """A time as seconds: a number (or numeric text) in `unit`, finite and not negative."""
    number: float
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RecordError(where, f"expected a number, got {show(value)}")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError as exc:
            raise RecordError(where, f"expected a number, got {show(value)}") from exc
    else:
        number = float(value)
    if not math.isfinite(number):
        raise RecordError(where, f"expected a finite number, got {show(value)}")
    if number < 0:
        raise RecordError(where, f"expected a time that is not negative, got {show(value)}")
    return number / 1000.0 if unit == "ms" else number


def optional_seconds(value: object, where: str, unit: Literal["s", "ms"] = "s") -> float | None:
    """`seconds`, or None when the value is absent."""
    return None if value is None else seconds(value, where, unit)


def seconds_at(
    obj: Mapping[str, Any], key: str, base: str, unit: Literal["s", "ms"] = "s"
) -> float | None:
    """`optional_seconds` of the field `key` of `obj` (found at `base`): the field's path is
    put together only for an error, since a parser reads several times a turn."""
    value = obj.get(key)
    # A plain number (not a bool) in range, the common case; NaN fails the range.
    if (type(value) is float or type(value) is int) and 0 <= value < math.inf:
        return value / 1000.0 if unit == "ms" else float(value)
    return None if value is None else seconds(value, join_path(base, key), unit)


def text_at(obj: Mapping[str, Any], key: str, base: str) -> str:
    """Spoken text in the field `key` of `obj` (found at `base`): a string, or empty when
    absent or null; anything else is an error naming the field's path."""
    value = obj.get(key)
    if type(value) is str:
        return value
    if value is None:
        return ""
    return expect_type(value, str, join_path(base, key))


def timestamp(value: object, where: str) -> datetime:
    """An ISO 8601 time (a trailing Z accepted) or epoch seconds / milliseconds -> datetime."""

    if isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            return datetime.fromisoformat(text)
        except ValueError as exc:
            raise RecordError(where, f"expected an ISO 8601 time, got {show(value)}") from exc
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        if not math.isfinite(number) or number < 0:
            raise RecordError(where, f"expected a time, got {show(value)}")
        if number > 1e11:  # milliseconds since the epoch
            number /= 1000.0
        try:
            return datetime.fromtimestamp(number, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise RecordError(where, f"expected a time, got {show(value)}") from exc
    raise RecordError(where, f"expected a time, got {show(value)}")


def check_counts(call: ImportedCall) -> ImportedCall:
    """Refuse a call with more turns or tool calls than any real call has."""
    if len(call.turns) > MAX_TURNS:
        raise RecordError("turns", f"{len(call.turns)} turns; the limit is {MAX_TURNS}")
    if len(call.tool_calls) > MAX_TOOL_CALLS:
        raise RecordError(
            "tool_calls", f"{len(call.tool_calls)} tool calls; the limit is {MAX_TOOL_CALLS}"
        )
    return call
