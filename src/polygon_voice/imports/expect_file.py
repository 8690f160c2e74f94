"""`polygon import --expect FILE`: what should have happened in each real call, by call id.

The file (YAML, or JSON by a `.json` suffix) maps a call id to an entry with an optional
`scenario` (the scenario id the call is compared under) and an optional `expect` (an
`expect:` block in the suite's shape, docs/suites.md):

    call-123:
      scenario: cancel_order
      expect:
        outcome: success
        tools:
          called: [{tool: cancel_order, args: {order_id: 5590}}]

It is read with the suite files' reader and errors, so a mistake names the file, the line
and the field, before any record is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from polygon_voice.model import Expect

if TYPE_CHECKING:
    import yaml

# A scenario id given by the user is shown and matched, never parsed: any printable text,
# bounded so that a table column stays a column.
MAX_SCENARIO_CHARS = 200


class ExpectFileError(ValueError):
    """The expect file cannot be used; the message names the file, line and field."""


class ExpectEntry(BaseModel):
    """What the expect file says of one call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_SCENARIO_CHARS,
        description="the scenario id the call is compared under (default: the call id)",
    )
    expect: Expect | None = Field(default=None, description="what must have happened")


@dataclass(frozen=True)
class ExpectFile:
    """The entries of an expect file, by call id, and which of them an import used."""

    path: str
    entries: Mapping[str, ExpectEntry]

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, call_id: str) -> ExpectEntry | None:
        return self.entries.get(call_id)

    def unused(self, seen: Iterable[str]) -> list[str]:
        """The call ids of the file that no imported call has, in the file's order."""
        have = set(seen)
        return [call_id for call_id in self.entries if call_id not in have]


def load_expect_file(path: Path) -> ExpectFile:
    """The entries of `path`; ExpectFileError naming the file, line and field when it is bad."""
    from polygon_voice.scenario.data_errors import located
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.parsing import read_data

    file = str(path)
    try:
        data, root = read_data(path, file)
    except SuiteError as exc:
        raise ExpectFileError(str(exc)) from None
    if data is None:
        return ExpectFile(file, {})
    if not isinstance(data, dict):
        raise ExpectFileError(
            located(file, root, (), "a mapping of call id -> {scenario, expect} is needed")
        )
    entries: dict[str, ExpectEntry] = {}
    for key, value in data.items():
        call_id = str(key)
        entries[call_id] = _entry(file, root, call_id, value)
    return ExpectFile(file, entries)


def _entry(file: str, root: yaml.Node, call_id: str, value: object) -> ExpectEntry:
    from polygon_voice.scenario.data_errors import located
    from polygon_voice.scenario.errors import SuiteError
    from polygon_voice.scenario.locate import mapping_entry
    from polygon_voice.scenario.validation import validation_error

    if not isinstance(value, dict):
        message = "an entry is a mapping with 'scenario' and/or 'expect'"
        raise ExpectFileError(located(file, root, (call_id,), message))
    try:
        return ExpectEntry.model_validate(value)
    except ValidationError as exc:
        found = mapping_entry(root, call_id)
        node = found[1] if found is not None else root
        error = validation_error(exc, node, ExpectEntry, file)
        field = f"{call_id}.{error.field}" if error.field else call_id
        raise ExpectFileError(
            str(
                SuiteError(
                    file,
                    error.message,
                    line=error.line,
                    column=error.column,
                    field=field,
                    more=error.more,
                )
            )
        ) from None
