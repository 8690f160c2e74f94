"""Suites that ship with Polygon, runnable by name (`polygon run three-layer`)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

BUILTIN_SUITES = {"three-layer": "three-layer.yaml", "failure-modes": "failure-modes.yaml"}


def builtin_suite_path(name: str) -> Path | None:
    """The file of a built-in suite, or None when `name` is not one."""
    file = BUILTIN_SUITES.get(name)
    if file is None:
        return None
    return Path(str(resources.files(__package__).joinpath(file)))
