"""Finding the user's agent code: `package.module:attr` and `path/file.py:attr`.

The rules are the ones Python users expect (docs/agents.md, "How --agent is found"):

* the current folder is importable, as with `python -m`;
* a relative `file.py` is looked for in the current folder, then in the suite's folder,
  never inside the installed Polygon package (where the built-in suites live);
* while an agent file runs, its own folder comes first on the import path, so it can
  import the modules beside it;
* every error names the file or module as the user wrote it, with the place to fix.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from polygon_voice.seeding import content_hash
from polygon_voice.textsafe import visible

# The installed package: a suite folder inside it (a built-in suite) holds no user code.
PACKAGE_ROOT = Path(__file__).resolve().parents[1]

# Modules imported by an agent file from its own folder, by the folder they belong to:
# another agent file's same-named sibling must not be handed the first one's module.
_SIBLINGS: dict[str, Path] = {}


class AgentLoadError(Exception):
    """An agent name or path that cannot be turned into an agent factory."""


class AgentCodeError(Exception):
    """Why the user's agent code could not be found or loaded (the spec is added by the
    caller, which knows how the user named the agent)."""


@dataclass(frozen=True)
class Places:
    """Where relative names are looked for: the current folder, then the suite's."""

    cwd: Path | None
    suite_dir: Path | None

    @classmethod
    def of(cls, cwd: Path | None, base_dir: Path | None) -> Places:
        here = cwd if cwd is not None else current_folder()
        return cls(cwd=here, suite_dir=usable_suite_dir(base_dir))

    def folders(self) -> list[tuple[str, Path]]:
        """(what the folder is to the user, the folder), without duplicates."""
        named = [("the current folder", self.cwd), ("the suite's folder", self.suite_dir)]
        seen: set[Path] = set()
        folders: list[tuple[str, Path]] = []
        for label, folder in named:
            if folder is not None and folder.resolve() not in seen:
                seen.add(folder.resolve())
                folders.append((label, folder))
        return folders


def current_folder() -> Path | None:
    """The process's working folder, or None when it no longer exists."""
    try:
        return Path.cwd()
    except OSError:
        return None


def usable_suite_dir(base_dir: Path | None) -> Path | None:
    """The suite's folder, unless it lies inside the installed package (a built-in suite)."""
    if base_dir is None:
        return None
    return None if base_dir.resolve().is_relative_to(PACKAGE_ROOT) else base_dir


# --- package.module:attr ----------------------------------------------------------------


def import_module_target(module_name: str, attr: str, places: Places) -> Any:
    """The object `attr` of the importable module `module_name`."""
    if not all(part.isidentifier() for part in module_name.split(".")):
        raise AgentCodeError(_not_a_module_name(module_name, attr, places))
    # The suite's folder, then the current folder in front of it: the current one wins.
    for _, folder in reversed(places.folders()):
        _put_on_path(folder)
    importlib.invalidate_caches()  # files written since the last import are seen
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if _names_the_module(exc.name, module_name):
            raise AgentCodeError(_module_not_found(module_name, exc.name, places)) from exc
        raise AgentCodeError(
            _import_failed(module_name, exc, _module_roots(module_name), places)
        ) from exc
    except (Exception, SystemExit) as exc:  # the module's own code raised while importing
        raise AgentCodeError(
            _import_failed(module_name, exc, _module_roots(module_name), places)
        ) from exc
    return attribute(module, attr, module_name)


def _put_on_path(folder: Path) -> None:
    """Put `folder` first on the import path unless it is already there."""
    wanted = folder.resolve()
    for entry in sys.path:
        try:
            if Path(entry or ".").resolve() == wanted:
                return
        except OSError:
            continue
    sys.path.insert(0, str(folder))


def _names_the_module(missing: str | None, module_name: str) -> bool:
    # The module itself, or a package on its way, is missing (not something it imports).
    return missing is not None and (missing == module_name or module_name.startswith(f"{missing}."))


