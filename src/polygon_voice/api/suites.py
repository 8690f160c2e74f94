"""A suite to run: from a file, by a built-in name, or built in code; and a scenario filter."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polygon_voice.api.errors import InputError
from polygon_voice.suites import BUILTIN_SUITES, builtin_suite_path

if TYPE_CHECKING:
    from pydantic import ValidationError

    from polygon_voice.model import Scenario, Suite
    from polygon_voice.scenario import LoadedSuite

# What a run records as the path of a suite built in code: there is no file to read again.
IN_CODE = "<built in code>"


def builtin_suites() -> list[str]:
    """The names of the suites that ship with Polygon (`polygon run three-layer`)."""
    return list(BUILTIN_SUITES)


def load_suite(source: str | Path | Suite | LoadedSuite) -> LoadedSuite:
    """The suite `source` names: a YAML/JSON file, a built-in suite's name, or a `Suite`
    (or an already loaded suite) made in code. InputError names the file, line and field."""
    from polygon_voice.model import Suite
    from polygon_voice.scenario import LoadedSuite, SuiteError
    from polygon_voice.scenario import load_suite as load_file

    if isinstance(source, LoadedSuite):
        return source
    if isinstance(source, Suite):
        return suite_in_code(source)
    path = Path(source)
    builtin = builtin_suite_path(str(source)) if not path.exists() else None
    try:
        return load_file(builtin or path)
    except SuiteError as exc:
        if builtin is None and not path.exists() and path.suffix == "":
            raise InputError(f"{exc} (built-in suites: {', '.join(builtin_suites())})") from None
        raise InputError(str(exc)) from None


def suite_in_code(suite: Suite, base_dir: Path | None = None) -> LoadedSuite:
    """A `Suite` made in code as a loaded suite: its version is the hash of its content,
    and agents named `file.py:attr` resolve against `base_dir` (default: the current folder)."""
    from polygon_voice.scenario import LoadedSuite
    from polygon_voice.seeding import content_hash

    folder = (base_dir or Path.cwd()).resolve()
    digest = content_hash(suite.model_dump_json().encode())
    return LoadedSuite(suite=suite, path=Path(IN_CODE), hash=digest, base_dir=folder)


def select_scenarios(loaded: LoadedSuite, patterns: Sequence[str]) -> LoadedSuite:
    """The suite with only the scenarios whose id matches one of the glob `patterns`
    (`*`, `?`, `[...]`, as in a shell); all of them when none is given. InputError when none
    matches, naming the ids there are."""
    if not patterns:
        return loaded
    kept = [
        s for s in loaded.suite.scenarios if any(fnmatch.fnmatchcase(s.id, p) for p in patterns)
    ]
    if not kept:
        ids = ", ".join(s.id for s in loaded.suite.scenarios)
        raise InputError(
            f"no scenario of {loaded.suite.name} matches {', '.join(patterns)}; "
            f"its scenarios: {ids}"
        )
    # A copy, not a revalidation: the whole suite was checked when it was loaded.
    suite = loaded.suite.model_copy(update={"scenarios": kept})
    return type(loaded)(suite=suite, path=loaded.path, hash=loaded.hash, base_dir=loaded.base_dir)


def build_suite(
    scenarios: Sequence[Scenario | Mapping[str, Any]],
    base: str | Path | Suite | LoadedSuite | None = None,
    *,
    name: str | None = None,
) -> Suite:
    """A suite of `scenarios` — mappings written as in a suite file, or `Scenario` objects —
    with the tools, backend, settings, language and agent of `base` (a suite file, a
    built-in suite's name or a `Suite`; None: a suite with no tools). Its name is `name`, else
    the base's, else `built-in-code`. InputError names the scenario and field that is wrong."""
    from pydantic import ValidationError

    from polygon_voice.model import Scenario, Suite

    if isinstance(scenarios, (str, bytes, Mapping)) or not scenarios:
        raise InputError("build_suite takes a non-empty list of scenarios")
    items = [s.model_dump(exclude_unset=True) if isinstance(s, Scenario) else s for s in scenarios]
    data: dict[str, Any] = {}
    if base is not None:
        data = load_suite(base).suite.model_dump(exclude={"scenarios"}, exclude_unset=True)
    data["name"] = name or data.get("name") or "built-in-code"
    data["scenarios"] = items
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        raise InputError(_validation_message(exc, items)) from None


def _validation_message(exc: ValidationError, items: Sequence[object]) -> str:
    """The first problems of a suite built in code, each with its scenario's id."""
    lines = []
    for error in exc.errors()[:5]:
        loc = list(error["loc"])
        if len(loc) > 1 and loc[0] == "scenarios" and isinstance(loc[1], int):
            item = items[loc[1]] if loc[1] < len(items) else None
            ident = item.get("id") if isinstance(item, Mapping) else None
            loc[1] = f"{loc[1]} ({ident})" if isinstance(ident, str) else loc[1]
        where = ".".join(str(part) for part in loc) or "suite"
        lines.append(f"{where}: {error['msg']}")
    return "the suite built in code is not valid: " + "; ".join(lines)
