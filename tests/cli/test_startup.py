"""Start-up: what `polygon` imports before it does anything (structure, not timing).

Each command runs as a user runs it, in a fresh Python process; the process writes the
modules it imported when it exits, and the tests check that the cheap commands never
load the heavy layers (SQLAlchemy, Alembic, pydantic models, the other commands).
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

import polygon_voice
from polygon_voice.cli.app import COMMANDS, app, load_command
from polygon_voice.cli.schema import SCHEMA_FILE, live_schema_text

# Runs the `polygon` command (the arguments after -c) and records sys.modules at exit.
DRIVER = """
import atexit, json, os, sys
atexit.register(lambda: open(os.environ["POLYGON_TEST_MODULES"], "w").write(
    json.dumps(sorted(sys.modules))))
sys.argv[0] = "polygon"
from polygon_voice.cli import main
main()
"""
COMMAND_MODULES = sorted({entry.module for entry in COMMANDS.values()})
HEAVY = ("sqlalchemy", "alembic", "pydantic", "polygon_voice.model")
# Packages whose `__init__` re-exports lazily.
LAZY_PACKAGES = (
    "store",
    "scenario",
    "model",
    "checks",
    "judge",
    "compare",
    "probes",
    "report",
    "runner",
    "llm",
    "tools",
    "caller",
    "noise",
    "lint",
)


def run_polygon(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    out = tmp_path / "modules.json"
    env = {**os.environ, "POLYGON_TEST_MODULES": str(out), "COLUMNS": "120"}
    env.pop("POLYGON_DB", None)
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, set(json.loads(out.read_text()))


def loaded(modules: set[str], prefix: str) -> list[str]:
    return sorted(m for m in modules if m == prefix or m.startswith(prefix + "."))


def test_help_lists_every_command_without_importing_any(tmp_path: Path) -> None:
    done, modules = run_polygon(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    for name, entry in COMMANDS.items():
        assert name in done.stdout
        assert entry.help.split()[0] in done.stdout
    for heavy in (*HEAVY, *COMMAND_MODULES):
        assert not loaded(modules, heavy), f"`polygon --help` imported {loaded(modules, heavy)}"


def test_version_prints_the_package_version_cheaply(tmp_path: Path) -> None:
    done, modules = run_polygon(tmp_path, "--version")
    assert (done.returncode, done.stdout) == (0, f"polygon-voice {polygon_voice.__version__}\n")
    for heavy in (*HEAVY, *COMMAND_MODULES):
        assert not loaded(modules, heavy), f"`polygon --version` imported {loaded(modules, heavy)}"


def test_schema_prints_the_live_schema_without_building_the_models(tmp_path: Path) -> None:
    done, modules = run_polygon(tmp_path, "schema")
    assert done.returncode == 0, done.stderr
    assert done.stdout == live_schema_text()
    # pydantic itself may load (Typer converts option values with it); the models must not.
    for heavy in ("sqlalchemy", "alembic", "polygon_voice.model", "polygon_voice.scenario"):
        assert not loaded(modules, heavy), f"`polygon schema` imported {loaded(modules, heavy)}"


def test_the_shipped_schema_file_equals_the_models_schema() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == live_schema_text(), (
        "the suite models changed: regenerate the shipped schema with "
        "`python -m polygon_voice.cli.schema`"
    )


def test_runs_on_a_current_database_imports_no_alembic(tmp_path: Path) -> None:
    db = str(tmp_path / "results.db")
    first, first_modules = run_polygon(tmp_path, "runs", "--db", db)
    assert first.returncode == 0, first.stderr
    # A new SQLite database gets the shipped head schema (store/new_schema.py), no Alembic.
    assert not loaded(first_modules, "alembic")
    again, modules = run_polygon(tmp_path, "runs", "--db", db)
    assert again.returncode == 0, again.stderr
    assert not loaded(modules, "alembic")
    # Only the reading commands' module is imported, not the run pipeline's.
    imported = [m for m in COMMAND_MODULES if m in modules]
    assert imported == [COMMANDS["runs"].module]


@pytest.mark.parametrize("as_json", [False, True])
def test_runs_on_a_current_sqlite_database_imports_no_sqlalchemy(
    tmp_path: Path, as_json: bool
) -> None:
    db = tmp_path / "results.db"
    extra = ("--json",) if as_json else ()
    # A new database is created and migrated by the Store, with SQLAlchemy.
    first, first_modules = run_polygon(tmp_path, "runs", *extra, "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert loaded(first_modules, "sqlalchemy")
    again, modules = run_polygon(tmp_path, "runs", *extra, "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    for heavy in ("sqlalchemy", "alembic", "polygon_voice.model", "polygon_voice.store.store"):
        assert not loaded(modules, heavy), f"`polygon runs` imported {loaded(modules, heavy)}"
    # Nor the run and conversation views, which build the conversation models.
    assert "polygon_voice.report.terminal" not in modules
    assert "polygon_voice.report.files" not in modules


def test_lint_opens_no_database(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.md"
    prompt.write_text("Always greet the caller. Never read out a card number.\n")
    done, modules = run_polygon(tmp_path, "lint", str(prompt), "--max-tier", "1")
    assert done.returncode == 0, done.stderr
    assert not loaded(modules, "sqlalchemy")
    assert not (tmp_path / ".polygon").exists()


@pytest.mark.parametrize(("typed", "meant"), [("gat", "gate"), ("RUN", "run"), ("shwo", "show")])
def test_a_misspelt_command_gets_a_suggestion(tmp_path: Path, typed: str, meant: str) -> None:
    done, modules = run_polygon(tmp_path, typed)
    assert done.returncode == 2
    assert f"No such command '{typed}'" in done.stderr
    assert f"Did you mean '{meant}'" in done.stderr
    assert not [m for m in COMMAND_MODULES if m in modules]  # suggesting loads no command


def test_a_command_group_lists_its_own_commands(tmp_path: Path) -> None:
    done, modules = run_polygon(tmp_path, "probes", "--help")
    assert done.returncode == 0, done.stderr
    for sub in ("list", "trend", "promote"):
        assert sub in done.stdout
    assert COMMANDS["probes"].module in modules
    assert COMMANDS["run"].module not in modules


def _first_paragraph(command: typer.main.TyperCommand | typer.main.TyperGroup) -> str:
    text = inspect.cleandoc(command.short_help or command.help or "")
    return " ".join(text.split("\n\n")[0].split())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_table_says_what_the_command_says(name: str) -> None:
    """The top-level help comes from the table; it must be the command's own first line."""
    command = load_command(name)
    assert command.name == name
    assert COMMANDS[name].help == _first_paragraph(command), (
        f"update COMMANDS[{name!r}] in polygon_voice/cli/app.py to the command's help"
    )


