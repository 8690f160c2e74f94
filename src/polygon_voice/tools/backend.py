"""The versioned in-memory backend that stateful stubs read and write (TOOL-4).

* Records live as ``collection -> key -> {field: value}``; keys are strings. The records given
  to `Backend` are deep-copied and every one starts at version 1.
* Every write operation (one update, create or delete) raises the record's version by one,
  and all the `BackendWrite` entries it logs share that version. A record created again after
  a delete continues from the deleted record's version, so a key's versions never repeat.
* The write log logs every field an operation sets, with its old and new value, even when they
  are equal: a duplicated request that rewrites the same values stays visible in the log.
  An update that sets no field writes nothing and keeps the version. A delete logs one write
  with field ``"*"``, the removed record as ``old`` and ``None`` as ``new``.
* ``seq`` of a write is its 0-based index in `Backend.writes`.
* `Backend.touched` gives the final state of every record that was written and still exists;
  deleted records are left out (their deletion is in the write log).
* Idempotency: the backend remembers the response of each write that reached it with an
  idempotency key (`remember` / `recall`); the key space is shared by all tools of a backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from polygon_voice.model.trace import BackendWrite

Record = dict[str, Any]
WriteOp = Literal["update", "create", "delete"]


def clone(value: Any) -> Any:
    """A deep copy of JSON-like data: dicts and lists copied, scalars shared (fast)."""
    if isinstance(value, dict):
        return {key: clone(item) for key, item in value.items()}
    if isinstance(value, list):
        return [clone(item) for item in value]
    return value


def clone_record(record: Mapping[str, Any]) -> Record:
    """A deep copy of a record."""
    return {field: clone(value) for field, value in record.items()}


class RecordNotFoundError(LookupError):
    """The record to update or delete does not exist."""


class RecordExistsError(LookupError):
    """The record to create exists already."""


@dataclass(frozen=True, slots=True)
class WriteContext:
    """Who writes and when: copied into every `BackendWrite` of one operation."""

    call_id: str
    time: float
    idempotency_key: str | None = None


class Backend:
    """Versioned records with a write log and idempotency keys; the state layer's ground truth."""

    def __init__(
        self, records: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None
    ) -> None:
        self._data: dict[str, dict[str, Record]] = {
            collection: {str(key): clone_record(fields) for key, fields in entries.items()}
            for collection, entries in (records or {}).items()
        }
        # Versions outlive deletes, so they also remember every key a collection ever had.
        self._versions: dict[tuple[str, str], int] = {
            (collection, key): 1 for collection, entries in self._data.items() for key in entries
        }
        self._writes: list[BackendWrite] = []
        self._touched: dict[tuple[str, str], None] = {}
        self._responses: dict[str, object] = {}

    # --- reading ---------------------------------------------------------------------------

    @property
    def collections(self) -> list[str]:
        """The names of all collections, sorted."""
        return sorted(self._data)

    def get(self, collection: str, key: str) -> Record | None:
        """A copy of the record's fields, or None if it does not exist."""
        record = self._data.get(collection, {}).get(key)
        return None if record is None else clone_record(record)

    def version(self, collection: str, key: str) -> int:
        """The record's version: 1 as given, +1 per write; 0 for a record that never existed."""
        return self._versions.get((collection, key), 0)

    def keys(self, collection: str) -> list[str]:
        """The keys of the existing records of a collection, sorted."""
        return sorted(self._data.get(collection, {}))

    @property
    def writes(self) -> list[BackendWrite]:
        """The write log in order (the live list: read it, do not change it)."""
        return self._writes

    def touched(self) -> dict[str, dict[str, Record]]:
        """Final state of every written record that still exists: collection -> key -> fields."""
        final: dict[str, dict[str, Record]] = {}
        for collection, key in self._touched:
            record = self._data.get(collection, {}).get(key)
            if record is not None:
                final.setdefault(collection, {})[key] = clone_record(record)
        return final

    def next_key(self, collection: str) -> str:
        """The next free integer key (as a string) of a collection, counting deleted keys too."""
        numbers = [
            int(key)
            for coll, key in self._versions
            if coll == collection and key.isascii() and key.isdigit()
        ]
        return str(max(numbers, default=0) + 1)

    # --- idempotency -----------------------------------------------------------------------

    def recall(self, idempotency_key: str) -> object | None:
        """The response remembered for an idempotency key, or None if the key is new."""
        return self._responses.get(idempotency_key)

    def remember(self, idempotency_key: str, response: object) -> None:
        """Remember the first response to a write carrying this idempotency key."""
        self._responses.setdefault(idempotency_key, response)

    # --- writing ---------------------------------------------------------------------------

    def update(
        self, collection: str, key: str, fields: Mapping[str, Any], ctx: WriteContext
    ) -> Record:
        """Set fields of an existing record; returns a copy of the record after the write."""
        record = self._data.get(collection, {}).get(key)
        if record is None:
            raise RecordNotFoundError(key)
        if fields:
            version = self._bump(collection, key)
            for field, value in fields.items():
                new = clone(value)
                self._log(collection, key, field, record.get(field), new, version, "update", ctx)
                record[field] = new
        return clone_record(record)

    def create(
        self, collection: str, key: str, fields: Mapping[str, Any], ctx: WriteContext
    ) -> Record:
        """Create a record; returns a copy of it. Raises RecordExistsError if the key is taken."""
        entries = self._data.setdefault(collection, {})
        if key in entries:
            raise RecordExistsError(key)
        version = self._bump(collection, key)
        record: Record = {}
        for field, value in fields.items():
            record[field] = clone(value)
            self._log(collection, key, field, None, record[field], version, "create", ctx)
        entries[key] = record
        return clone_record(record)

    def delete(self, collection: str, key: str, ctx: WriteContext) -> Record:
        """Delete a record; returns the removed fields. Raises RecordNotFoundError if missing."""
        record = self._data.get(collection, {}).pop(key, None)
        if record is None:
            raise RecordNotFoundError(key)
        version = self._bump(collection, key)
        self._log(collection, key, "*", record, None, version, "delete", ctx)
        return record

    def _bump(self, collection: str, key: str) -> int:
        version = self._versions.get((collection, key), 0) + 1
        self._versions[(collection, key)] = version
        self._touched[(collection, key)] = None
        return version

    def _log(
        self,
        collection: str,
        key: str,
        field: str,
        old: Any,
        new: Any,
        version: int,
        op: WriteOp,
        ctx: WriteContext,
    ) -> None:
        self._writes.append(
            BackendWrite(
                seq=len(self._writes),
                collection=collection,
                record=key,
                field=field,
                old=clone(old),
                new=clone(new),
                version=version,
                idempotency_key=ctx.idempotency_key,
                time=ctx.time,
                call_id=ctx.call_id,
                op=op,
            )
        )
