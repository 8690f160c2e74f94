"""What a stub answers, given the call's arguments (TOOL-1).

* ``fixed``: `returns` (a copy).
* ``template``: `returns` rendered with the arguments (see `polygon_voice.tools.templates`).
* ``rules``: the first rule whose every ``when`` item equals the argument of that name answers
  with its rendered ``returns``; otherwise the rendered ``default``. An absent argument matches
  nothing, and booleans only equal booleans (``true`` is not ``1``).
* ``stateful``: one operation on a `Backend` record; the key comes from the key argument (a
  string, or an integer turned into a string). Answers carry the record's fields plus the key
  under the key argument's name, as a string: ``{**fields, <key arg>: key}``.
  - ``get``: that answer, or ``None`` when the record does not exist.
  - ``update``: sets the arguments other than the key (only those listed in ``fields`` if it is
    given) and answers with the record after the write; a missing record fails with NOT_FOUND.
  - ``create``: creates the record with those arguments; without a key argument the next
    integer key is used. An existing key fails with INVALID_ARGUMENTS ("already exists"),
    which is also what deduplicates a repeated create of the same key.
  - ``delete``: removes the record and answers ``None``; a missing record fails with NOT_FOUND.
  - A missing or non-string, non-integer key argument fails with INVALID_ARGUMENTS
    (``create`` alone may leave it out).
* Idempotency (TOOL-4): a write carrying an idempotency key the backend has already seen writes
  nothing and answers with the first response, failures included. Writes without a key are
  never deduplicated; ``get`` ignores keys.
* A stub runs either for real or as a dry run (``commit=False``): a dry run answers what the
  write would have answered (a remembered idempotent response included) and changes nothing,
  not even the idempotency memory; faults whose write does not land use it.
* A template naming an unknown argument fails with INVALID_ARGUMENTS, naming the placeholder.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from polygon_voice.model.events import ToolErrorKind
from polygon_voice.model.tools import FixedStub, RulesStub, StatefulStub, StubSpec, TemplateStub
from polygon_voice.tools.backend import (
    Backend,
    Record,
    RecordExistsError,
    RecordNotFoundError,
    WriteContext,
    clone,
)
from polygon_voice.tools.templates import UnknownPlaceholderError, render


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a stub answered: a value, or an error kind with a message; `key` for stateful ops."""

    value: Any = None
    error: ToolErrorKind | None = None
    message: str = ""
    key: str | None = None


class Stub(Protocol):
    """A compiled stub: runs one call against the backend (a dry run unless `commit`)."""

    @property
    def writes(self) -> bool:
        """Whether the stub writes to the backend."""
        ...

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """The stub's outcome for these arguments."""
        ...


def _rendered(template: Any, args: Mapping[str, Any]) -> Outcome:
    try:
        return Outcome(render(template, args))
    except UnknownPlaceholderError as exc:
        return Outcome(
            error=ToolErrorKind.INVALID_ARGUMENTS,
            message=f"the answer template uses {{{exc.name}}}, but the call has no argument "
            f"{exc.name!r}",
        )


def _same(expected: Any, actual: Any) -> bool:
    # JSON booleans are not numbers, although Python's True == 1.
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    return bool(expected == actual)


_ABSENT = object()


@dataclass(frozen=True, slots=True)
class FixedAnswer:
    """A `FixedStub` compiled."""

    spec: FixedStub
    writes: bool = False

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """A copy of the fixed answer."""
        return Outcome(clone(self.spec.returns))


@dataclass(frozen=True, slots=True)
class TemplateAnswer:
    """A `TemplateStub` compiled."""

    spec: TemplateStub
    writes: bool = False

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """The template rendered with the arguments."""
        return _rendered(self.spec.returns, args)


@dataclass(frozen=True, slots=True)
class RulesAnswer:
    """A `RulesStub` compiled."""

    spec: RulesStub
    writes: bool = False

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """The first matching rule's answer, else the default, rendered."""
        for rule in self.spec.rules:
            if all(_same(value, args.get(name, _ABSENT)) for name, value in rule.when.items()):
                return _rendered(rule.returns, args)
        return _rendered(self.spec.default, args)


