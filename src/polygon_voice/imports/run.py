"""Importing calls into a stored run of kind `imported`.

Each record is parsed, converted and judged on its own, and the calls are stored in groups
of up to BATCH_CALLS (or what arrived within BATCH_SECONDS) in one transaction: one commit
for many small calls is most of what makes an import fast. A group the store refuses (a
call given twice, say) is stored again call by call, so a bad record fails alone and a
failure never leaves half a call behind; a bad record is counted and reported, and the
import goes on. What was read is stored even when the import is interrupted.

The run is created when the first call is stored (an import that stores nothing leaves no
empty run) and its config says `{"kind": "imported", "source_format": ...,
"files": [...]}`, which is how `polygon runs` and the reports tell an imported run apart.

With a `CallJudging` (imports/judging.py) each call is judged as the runner judges a
simulated one, stages expect, conversation_checks, judge and probes: stored with the call
in the same transaction when nothing waits for a model; when a model judges, the call and
its expectation check are committed first and the judgement after, so a judge model that
never answers never loses a call (the failure is counted and said, as `polygon run` does).

Records stream, one at a time, except the parts of a call spread over several records (the
pages of a Twilio transcript in separate files or lines): a format that says so with
`group_key(record)` has those records held back (at most MAX_HELD_RECORDS) and joined with
its `merge(records)` at the end of the input, then parsed once as one record.
"""

from __future__ import annotations

import functools
import gc
import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeGuard

from polygon_voice.imports.base import Format, ImportedCall, RecordError
from polygon_voice.imports.detect import AUTO, Detector
from polygon_voice.imports.reader import Record, Source, Unreadable, iter_records

if TYPE_CHECKING:
    from polygon_voice.imports.expect_file import ExpectEntry, ExpectFile
    from polygon_voice.imports.judging import CallJudging
    from polygon_voice.model import ConversationResult, Expect, ExpectResult
    from polygon_voice.model.judgement import Judgement
    from polygon_voice.store import Store
    from polygon_voice.store.store import StageResult

RUN_KIND = "imported"
DEFAULT_NAME = "import"
VERDICTS = ("pass", "warn", "fail", "unscored")
EXPECTATIONS = ("met", "not_met", "not_exercised")
# Parts of calls (pages of a paged transcript) held back until the end of the input to be
# joined: what the import keeps in memory beyond one record at a time.
MAX_HELD_RECORDS = 1_000
# Calls stored in one transaction, and the longest a read call waits for its group's commit
# (a slow stream, such as webhooks piped in, still lands within about this time).
BATCH_CALLS = 64
BATCH_SECONDS = 0.25
# Allocations between two collections of the youngest generation during an import (Python's
# default is 700): about one call's worth, so that most of a call's objects are gone by then.
YOUNG_COLLECTION = 10_000


@dataclass(frozen=True)
class ImportOptions:
    paths: tuple[str, ...]
    format_name: str = AUTO
    name: str | None = None  # the run's suite name; default "import"
    agent_label: str | None = None  # the speaker label of the agent (csv, lines, ...)
    expect_file: ExpectFile | None = None  # `--expect FILE`: call id -> scenario and expect
    scenario_key: str | None = None  # `--scenario-key`: a dotted path into the kept metadata


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
    judged: int = 0  # calls with a stored judgement
    verdicts: Counter[str] = field(default_factory=Counter)
    with_expectation: int = 0  # calls checked against an `expect:` block (stage expect)
    expectations: Counter[str] = field(default_factory=Counter)  # met / not_met / not_exercised
    expect_overridden: int = 0  # calls whose own expectation the expect file replaced
    expect_unused: list[str] = field(default_factory=list)  # expect file ids never imported
    scenario_key_missing: int = 0  # calls without the --scenario-key field: scenario = call id
    judge_failures: list[Failure] = field(default_factory=list)  # stored, judging failed

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
            "judged": self.judged,
            "verdicts": {v: self.verdicts.get(v, 0) for v in VERDICTS},
            "with_expectation": self.with_expectation,
            "expectations": {e: self.expectations.get(e, 0) for e in EXPECTATIONS},
            "expect_overridden": self.expect_overridden,
            "expect_unused": self.expect_unused,
            "scenario_key_missing": self.scenario_key_missing,
            "judge_failures": [f.as_dict() for f in self.judge_failures],
        }


