"""A suite's tools compiled once: argument checkers, stubs, and a check of their config.

`ToolSet` rejects at construction:
* a ``parameters`` schema that is not valid JSON Schema, or names an unknown draft;
* a stateful stub whose ``fields`` lists its own key argument;
* a wrong_record fault without ``record`` on a stub that is not stateful (only a stateful stub
  has other records to return).

`ToolSet.open` also rejects a backend that lacks the collection of a stateful stub (declare it,
empty if need be, so a typo in a collection name cannot pass silently).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from polygon_voice.model.tools import FaultKind, StatefulStub, ToolSpec
from polygon_voice.tools.backend import Backend
from polygon_voice.tools.errors import ToolConfigError
from polygon_voice.tools.runtime import CompiledTool, ToolRuntime
from polygon_voice.tools.schema import ArgumentChecker
from polygon_voice.tools.stubs import compile_stub


class ToolSet:
    """The tools of a suite, compiled once and opened per conversation."""

    def __init__(self, tools: Mapping[str, ToolSpec]) -> None:
        self._tools = {name: _compile(name, spec) for name, spec in tools.items()}

    @property
    def names(self) -> list[str]:
        """The tool names, sorted."""
        return sorted(self._tools)

    def get(self, name: str) -> CompiledTool | None:
        """The compiled tool of that name, or None."""
        return self._tools.get(name)

    def open(self, backend: Backend, *, seed_parts: Sequence[object]) -> ToolRuntime:
        """A runtime for one conversation over `backend`; seed_parts seed latency and faults."""
        self.check_backend(backend)
        return ToolRuntime(self._tools, backend, tuple(seed_parts))

    def check_backend(self, backend: Backend) -> None:
        """Raise ToolConfigError if a stateful stub's collection is missing from the backend."""
        known = set(backend.collections)
        for tool in self._tools.values():
            stateful = tool.stateful
            if stateful is not None and stateful.spec.collection not in known:
                collection = stateful.spec.collection
                raise ToolConfigError(
                    f"tool {tool.name!r} uses backend collection {collection!r}, which the "
                    f"backend does not have (it has: {', '.join(sorted(known)) or 'none'}); "
                    f"declare it in the suite's backend, e.g. '{collection}: {{}}'"
                )


def _compile(name: str, spec: ToolSpec) -> CompiledTool:
    stub = spec.stub
    if isinstance(stub, StatefulStub) and stub.fields is not None and stub.key in stub.fields:
        raise ToolConfigError(
            f"tool {name!r}: 'fields' must not list the key argument {stub.key!r}"
        )
    for fault in spec.faults:
        if (
            fault.kind is FaultKind.WRONG_RECORD
            and not isinstance(stub, StatefulStub)
            and "record" not in fault.model_fields_set
        ):
            raise ToolConfigError(
                f"tool {name!r}: a wrong_record fault on a {stub.kind} stub needs 'record' "
                "(the answer to return instead); only stateful stubs pick another record"
            )
    return CompiledTool(name, spec, ArgumentChecker(name, spec.parameters), compile_stub(stub))
