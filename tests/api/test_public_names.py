"""The public API: a curated, pinned list of names, each importable, and a cheap import."""

from __future__ import annotations

import subprocess
import sys

import pytest

import polygon_voice
import polygon_voice.api

PUBLIC = [
    "CallResult",
    "ExitCode",
    "FailOn",
    "InfrastructureError",
    "InputError",
    "PolygonError",
    "ProbeSummary",
    "RejudgeOptions",
    "ReplayOptions",
    "ReplayResult",
    "RequestCounts",
    "RoleFailure",
    "RunInterrupted",
    "RunObserver",
    "RunOptions",
    "RunResult",
    "RunStarted",
    "Scenario",
    "SetupError",
    "Suite",
    "__version__",
    "build_suite",
    "builtin_suites",
    "load_suite",
    "open_store",
    "read_conversation",
    "rejudge_run",
    "replay_run",
    "root_causes",
    "run_suite",
    "run_suite_async",
    "select_scenarios",
]


def test_the_public_names_are_pinned() -> None:
    # A change here is a change of the public API: document it in docs/api.md.
    assert sorted(polygon_voice.__all__) == PUBLIC
    assert sorted(polygon_voice.api.__all__) == [
        n for n in PUBLIC if n not in ("Scenario", "Suite", "__version__")
    ]


def test_every_public_name_resolves_to_one_object() -> None:
    for name in polygon_voice.__all__:
        value = getattr(polygon_voice, name)
        assert value is not None, name
        if name not in ("Scenario", "Suite", "__version__"):
            assert getattr(polygon_voice.api, name) is value, name
    assert "run_suite" in dir(polygon_voice)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="run_suites"):
        polygon_voice.run_suites  # type: ignore[attr-defined]  # noqa: B018


def test_importing_the_package_loads_nothing_heavy() -> None:
    code = (
        "import sys, polygon_voice\n"
        "from polygon_voice import ExitCode, RunOptions\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'pydantic', 'rich', 'typer', 'openai', 'alembic')]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == ""


def test_exit_codes_are_stable() -> None:
    codes = {code.name: int(code) for code in polygon_voice.ExitCode}
    assert codes == {
        "OK": 0,
        "VERDICTS_FAILED": 1,
        "BAD_INPUT": 2,
        "INFRASTRUCTURE": 3,
        "INTERRUPTED": 130,
    }
    assert polygon_voice.InputError("x").exit_code == 2
    assert polygon_voice.SetupError("x").exit_code == 2
    assert polygon_voice.InfrastructureError("x").exit_code == 3