Progress = Callable[[ImportSummary], None]


@dataclass
class _Pending:
    """A call judged and waiting for its group's commit."""

    source: Source
    result: ConversationResult
    stages: list[StageResult]


class _Importer:
    def __init__(
        self,
        store: Store,
        options: ImportOptions,
        progress: Progress | None,
        judging: CallJudging | None,
    ) -> None:
        self.store = store
        self.options = options
        self.progress = progress
        self.judging = judging
        self.detector = Detector.for_name(options.format_name, options.agent_label)
        self.summary = ImportSummary(ambiguous=self.detector.ambiguous)
        # The ids of the expect file that an imported call had (bounded by the file): the
        # import keeps no set of every call id it saw, so memory stays flat in the records.
        self.expect_matched: set[str] = set()
        self.files: dict[str, None] = {}
        # Parts of one call spread over records (a Twilio transcript's pages), held back
        # until the end of the input: (format, key) -> the format and the parts, in order.
        self.held: dict[tuple[str, str], tuple[Format, list[tuple[Source, object]]]] = {}
        self.held_count = 0
        self.pending: list[_Pending] = []
        self.pending_since = 0.0

    def run(self) -> ImportSummary:
        frozen = _freeze_heap()
        try:
            for item in iter_records(self.options.paths, self.detector.is_record):
                self.summary.records += 1
                self.files.setdefault(item.source.file)
                if isinstance(item, Unreadable):
                    self._fail(item.source, item.error)
                else:
                    self.summary.files_read.add(item.source.file)
                    for source, value, fmt in self._split(item):
                        self._take(source, value, fmt)
                if self.progress is not None:
                    self.progress(self.summary)
            self._join_held()
            self._flush()
            if self.progress is not None and self.held_count:
                self.progress(self.summary)
        finally:
            try:
                self._flush()  # the calls already read are kept, even when interrupted
                if self.judging is not None:
                    self.judging.close()
            finally:
                if frozen is not None:
                    gc.unfreeze()
                    gc.set_threshold(*frozen)
        if self.options.expect_file is not None:
            self.summary.expect_unused = self.options.expect_file.unused(self.expect_matched)
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

    def _take(self, source: Source, value: object, fmt: Format | None) -> None:
        """Import the record now, or hold it back when it is only a part of its call."""
        key = _group_key(fmt, value)
        if fmt is None or key is None:
            self._one(source, value, fmt)
            return
        if self.held_count >= MAX_HELD_RECORDS:
            self._fail(
                source,
                RecordError(
                    "",
                    f"more than {MAX_HELD_RECORDS} records are parts of calls (pages of "
                    f"{key} and others) held back to be joined; import fewer files at a "
                    "time, or join each call's parts into one record",
                ),
            )
            return
        _, parts = self.held.setdefault((fmt.name, key), (fmt, []))
        parts.append((source, value))
        self.held_count += 1

    def _join_held(self) -> None:
        """Each held-back group parsed once, as one record, where its first part was."""
        groups, self.held = self.held, {}
        for (_, key), (fmt, parts) in groups.items():
            first = parts[0][0]
            label = f"{key}: {len(parts)} part{'s' if len(parts) != 1 else ''}"
            if len(parts) > 1:
                label += ", also " + ", ".join(str(source) for source, _ in parts[1:4])
                label += ", ..." if len(parts) > 4 else ""
            source = _with_part(first, label)
            merge: Callable[[list[object]], object] = getattr(fmt, "merge")  # noqa: B009
            try:
                merged = merge([value for _, value in parts])
            except Exception as exc:  # a parser bug must not stop the import
                self._fail(source, RecordError("", f"joining the parts failed: {exc}"))
                continue
            self._one(source, merged, fmt)

    def _one(self, source: Source, value: object, fmt: Format | None) -> None:
        assert fmt is not None
        try:
            call = parse_record(fmt, value)
            counts = self.summary.formats.setdefault(source.file, Counter())
            counts[fmt.name] += 1
            if not call.turns and not call.tool_calls:
                reason = call.metadata.get("skip_reason") or "no turns, nothing to import"
                self.summary.skipped.append(
                    Failure(str(source), "", f"call {call.call_id}: {reason}")
                )
                return
            if not call.call_id:
                raise RecordError("call_id", "the call has no id")
            entry = self._file_entry(call)
            expect = self._expect(call, entry)
            result = convert_record(call, self._scenario_id(call, entry))
            _note_source(result, source)
            self._store(result, expect, source)
        except RecordError as exc:
            self._fail(source, exc)

    def _file_entry(self, call: ImportedCall) -> ExpectEntry | None:
        expect_file = self.options.expect_file
        entry = expect_file.get(call.call_id) if expect_file is not None else None
        if entry is not None:
            self.expect_matched.add(call.call_id)
        return entry

    def _expect(self, call: ImportedCall, entry: ExpectEntry | None) -> Expect | None:
        """The call's expectation: the expect file's entry, else the record's own; the one
        used is what the `import` trace entry keeps, so a rejudge reads the same."""
        if entry is not None and entry.expect is not None:
            if call.expect is not None:
                self.summary.expect_overridden += 1
            call.expect = entry.expect.model_dump(mode="json", exclude_defaults=True)
            return entry.expect
        if call.expect is None:
            return None
        from polygon_voice.imports.judging import ExpectError, parse_expect

        try:
            return parse_expect(call.expect)
        except ExpectError as exc:
            raise RecordError(exc.where, f"call {call.call_id}: {exc.message}") from None

    def _scenario_id(self, call: ImportedCall, entry: ExpectEntry | None) -> str | None:
        """The expect file's scenario, else the --scenario-key value, else None (the id)."""
        from polygon_voice.imports.judging import scenario_key

        if entry is not None and entry.scenario is not None:
            return entry.scenario
        key = self.options.scenario_key
        if key is None:
            return None
        value = scenario_key(call.metadata, key)
        if value is None:
            self.summary.scenario_key_missing += 1
        return value

    def _store(self, result: ConversationResult, expect: Expect | None, source: Source) -> None:
        run_id = self._run_id()
        judging = self.judging
        if judging is None:
            self._queue(_Pending(source, result, []))
            return
        setup = judging.setup(result, expect)
        checked = self._guarded(source, result, "checks", lambda: judging.checked(result, setup))
        expect_result = next((data for _, _, data in checked if _is_expect(data)), None)

        def judged() -> list[StageResult]:
            return judging.judged(result, setup, expect_result)

        if not judging.asks_a_model:  # judged in microseconds: stored with the call
            self._queue(
                _Pending(
                    source, result, [*checked, *self._guarded(source, result, "judge", judged)]
                )
            )
            return
        from polygon_voice.store import StoreError

        # Stored before judging: a judge model may take minutes, or never answer.
        self._flush()
        self._commit(run_id, result, checked)
        self._count(checked, source, result)
        later = self._guarded(source, result, "judge", judged)
        try:
            self.store.add_stage_results(run_id, result.id, later)
        except StoreError as exc:
            self._judge_failed(source, result, f"its judgement was not stored: {exc}")
            return
        self._count(later, source, result)

    def _queue(self, call: _Pending) -> None:
        """Hold the call for its group's commit; commit the group when it is full or old."""
        now = time.monotonic()
        if not self.pending:
            self.pending_since = now
        self.pending.append(call)
        if len(self.pending) >= BATCH_CALLS or now - self.pending_since >= BATCH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        """The held calls in one transaction; a refused group again call by call."""
        from polygon_voice.store import StoreError

        group, self.pending = self.pending, []
        if not group:
            return
        run_id = self._run_id()
        first = self.summary.imported
        try:
            self.store.add_conversations_with_results(
                run_id, [(first + n, call.result, call.stages) for n, call in enumerate(group)]
            )
        except StoreError:
            for call in group:
                self._commit_alone(run_id, call)
            return
        self.summary.imported += len(group)
        for call in group:
            self._count(call.stages, call.source, call.result)

    def _commit_alone(self, run_id: str, call: _Pending) -> None:
        try:
            self._commit(run_id, call.result, call.stages)
        except RecordError as exc:
            self._fail(call.source, exc)
            return
        self._count(call.stages, call.source, call.result)

    def _commit(self, run_id: str, result: ConversationResult, stages: list[StageResult]) -> None:
        """The call and its stages in one transaction; a refusal fails the record."""
        from polygon_voice.store import StoreError
        from polygon_voice.store.errors import ConversationExists

        try:
            self.store.add_conversation_with_results(run_id, self.summary.imported, result, stages)
        except ConversationExists:
            # The store's unique key finds a call given twice; the first copy says where from.
            first = _stored_source(self.store, run_id, result.id)
            raise RecordError(
                "call_id", f"call {result.id!r} is imported twice: first from {first}"
            ) from None
        except StoreError as exc:
            raise RecordError("", str(exc)) from None
        self.summary.imported += 1

    def _guarded(
        self,
        source: Source,
        result: ConversationResult,
        what: str,
        work: Callable[[], list[StageResult]],
    ) -> list[StageResult]:
        """`work()`, or [] with the failure counted: a judge bug must not lose the call."""
        try:
            return work()
        except Exception as exc:
            self._judge_failed(source, result, f"{what} failed: {type(exc).__name__}: {exc}")
            return []

    def _judge_failed(self, source: Source, result: ConversationResult, message: str) -> None:
        self.summary.judge_failures.append(
            Failure(str(source), "judge", f"call {result.id} stored, not judged: {message}")
        )

    def _count(self, stages: list[StageResult], source: Source, result: ConversationResult) -> None:
        expect_result, judgement, model_failed, answers_unusable = _stage_readers()
        for _, _, data in stages:
            if isinstance(data, expect_result):
                self.summary.with_expectation += 1
                self.summary.expectations[_expectation(data)] += 1
            elif isinstance(data, judgement):
                self.summary.judged += 1
                self.summary.verdicts[data.verdict] += 1
                failed = model_failed(data) or answers_unusable(data)
                if failed is not None:
                    self._judge_failed(source, result, f"the judge model failed: {failed}")

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
        config: dict[str, Any] = {
            "kind": RUN_KIND,
            "source_format": self.options.format_name,
            "files": list(self.options.paths),
            "agent_label": self.options.agent_label,
            "scenario_key": self.options.scenario_key,
            "expect_file": self.options.expect_file.path if self.options.expect_file else None,
        }
        judging = self.judging
        if judging is not None:
            config["forbidden_phrases"] = list(judging.forbidden_phrases)
            if judging.judging is not None:
                config["judge"] = judging.judging.judge.name
                config["rubric"] = judging.judging.rubric.version
                config["judge_repeats"] = judging.judging.repeats
            config["probes"] = judging.probing is not None
        return config

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
        if self.judging is not None:
            updates["judged"] = self.summary.judged
            updates["judge_failures"] = len(self.summary.judge_failures)
        self.store.finish_run(self.summary.run_id, "finished", datetime.now(UTC), updates)

    def _fail(self, source: Source, error: RecordError) -> None:
        self.summary.failed.append(Failure(str(source), error.where, error.message))


