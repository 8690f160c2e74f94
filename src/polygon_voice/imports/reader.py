"""From PATH arguments to records: files, folders, globs and `-` (stdin); JSON, JSONL, CSV and
text; gzip recognised by its magic bytes.

A record is one JSON value (a document, a JSONL line, an item of a top-level list of calls)
or a whole CSV / text file as a string. Every record carries its source (file and line or
item index) so that an error names it. JSONL is read a line at a time, so memory stays flat
however many records a file has; a line, text file or document beyond the caps is refused.
"""

from __future__ import annotations

import codecs
import glob
import gzip
import io
import json
import os
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

from polygon_voice.imports.base import MAX_RECORD_BYTES, RecordError, loads

# A JSON document holding a list of calls may be larger than one record.
MAX_DOCUMENT_BYTES = 10 * MAX_RECORD_BYTES
JSON_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson"})
TEXT_SUFFIXES = frozenset({".csv", ".txt"})
FOLDER_SUFFIXES = JSON_SUFFIXES | TEXT_SUFFIXES
STDIN = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class Source:
    """Where a record came from: a file, and its line (JSONL) or item index (JSON list)."""

    file: str
    line: int | None = None
    index: int | None = None
    part: str = ""  # a sub-record of one record (a CSV file's call_id group)

    def __str__(self) -> str:
        text = self.file
        if self.line is not None:
            text += f":{self.line}"
        if self.index is not None:
            text += f"[{self.index}]"
        if self.part:
            text += f" ({self.part})"
        return text


@dataclass(frozen=True)
class Record:
    source: Source
    value: object


@dataclass(frozen=True)
class Unreadable:
    """A record (or a whole file) that could not be read: the import goes on without it."""

    source: Source
    error: RecordError


Item = Record | Unreadable
# Whether a whole JSON list is one record (a list of chat messages) rather than a list of calls.
IsRecord = Callable[[object], bool]


def expand_paths(paths: Iterable[str]) -> Iterator[str | Unreadable]:
    """Each PATH as the files it names: itself, a folder's files (recursively) or a glob's."""
    for raw in paths:
        if raw == STDIN:
            yield STDIN
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _importable(p))
            if not found:
                yield _file_error(raw, "the folder holds no .json, .jsonl, .ndjson, .csv or .txt")
            yield from (str(p) for p in found)
        elif path.is_file():
            yield raw
        elif _GLOB_CHARS & set(raw):
            matches = sorted(p for p in glob.glob(raw, recursive=True) if os.path.isfile(p))
            if not matches:
                yield _file_error(raw, "no file matches this pattern")
            yield from matches
        else:
            yield _file_error(raw, "no such file or folder")


def iter_records(paths: Iterable[str], is_record: IsRecord) -> Iterator[Item]:
    """Every record of every path in order, or an `Unreadable` where one cannot be read."""
    for name in expand_paths(paths):
        if isinstance(name, Unreadable):
            yield name
        else:
            yield from read_file(name, is_record)


def read_file(name: str, is_record: IsRecord) -> Iterator[Item]:
    """The records of one file (`-` is stdin)."""
    label = "<stdin>" if name == STDIN else name
    try:
        with _open(name) as stream:
            empty = True
            for item in _read_stream(label, _suffix(name), stream, is_record):
                empty = False
                yield item
            if empty:
                yield _file_error(label, "the file holds no records")
    except RecordError as exc:
        yield Unreadable(Source(label), exc)
    except (OSError, EOFError, zlib.error) as exc:
        yield _file_error(label, f"cannot read the file: {_reason(exc)}")


def _read_stream(label: str, suffix: str, stream: BinaryIO, is_record: IsRecord) -> Iterator[Item]:
    if suffix in TEXT_SUFFIXES:
        text = _text(label, _read_capped(stream, MAX_RECORD_BYTES, "file"))
        if text.strip():
            yield Record(Source(label), text)
        return
    first = _read_line(stream, 1)
    if isinstance(first, Unreadable):
        yield Unreadable(Source(label, 1), first.error)
        yield from _jsonl(label, stream, 2, None, is_record)
        return
    stripped = first.strip()
    if suffix in (".jsonl", ".ndjson"):
        yield from _jsonl(label, stream, 1, first, is_record)
    elif stripped and stripped[:1] not in (b"{", b"["):
        # Not JSON-looking: a .json file is still parsed (for its error), anything else is text.
        if suffix == ".json":
            rest = _read_capped(stream, MAX_DOCUMENT_BYTES - len(first), "document")
            yield from _document(label, first + rest, is_record)
        else:
            rest = _read_capped(stream, MAX_RECORD_BYTES - len(first), "file")
            yield Record(Source(label), _text(label, first + rest))
    elif not stripped:  # a blank first line: look at what follows
        rest = _read_capped(stream, MAX_DOCUMENT_BYTES - len(first), "document")
        data = first + rest
        if not data.strip():
            return  # an empty file: no records
        if suffix == ".json" or data.lstrip()[:1] in (b"{", b"["):
            yield from _document(label, data, is_record)
        elif len(data) > MAX_RECORD_BYTES:
            raise RecordError("", f"the file is over {MAX_RECORD_BYTES // (1024 * 1024)} MB")
        else:
            yield Record(Source(label), _text(label, data))
    elif _complete_json(first):
        second = _read_line(stream, 2)
        if second == b"" and suffix not in (".jsonl", ".ndjson"):
            yield from _document(label, first, is_record)  # a document on one line
        else:
            yield from _jsonl(label, stream, 1, first, is_record, second)
    else:
        rest = _read_capped(stream, MAX_DOCUMENT_BYTES - len(first), "document")
        yield from _document(label, first + rest, is_record)


