"""The public API, pinned: every public name of `polygon_voice` and of the pytest plugin, with
the signature of each function, the fields of each options object and the attributes of each
result, against the checked-in snapshot `public_api.json`.

An accidental change fails here. A deliberate one is a change of the public API: document it
in docs/api.md (or docs/pytest.md), then write the snapshot again with
`POLYGON_UPDATE_API_SNAPSHOT=1 pytest tests/api/test_public_api.py` and commit it with the change.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import os
from pathlib import Path
from typing import Any

import pytest

import polygon_voice
import polygon_voice.pytest_plugin as plugin

SNAPSHOT = Path(__file__).with_name("public_api.json")
UPDATE_ENV = "POLYGON_UPDATE_API_SNAPSHOT"


def describe(value: Any) -> Any:
    """What a user can rely on of one public object, as plain data."""
    if inspect.isclass(value):
        return describe_class(value)
    if callable(value):
        return {"function": signature(value)}
    if isinstance(value, str):
        return "str"  # __version__: its value changes with every release, its type does not
    return repr(value)  # a type alias such as FailOn


def describe_class(cls: type) -> dict[str, Any]:
    if issubclass(cls, enum.Enum):
        return {"enum": {member.name: member.value for member in cls}}
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict):  # a pydantic model: its fields are its interface
        return {"model_fields": sorted(fields)}
    described: dict[str, Any] = {"bases": [base.__name__ for base in cls.__mro__[1:-1]]}
    if dataclasses.is_dataclass(cls):
        described["fields"] = {
            f.name: dataclass_field(f)
            for f in dataclasses.fields(cls)
            if not f.name.startswith("_")
        }
    else:
        described["init"] = signature(cls.__init__)
    described["members"] = members(cls)
    return described


def dataclass_field(f: dataclasses.Field[Any]) -> str:
    if f.default is not dataclasses.MISSING:
        return f"{f.type} = {f.default!r}"
    if f.default_factory is not dataclasses.MISSING:
        return f"{f.type} = {f.default_factory.__name__}()"
    return str(f.type)


def members(cls: type) -> dict[str, str]:
    """Public methods (with signatures) and properties defined by the class or its bases in
    the package; not what every object or exception has anyway."""
    found: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("polygon_voice"):
            continue
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in {f"{klass.__name__}"}:
                continue
            if isinstance(attr, property):
                found[name] = "property"
            elif isinstance(attr, classmethod | staticmethod):
                found[name] = f"{type(attr).__name__} {signature(attr.__func__)}"
            elif inspect.isfunction(attr):
                found[name] = signature(attr)
    return dict(sorted(found.items()))


def signature(func: Any) -> str:
    return str(inspect.signature(func))


def current() -> dict[str, Any]:
    return {
        "polygon_voice": {
            name: describe(getattr(polygon_voice, name)) for name in polygon_voice.__all__
        },
        "polygon_voice.pytest_plugin": {
            name: describe(getattr(plugin, name)) for name in plugin.__all__
        },
        "pytest_plugin_fixtures": sorted(
            name
            for name, value in vars(plugin).items()
            if getattr(value, "_fixture_function_marker", None) is not None
            or type(value).__name__ == "FixtureFunctionDefinition"
        ),
        "pytest_plugin_hooks": sorted(n for n in vars(plugin) if n.startswith("pytest_")),
        "pytest_plugin_options": plugin_option_names(),
    }


def plugin_option_names() -> list[str]:
    """The command-line options the plugin adds, read through a stand-in for pytest's parser."""
    names: list[str] = []

    class Group:
        def addoption(self, *opts: str, **attrs: Any) -> None:
            names.extend(opts)

    class Parser:
        def getgroup(self, name: str, description: str = "") -> Group:
            return Group()

    plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    return sorted(names)


def test_the_public_api_matches_its_snapshot() -> None:
    now = current()
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOT.write_text(json.dumps(now, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    changed = sorted(
        f"{section}.{name}"
        for section in pinned.keys() | now.keys()
        for name in _names(pinned.get(section)) | _names(now.get(section))
        if _entry(pinned.get(section), name) != _entry(now.get(section), name)
    )
    assert not changed, (
        f"the public API changed: {', '.join(changed)}. If that is meant, document it and run "
        f"{UPDATE_ENV}=1 pytest {Path(__file__).name} to write the snapshot again"
    )


def _names(section: Any) -> set[str]:
    return set(section) if isinstance(section, dict) else {"*"}


def _entry(section: Any, name: str) -> Any:
    if isinstance(section, dict):
        return section.get(name)
    return section


def test_the_snapshot_pins_the_main_entry_points() -> None:
    # The snapshot is no empty shell: the entry points the docs promise are in it, in detail.
    pinned = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["polygon_voice"]
    assert pinned["run_suite"]["function"].startswith("(suite: ")
    assert {"agent", "seed", "scenarios", "write_files"} <= set(pinned["RunOptions"]["fields"])
    assert {"calls", "run_id", "gate_passed", "exit_code"} <= {
        *pinned["RunResult"]["fields"],
        *pinned["RunResult"]["members"],
    }
    assert {"verdict", "axes", "root_cause"} <= set(pinned["CallResult"]["members"])


def test_a_changed_signature_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def run_suite(suite: str, *, agent: str) -> None: ...

    before = current()
    monkeypatch.setattr(polygon_voice, "run_suite", run_suite)
    after = current()
    assert before["polygon_voice"]["run_suite"] != after["polygon_voice"]["run_suite"]