def import_calls(
    store: Store,
    options: ImportOptions,
    progress: Progress | None = None,
    judging: CallJudging | None = None,
) -> ImportSummary:
    """Import every record of `options.paths` into a new run of `store`, each call judged by
    `judging` when given (imports/judging.py; None: stored unjudged).

    Raises UnknownFormat for a `--format` that names no format; every record-level problem is
    a Failure in the summary instead, and every judging problem a `judge_failures` entry.
    """
    return _Importer(store, options, progress, judging).run()


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


def convert_record(call: ImportedCall, scenario_id: str | None = None) -> ConversationResult:
    """The stored form of a call (scenario id: `scenario_id`, else the call id); a value the
    model refuses is a RecordError."""
    from pydantic import ValidationError

    from polygon_voice.imports.convert import to_conversation

    try:
        result = to_conversation(call, scenario_id)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid"}
        where = ".".join(str(part) for part in first.get("loc", ()))
        raise RecordError(where, str(first.get("msg", "invalid"))) from None
    if scenario_id is not None and result.scenario_id != scenario_id:
        # Polygon's own records come back as stored; only the comparison key changes.
        result = result.model_copy(update={"scenario_id": scenario_id})
    return result


def _group_key(fmt: Format | None, value: object) -> str | None:
    """The format's `group_key(record)` when it has one (a record that is a part of a call
    whose other parts may be in other records); None: the record is a whole call."""
    group_key = getattr(fmt, "group_key", None)
    if group_key is None or getattr(fmt, "merge", None) is None:
        return None
    try:
        key = group_key(value)
    except Exception:  # never raises by contract; a bug only means no grouping
        return None
    return key if isinstance(key, str) and key else None