@dataclass(frozen=True, slots=True)
class StatefulAnswer:
    """A `StatefulStub` compiled."""

    spec: StatefulStub

    @property
    def writes(self) -> bool:
        """Whether the operation writes (everything but get)."""
        return self.spec.op != "get"

    def shape(self, key: str, fields: Record) -> Record:
        """A record as stateful stubs answer it: its fields plus the key under the key argument."""
        return {**fields, self.spec.key: key}

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """Run the operation; with an idempotency key seen before, answer the first response."""
        if not self.writes:
            return self._get(args, backend)
        idempotency_key = ctx.idempotency_key
        if idempotency_key is not None:
            first = backend.recall(idempotency_key)
            if isinstance(first, Outcome):
                return first
        outcome = self._write(args, backend, ctx, commit)
        if commit and idempotency_key is not None:
            backend.remember(idempotency_key, outcome)
        return outcome

    def _key(self, args: Mapping[str, Any]) -> str | Outcome:
        value = args.get(self.spec.key)
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        what = "is missing" if value is None else "must be a string or an integer"
        return Outcome(
            error=ToolErrorKind.INVALID_ARGUMENTS, message=f"key argument {self.spec.key!r} {what}"
        )

    def _fields(self, args: Mapping[str, Any]) -> dict[str, Any]:
        if self.spec.fields is None:
            return {name: value for name, value in args.items() if name != self.spec.key}
        return {name: args[name] for name in self.spec.fields if name in args}

    def _not_found(self, key: str) -> Outcome:
        return Outcome(
            error=ToolErrorKind.NOT_FOUND,
            message=f"no record {key!r} in {self.spec.collection!r}",
            key=key,
        )

    def _get(self, args: Mapping[str, Any], backend: Backend) -> Outcome:
        key = self._key(args)
        if isinstance(key, Outcome):
            return key
        record = backend.get(self.spec.collection, key)
        return Outcome(None if record is None else self.shape(key, record), key=key)

    def _write(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        op, collection = self.spec.op, self.spec.collection
        if op == "create" and args.get(self.spec.key) is None:
            key: str | Outcome = backend.next_key(collection)
        else:
            key = self._key(args)
        if isinstance(key, Outcome):
            return key
        fields = self._fields(args)
        if not commit:
            return self._dry_run(key, fields, backend)
        try:
            if op == "update":
                return Outcome(
                    self.shape(key, backend.update(collection, key, fields, ctx)), key=key
                )
            if op == "create":
                return Outcome(
                    self.shape(key, backend.create(collection, key, fields, ctx)), key=key
                )
            backend.delete(collection, key, ctx)
            return Outcome(None, key=key)
        except RecordNotFoundError:
            return self._not_found(key)
        except RecordExistsError:
            return self._exists(key)

    def _exists(self, key: str) -> Outcome:
        return Outcome(
            error=ToolErrorKind.INVALID_ARGUMENTS,
            message=f"record {key!r} already exists in {self.spec.collection!r}",
            key=key,
        )

    def _dry_run(self, key: str, fields: dict[str, Any], backend: Backend) -> Outcome:
        record = backend.get(self.spec.collection, key)
        if self.spec.op == "create":
            if record is not None:
                return self._exists(key)
            return Outcome(self.shape(key, clone(fields)), key=key)
        if record is None:
            return self._not_found(key)
        if self.spec.op == "update":
            return Outcome(self.shape(key, {**record, **clone(fields)}), key=key)
        return Outcome(None, key=key)


def compile_stub(spec: StubSpec) -> Stub:
    """The runnable form of a stub declaration."""
    if isinstance(spec, FixedStub):
        return FixedAnswer(spec)
    if isinstance(spec, TemplateStub):
        return TemplateAnswer(spec)
    if isinstance(spec, RulesStub):
        return RulesAnswer(spec)
    return StatefulAnswer(spec)