def test_every_registered_command_is_in_the_table() -> None:
    for module in COMMAND_MODULES:
        importlib.import_module(module)
    registered = {
        info.name or typer.main.get_command_name(info.callback.__name__)
        for info in app.registered_commands
        if info.callback is not None
    } | {group.name for group in app.registered_groups}
    assert registered == set(COMMANDS)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_lazy_exports_are_the_defining_modules_objects(package: str) -> None:
    module = importlib.import_module(f"polygon_voice.{package}")
    for name in module.__all__:
        value = getattr(module, name)
        home = importlib.import_module(getattr(value, "__module__", "") or module.__name__)
        # Constants have no __module__; functions and classes must be the very same object.
        if hasattr(value, "__module__") and hasattr(home, name):
            assert getattr(home, name) is value
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = module.no_such_name


def test_importing_the_packages_loads_neither_sqlalchemy_nor_pydantic() -> None:
    names = ", ".join(f"polygon_voice.{p}" for p in LAZY_PACKAGES)
    code = f"import json, sys; import {names}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    modules = set(json.loads(done.stdout))
    assert not loaded(modules, "sqlalchemy")
    assert not loaded(modules, "pydantic")
    # Nothing but the packages themselves: no module of any stage is loaded yet.
    for package in LAZY_PACKAGES:
        assert loaded(modules, f"polygon_voice.{package}") == [f"polygon_voice.{package}"]


def test_a_name_that_is_also_its_modules_name_stays_the_exported_object() -> None:
    # `distort` is both noise/distort.py and the function in it; importing the module after
    # the package must not turn the package's `distort` into the module.
    code = (
        "import sys, types; import polygon_voice.noise as noise; "
        "assert 'polygon_voice.noise.distort' not in sys.modules; "
        "import polygon_voice.noise.distort; import polygon_voice.judge.composite; "
        "from polygon_voice.noise import distort, hearing; "
        "from polygon_voice.judge import composite; "
        "print(all(callable(f) and not isinstance(f, types.ModuleType) "
        "for f in (distort, hearing, composite, noise.distort)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_no_export_is_named_after_another_module(package: str) -> None:
    """Only a module's own export may share its name (see polygon_voice._lazy)."""
    import pkgutil

    module = importlib.import_module(f"polygon_voice.{package}")
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    for name in set(module.__all__) & submodules:
        assert getattr(module, name).__module__ == f"{module.__name__}.{name}"