def _is_expect(data: object) -> TypeGuard[ExpectResult]:
    return isinstance(data, _stage_readers()[0])


_Reading = Callable[["Judgement"], str | None]


@functools.cache
def _stage_readers() -> tuple[type[ExpectResult], type[Judgement], _Reading, _Reading]:
    """The stage types the summary counts and the judge failures it reports, imported on
    first use (not when the module is) and then kept: a summary counts every call."""
    from polygon_voice.judge.run import judge_answers_unusable, judge_model_failed
    from polygon_voice.model import ExpectResult
    from polygon_voice.model.judgement import Judgement

    return ExpectResult, Judgement, judge_model_failed, judge_answers_unusable


def _expectation(result: Any) -> str:
    if result.not_exercised is not None:
        return "not_exercised"
    return "met" if result.met else "not_met"


def _agent_column(agent_label: str | None) -> str:
    """What `polygon runs` shows as the agent: that the run is an import, and whose calls."""
    return f"{RUN_KIND} ({agent_label})" if agent_label else RUN_KIND


def _note_source(result: ConversationResult, source: Source) -> None:
    """Keep where the call was read (`calls.jsonl:12`) in its `import` trace entry."""
    from polygon_voice.imports.convert import import_entry

    entry = import_entry(result)
    if entry is not None:
        entry["source"] = str(source)