def _module_not_found(module_name: str, missing: str | None, places: Places) -> str:
    looked = ", ".join(f"{label} ({visible(str(folder))})" for label, folder in places.folders())
    where = f"{looked} or the installed packages" if looked else "the installed packages"
    return f"cannot import {module_name!r}: no module named {missing!r} in {where}"


def _not_a_module_name(module_name: str, attr: str, places: Places) -> str:
    message = f"{module_name!r} is not a module name"
    as_file = module_name if module_name.endswith(".py") else f"{module_name}.py"
    if any((folder / as_file).is_file() for _, folder in places.folders()):
        return f"{message}; for the file, write '{as_file}:{attr or 'NAME'}'"
    return f"{message}; give 'package.module:NAME' or 'path/to/file.py:NAME'"


def _module_roots(module_name: str) -> list[Path]:
    """The folder of the module's top-level package: the user's code, for error places."""
    try:
        found = importlib.util.find_spec(module_name.split(".")[0])
    except (ImportError, ValueError):
        return []
    if found is None:
        return []
    if found.submodule_search_locations:
        return [Path(location) for location in found.submodule_search_locations]
    return [Path(found.origin).parent] if found.origin else []


# --- path/file.py:attr ------------------------------------------------------------------


def find_file(file: str, places: Places) -> Path:
    """The agent file: as given when absolute, else the first of the current folder and
    the suite's folder that holds it."""
    given = Path(file).expanduser()
    if given.is_absolute():
        if not given.is_file():
            raise AgentCodeError(f"no file {visible(file)}")
        return given
    candidates = [(label, folder / given) for label, folder in places.folders()]
    for _, candidate in candidates:
        if candidate.is_file():
            return candidate
    looked = "; ".join(f"{label}: {visible(str(candidate))}" for label, candidate in candidates)
    raise AgentCodeError(f"no file {visible(file)} (looked in {looked or 'no folder'})")


def load_file_target(file: str, attr: str, places: Places) -> Any:
    """The object `attr` of the Python file `file`, run as a module of its own."""
    path = find_file(file, places)
    module = _exec_file(path, file, places)
    return attribute(module, attr, file)


def _exec_file(path: Path, shown: str, places: Places) -> ModuleType:
    resolved = path.resolve()
    # One name per file, never a user module's name: two agents called bot.py do not clash.
    module_name = f"_polygon_agent_{content_hash(str(resolved))}"
    module_spec = importlib.util.spec_from_file_location(module_name, resolved)
    if module_spec is None or module_spec.loader is None:
        raise AgentCodeError(f"{shown} cannot be loaded as Python")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look the module up
    try:
        with _folder_first(resolved.parent):
            module_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        sys.modules.pop(module_name, None)
        raise AgentCodeError(_import_failed(shown, exc, [resolved.parent], places)) from exc
    return module


@contextmanager
def _folder_first(folder: Path) -> Iterator[None]:
    """The file's folder first on the import path while it runs; its siblings kept apart
    from another agent folder's modules of the same name."""
    for name, owner in list(_SIBLINGS.items()):
        if owner != folder:
            sys.modules.pop(name, None)  # the other agent keeps the module it already bound
            del _SIBLINGS[name]
    before = set(sys.modules)
    entry = str(folder)
    sys.path.insert(0, entry)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        if entry in sys.path:
            sys.path.remove(entry)
        for name in set(sys.modules) - before:
            if _defined_in(sys.modules.get(name), folder):
                _SIBLINGS[name] = folder


def _defined_in(module: ModuleType | None, folder: Path) -> bool:
    file = getattr(module, "__file__", None)
    if not isinstance(file, str) or getattr(module, "__name__", "").startswith("_polygon_agent_"):
        return False
    return Path(file).resolve().is_relative_to(folder)


# --- the attribute ----------------------------------------------------------------------