def _jsonl(
    label: str,
    stream: BinaryIO,
    start: int,
    first: bytes | None,
    is_record: IsRecord,
    second: bytes | Unreadable | None = None,
) -> Iterator[Item]:
    """A record a line; blank lines skipped; a bad line is an error and the next lines go on.
    A line holding a list of calls gives a record per item (numbered by line and index)."""
    number = start
    line: bytes | Unreadable = _read_line(stream, number) if first is None else first
    while line != b"":
        if isinstance(line, Unreadable):
            yield Unreadable(Source(label, number), line.error)
        elif line.strip():
            yield from _split_list(_json_record(Source(label, number), line), is_record)
        number += 1
        if second is not None:
            line, second = second, None
        else:
            line = _read_line(stream, number)


def _split_list(parsed: Item, is_record: IsRecord) -> Iterator[Item]:
    """A parsed value, or its items when it is a list of calls rather than one record."""
    if isinstance(parsed, Unreadable) or not isinstance(parsed.value, list):
        yield parsed
        return
    value = parsed.value
    if not value or is_record(value):
        yield parsed
        return
    source = parsed.source
    for index, item in enumerate(value):
        yield Record(Source(source.file, source.line, index), item)


def _json_record(source: Source, data: bytes) -> Item:
    try:
        return Record(source, loads(_utf8_text(data)))
    except UnicodeDecodeError as exc:
        return Unreadable(source, RecordError("", f"not UTF-8 text (byte {exc.start})"))
    except (ValueError, RecursionError) as exc:
        return Unreadable(source, RecordError("", f"not valid JSON: {_reason(exc)}"))


def _utf8_text(data: bytes) -> str:
    """`data.decode("utf-8-sig")` (a leading byte order mark dropped), the same text and the
    same error: a line without the mark is decoded by the built-in UTF-8 codec directly,
    where "utf-8-sig" goes through its Python codec for every line of a JSONL file."""
    return data.decode("utf-8-sig" if data.startswith(codecs.BOM_UTF8) else "utf-8")


def _document(label: str, data: bytes, is_record: IsRecord) -> Iterator[Item]:
    """A JSON document: one record, or one per item when it is a list of calls."""
    yield from _split_list(_json_record(Source(label), data), is_record)


def _complete_json(line: bytes) -> bool:
    try:
        json.loads(line.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return False
    return True


def _read_line(stream: BinaryIO, number: int) -> bytes | Unreadable:
    """The next line; an over-long line is skipped to its end (never held whole) and refused."""
    line = stream.readline(MAX_RECORD_BYTES + 1)
    if len(line) <= MAX_RECORD_BYTES or line.endswith(b"\n"):
        return line
    while True:
        chunk = stream.readline(1024 * 1024)
        if not chunk or chunk.endswith(b"\n"):
            break
    limit = MAX_RECORD_BYTES // (1024 * 1024)
    return Unreadable(Source("", number), RecordError("", f"the line is over {limit} MB"))


def _read_capped(stream: BinaryIO, limit: int, what: str) -> bytes:
    data = stream.read(max(limit, 0) + 1)
    if len(data) > limit:
        mb = MAX_DOCUMENT_BYTES if what == "document" else MAX_RECORD_BYTES
        raise RecordError("", f"the {what} is over {mb // (1024 * 1024)} MB; split it")
    return data


def _text(label: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecordError("", f"{label} is not UTF-8 text (byte {exc.start})") from None


def _open(name: str) -> BinaryIO:
    """The file (or stdin) as bytes, decompressed when it starts with gzip's magic bytes."""
    buffered: io.BufferedReader = (
        io.BufferedReader(_NoClose(sys.stdin.buffer)) if name == STDIN else open(name, "rb")  # noqa: SIM115 - closed by the caller's `with`
    )
    if buffered.peek(2)[:2] == _GZIP_MAGIC:
        return cast(BinaryIO, gzip.GzipFile(fileobj=buffered, mode="rb"))
    return cast(BinaryIO, buffered)


class _NoClose(io.RawIOBase):
    """stdin's bytes, left open when the import's reader is closed."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _suffix(name: str) -> str:
    """The file's kind by name: `.jsonl` for `calls.jsonl.gz`, '' for stdin or no suffix."""
    if name == STDIN:
        return ""
    path = Path(name)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _importable(path: Path) -> bool:
    return _suffix(str(path)) in FOLDER_SUFFIXES and not path.name.startswith(".")


def _file_error(name: str, message: str) -> Unreadable:
    return Unreadable(Source(name), RecordError("", message))


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