def _stored_source(store: Store, run_id: str, call_id: str) -> str:
    """Where the stored copy of a call was read; "an earlier record" when it does not say."""
    from polygon_voice.imports.convert import import_entry
    from polygon_voice.store import StoreError

    try:
        entry = import_entry(store.get_conversation(run_id, call_id))
    except StoreError:
        entry = None
    source = entry.get("source") if entry is not None else None
    return source if isinstance(source, str) else "an earlier record of this import"


def _freeze_heap() -> tuple[int, ...] | None:
    """Leave the objects alive before the import (modules, models, schemas: tens of thousands)
    out of the garbage collector's full passes until it ends (`gc.unfreeze`): an import makes
    and drops objects fast enough to start a full pass every few hundred calls, and walking
    that heap each time was about a twentieth of the import's time. The youngest generation
    is collected less often too (YOUNG_COLLECTION): a call's records die by reference count
    once it is stored, and a pass every 700 allocations walked them while they were alive.
    The thresholds to restore when frozen here; None for a process that froze its heap
    itself, or turned the collector off: it is left as it is."""
    if not gc.isenabled() or gc.get_freeze_count():
        return None
    gc.freeze()
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], YOUNG_COLLECTION), *threshold[1:])
    return threshold


def _with_part(source: Source, label: str) -> Source:
    return Source(source.file, source.line, source.index, label)


def _hash(paths: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(paths).encode("utf-8", "surrogatepass")).hexdigest()