def attribute(module: ModuleType, attr: str, shown: str) -> Any:
    """`module.attr` (dotted: `Outer.Inner`); a miss suggests the names it may have meant."""
    if not attr:
        raise AgentCodeError("name the object after ':'")
    target: Any = module
    walked = shown
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except Exception as exc:  # AttributeError, or a module __getattr__ that raised
            raise AgentCodeError(f"{walked} has no {part!r}{_suggestion(target, part)}") from exc
        walked = f"{shown}:{part}" if walked == shown else f"{walked}.{part}"
    return target


def _suggestion(owner: Any, missing: str) -> str:
    public = _public_names(owner)
    callables = [name for name, value in public.items() if callable(value)]
    close = _close_matches(missing, callables) or _close_matches(missing, list(public))
    if close:
        return "; did you mean " + " or ".join(repr(name) for name in close) + "?"
    own = [name for name, value in public.items() if callable(value) and _is_own(value, owner)]
    if own:
        shown = ", ".join(sorted(own)[:10]) + (", ..." if len(own) > 10 else "")
        return f"; it defines {shown}"
    return ""


def _public_names(owner: Any) -> dict[str, Any]:
    names: dict[str, Any] = {}
    try:
        listed = dir(owner)
    except Exception:
        return names
    for name in listed:
        if name.startswith("_"):
            continue
        try:
            names[name] = getattr(owner, name)
        except Exception:
            continue
    return names


def _close_matches(missing: str, names: list[str]) -> list[str]:
    same_but_case = [name for name in names if name.lower() == missing.lower()]
    return same_but_case or difflib.get_close_matches(missing, names, n=3, cutoff=0.6)


def _is_own(value: Any, owner: Any) -> bool:
    # A module's own classes and functions, not the ones it imported (nor, for a class,
    # the dozens of methods it may inherit).
    return inspect.ismodule(owner) and getattr(value, "__module__", None) == owner.__name__


# --- errors raised by the user's code while it loads ------------------------------------


def _import_failed(shown: str, exc: BaseException, roots: list[Path], places: Places) -> str:
    place, source = _error_place(exc, roots, places.cwd)
    what = f"{type(exc).__name__}: {_message(exc)}"
    message = (
        f"importing {shown} failed: {place}: {what}"
        if place
        else f"importing {shown} failed: {what}"
    )
    if isinstance(exc, ImportError) and "no known parent package" in str(exc):
        # A file run on its own has no package around it; as a module it has one.
        message += "; to use relative imports, name the agent 'package.module:NAME'"
    return f"{message}\n    {source}" if source else message


def _message(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return visible(str(exc.msg))
    try:
        return visible(str(exc)) or "(no message)"
    except Exception:  # an exception whose own __str__ fails still gets reported
        return "(its message could not be shown)"


def _error_place(exc: BaseException, roots: list[Path], cwd: Path | None) -> tuple[str, str]:
    """`file:line` and the source line where the user's code failed ("" when unknown)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_shown_path(exc.filename, cwd)}:{exc.lineno}", (exc.text or "").strip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    mine = [f for f in frames if _under(f.filename, roots)] or [
        f for f in frames if not _under(f.filename, [PACKAGE_ROOT])
    ]
    if not mine:
        return "", ""
    frame = mine[-1]
    return f"{_shown_path(frame.filename, cwd)}:{frame.lineno}", (frame.line or "").strip()


def _under(filename: str, roots: list[Path]) -> bool:
    try:
        resolved = Path(filename).resolve()
    except OSError:
        return False
    return any(resolved.is_relative_to(root.resolve()) for root in roots)


def _shown_path(filename: str, cwd: Path | None) -> str:
    """A path relative to the current folder when it lies inside it, else as it is."""
    if cwd is not None:
        try:
            return visible(str(Path(filename).resolve().relative_to(cwd.resolve())))
        except (ValueError, OSError):
            pass
    return visible(filename)
