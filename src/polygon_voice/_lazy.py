"""Lazy re-exports for the packages' `__init__` files (PEP 562).

A package names what it exports and where each name lives; a name's module is imported the
first time the name is read, so `import polygon_voice.store` costs nothing until `Store` is
used, and a command pays only for what it touches. Type checkers read the same names from
an `if TYPE_CHECKING:` block of plain imports beside the table.

Some exported names are also the names of the modules that define them (`distort` in
`noise/distort.py`). Importing such a module makes the import system set the package's
attribute to the module; the package then keeps the exported object instead, exactly as
the eager `from .distort import distort` it replaces did.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

# package -> its exported names that are also the names of the modules defining them
_SHADOWED: dict[str, frozenset[str]] = {}


class _Package(types.ModuleType):
    """A package module whose exports win over its same-named submodules."""

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, types.ModuleType)
            and name in _SHADOWED.get(self.__name__, ())
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)


def lazy_exports(
    package: str, exports: Mapping[str, Sequence[str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` for `package`, given module -> exported names."""
    where = {name: module for module, names in exports.items() for name in names}
    shadowed = frozenset(name for name, module in where.items() if module.endswith(f".{name}"))
    if shadowed:
        _SHADOWED[package] = shadowed
        sys.modules[package].__class__ = _Package

    def module_getattr(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        # Later reads are plain attribute lookups.
        setattr(sys.modules[package], name, value)
        return value

    def module_dir() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return module_getattr, module_dir
