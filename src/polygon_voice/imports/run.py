"""Importing calls into a stored run of kind `imported`.

Each record is parsed, converted and stored in its own transaction (Store.add_conversation),
so a failure never leaves half a call behind; a bad record is counted and reported, and the
import goes on. The run is created when the first call is stored (an import that stores
nothing leaves no empty run) and its config says `{"kind": "imported", "source_format": ...,
"files": [...]}`, which is how `polygon runs` and the reports tell an imported run apart.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from polygon_voice.imports.base import Format, ImportedCall, RecordError
from polygon_voice.imports.detect import AUTO, Detector
from polygon_voice.imports.reader import Record, Source, Unreadable, iter_records

if TYPE_CHECKING:
    from polygon_voice.model import ConversationResult
    from polygon_voice.store import Store

RUN_KIND = "imported"
DEFAULT_NAME = "import"


@dataclass(frozen=True)
class ImportOptions:
    paths: tuple[str, ...]
    format_name: str = AUTO
    name: str | None = None  # the run's suite name; default "import"
    agent_label: str | None = None  # the speaker label of the agent (csv, lines, ...)


@dataclass(frozen=True)
class Failure:
    """One record that was not imported, with where it came from and what is wrong."""

    source: str
    where: str
    message: str

    def line(self) -> str:
        field_part = f"{self.where}: " if self.where else ""
        return f"{self.source}: {field_part}{self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"source": self.source, "field": self.where, "message": self.message}


@dataclass
class ImportSummary:
    run_id: str | None = None
    imported: int = 0
    skipped: list[Failure] = field(default_factory=list)  # nothing to store (no turns)
    failed: list[Failure] = field(default_factory=list)
    records: int = 0
    files_read: set[str] = field(default_factory=set)
    formats: dict[str, Counter[str]] = field(default_factory=dict)  # file -> format -> count
    ambiguous: dict[str, list[str]] = field(default_factory=dict)

    def format_lines(self) -> list[str]:
        """`calls.json: vapi (3 records)` for each file."""
        lines = []
        for name, counts in self.formats.items():
            parts = [f"{fmt} ({n} record{'s' if n != 1 else ''})" for fmt, n in counts.items()]
            lines.append(f"{name}: {', '.join(parts)}")
        return lines

    def source_formats(self) -> list[str]:
        seen: dict[str, None] = {}
        for counts in self.formats.values():
            seen.update(dict.fromkeys(counts))
        return list(seen)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "imported": self.imported,
            "skipped": len(self.skipped),
            "failed": len(self.failed),
            "formats": {name: dict(counts) for name, counts in self.formats.items()},
            "also_matched": self.ambiguous,
            "skips": [s.as_dict() for s in self.skipped],
            "failures": [f.as_dict() for f in self.failed],
        }


Progress = Callable[[ImportSummary], None]


class _Importer:
    def __init__(self, store: Store, options: ImportOptions, progress: Progress | None) -> None:
        self.store = store
        self.options = options
        self.progress = progress
        self.detector = Detector.for_name(options.format_name, options.agent_label)
        self.summary = ImportSummary(ambiguous=self.detector.ambiguous)
        self.seen: dict[str, str] = {}  # call id -> the source that had it first
        self.files: dict[str, None] = {}

    def run(self) -> ImportSummary:
        for item in iter_records(self.options.paths, self.detector.is_record):
            self.summary.records += 1
            self.files.setdefault(item.source.file)
            if isinstance(item, Unreadable):
                self._fail(item.source, item.error)
            else:
                self.summary.files_read.add(item.source.file)
                for source, value, fmt in self._split(item):
                    self._one(source, value, fmt)
            if self.progress is not None:
                self.progress(self.summary)
        self._finish()
        return self.summary

    def _split(self, item: Record) -> Iterator[tuple[Source, object, Format | None]]:
        """The record, or its parts for a format that splits one record into calls (CSV)."""
        try:
            fmt = self.detector.choose(item.value)
        except RecordError as exc:
            self._fail(item.source, exc)
            return
        split = getattr(fmt, "split", None)
        if split is None:
            yield item.source, item.value, fmt
            return
        try:
            parts: list[tuple[str, object]] = split(item.value)
        except RecordError as exc:
            self._fail(item.source, exc)
            return
        for label, value in parts:
            source = item.source if not label else _with_part(item.source, label)
            yield source, value, fmt

    def _one(self, source: Source, value: object, fmt: Format | None) -> None:
        assert fmt is not None
        try:
            call = parse_record(fmt, value)
            counts = self.summary.formats.setdefault(source.file, Counter())
            counts[fmt.name] += 1
            if not call.turns and not call.tool_calls:
                self.summary.skipped.append(
                    Failure(str(source), "", f"call {call.call_id}: no turns, nothing to import")
                )
                return
            self._check_duplicate(call, source)
            self._store(convert_record(call))
        except RecordError as exc:
            self._fail(source, exc)

    def _check_duplicate(self, call: ImportedCall, source: Source) -> None:
        if not call.call_id:
            raise RecordError("call_id", "the call has no id")
        first = self.seen.get(call.call_id)
        if first is not None:
            raise RecordError(
                "call_id", f"call {call.call_id!r} is imported twice: first from {first}"
            )
        self.seen[call.call_id] = str(source)

    def _store(self, result: ConversationResult) -> None:
        from polygon_voice.store import StoreError

        run_id = self._run_id()
        try:
            self.store.add_conversation(run_id, self.summary.imported, result)
        except StoreError as exc:
            raise RecordError("", str(exc)) from None
        self.summary.imported += 1

    def _run_id(self) -> str:
        if self.summary.run_id is not None:
            return self.summary.run_id
        from polygon_voice.store import RunRecord, new_run_id

        run = RunRecord(
            id=new_run_id(),
            suite=self.options.name or DEFAULT_NAME,
            suite_path=", ".join(self.options.paths),
            suite_hash=_hash(self.options.paths),
            agent=_agent_column(self.options.agent_label),
            seed=0,
            started_at=datetime.now(UTC),
            config=self._config(),
        )
        self.store.create_run(run)
        self.summary.run_id = run.id
        return run.id

    def _config(self) -> dict[str, Any]:
        return {
            "kind": RUN_KIND,
            "source_format": self.options.format_name,
            "files": list(self.options.paths),
            "agent_label": self.options.agent_label,
        }

    def _finish(self) -> None:
        if self.summary.run_id is None:
            return
        formats = self.summary.source_formats()
        updates = {
            "source_format": formats[0] if len(formats) == 1 else formats,
            "files": list(self.files),
            "imported": self.summary.imported,
            "skipped": len(self.summary.skipped),
            "failed": len(self.summary.failed),
        }
        self.store.finish_run(self.summary.run_id, "finished", datetime.now(UTC), updates)

    def _fail(self, source: Source, error: RecordError) -> None:
        self.summary.failed.append(Failure(str(source), error.where, error.message))


def import_calls(
    store: Store, options: ImportOptions, progress: Progress | None = None
) -> ImportSummary:
    """Import every record of `options.paths` into a new run of `store`.

    Raises UnknownFormat for a `--format` that names no format; every record-level problem is
    a Failure in the summary instead.
    """
    return _Importer(store, options, progress).run()


def is_imported(config: dict[str, Any]) -> bool:
    """Whether a stored run's config marks it as an import."""
    return config.get("kind") == RUN_KIND


def parse_record(fmt: Format, value: object) -> ImportedCall:
    """`fmt.parse`, with any failure of the parser turned into a RecordError."""
    try:
        return fmt.parse(value)
    except RecordError:
        raise
    except RecursionError:
        raise RecordError("", "the record is nested too deeply") from None
    except Exception as exc:
        raise RecordError(
            "", f"the {fmt.name} parser failed: {type(exc).__name__}: {exc}"
        ) from None


def convert_record(call: ImportedCall) -> ConversationResult:
    """The stored form of a call; a value the model refuses is a RecordError."""
    from pydantic import ValidationError

    from polygon_voice.imports.convert import to_conversation

    try:
        return to_conversation(call)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid"}
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise RecordError(where, str(first.get("msg", "invalid"))) from None


def _agent_column(agent_label: str | None) -> str:
    """What `polygon runs` shows as the agent: that the run is an import, and whose calls."""
    return f"{RUN_KIND} ({agent_label})" if agent_label else RUN_KIND


def _with_part(source: Source, label: str) -> Source:
    return Source(source.file, source.line, source.index, label)


def _hash(paths: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(paths).encode("utf-8", "surrogatepass")).hexdigest()
