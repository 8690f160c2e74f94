"""Agents by name: built-ins, entry points, `module:attr` and `file.py:attr`."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from polygon_voice.agents.base import Agent, AgentContext, AgentFactory
from polygon_voice.seeding import content_hash

if TYPE_CHECKING:
    from polygon_voice.agents.prompt_agent import PromptAgentFactory

ENTRY_POINT_GROUP = "polygon_voice.agents"
PROMPT_PREFIX = "prompt:"

# Names map to import paths, so nothing is imported until an agent is asked for.
_BUILTIN: dict[str, str] = {
    "reference:flawed": "polygon_voice.agents.reference:FlawedAgent",
    "reference:robust": "polygon_voice.agents.reference:RobustAgent",
}
_REGISTERED: dict[str, AgentFactory] = {}


class AgentLoadError(Exception):
    """An agent name or path that cannot be turned into an agent factory."""


def register_agent(name: str) -> Callable[[Any], Any]:
    """Decorator: register a factory (or class) under `name`."""

    def decorate(target: Any) -> Any:
        _REGISTERED[name] = as_factory(target, name)
        return target

    return decorate


def available_agents() -> list[str]:
    """Every agent name known without importing user code."""
    names = set(_BUILTIN) | set(_REGISTERED)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def resolve_agent(spec: str, base_dir: Path | None = None) -> AgentFactory:
    """Turn `name`, `package.module:attr` or `path/file.py:attr` into an agent factory."""
    spec = spec.strip()
    if spec.startswith(PROMPT_PREFIX):
        return _load_prompt_agent(spec, base_dir)
    if spec.startswith(("http://", "https://")):
        # Imported here: the adapters stay out of the import of every other agent.
        from polygon_voice.agents.http_agent import HttpAgentFactory

        return HttpAgentFactory(spec)
    if spec in _REGISTERED:
        return _REGISTERED[spec]
    if spec in _BUILTIN:
        return _load_import_path(_BUILTIN[spec], spec)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            return as_factory(ep.load(), spec)
    if ":" not in spec:
        known = ", ".join(available_agents()) or "none registered"
        raise AgentLoadError(
            f"unknown agent {spec!r}: give a registered name ({known}), "
            "'package.module:attr' or 'path/to/file.py:attr'"
        )
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        return _load_file(target, attr, base_dir, spec)
    return _load_import_path(spec, spec, base_dir)


def describe_agent(spec: str, base_dir: Path | None = None) -> dict[str, object]:
    """What a run records about the agent beyond its name (model, prompt version, ...).

    Only Polygon-run agents have more to say; anything else, or an agent that cannot be
    loaded (resolving it later reports why), gives an empty mapping.
    """
    if not spec.strip().startswith(PROMPT_PREFIX):
        return {}
    try:
        return _load_prompt_agent(spec.strip(), base_dir).describe()
    except AgentLoadError:
        return {}


def _load_prompt_agent(spec: str, base_dir: Path | None) -> PromptAgentFactory:
    from polygon_voice.agents.prompt_agent import PromptAgentError, load_prompt_agent

    try:
        return load_prompt_agent(spec.removeprefix(PROMPT_PREFIX), base_dir)
    except PromptAgentError as exc:
        raise AgentLoadError(f"agent {spec!r}: {exc}") from exc


def _load_import_path(path: str, spec: str, base_dir: Path | None = None) -> AgentFactory:
    module_name, _, attr = path.partition(":")
    if base_dir is not None and str(base_dir) not in sys.path:
        # A suite's own agent module sits next to the suite file.
        sys.path.insert(0, str(base_dir))
    try:
        module = importlib.import_module(module_name)
    except (ImportError, ValueError) as exc:  # ValueError: an empty or relative module name
        raise AgentLoadError(f"agent {spec!r}: cannot import {module_name!r}: {exc}") from exc
    return _attr_factory(module, attr, spec)


def _load_file(file: str, attr: str, base_dir: Path | None, spec: str) -> AgentFactory:
    path = Path(file)
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    if not path.is_file():
        raise AgentLoadError(f"agent {spec!r}: no such file {path}")
    module_name = f"polygon_user_agent_{content_hash(str(path.resolve()))}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise AgentLoadError(f"agent {spec!r}: cannot load {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:
        raise AgentLoadError(f"agent {spec!r}: importing {path} failed: {exc}") from exc
    return _attr_factory(module, attr, spec)


def _attr_factory(module: Any, attr: str, spec: str) -> AgentFactory:
    if not attr:
        raise AgentLoadError(f"agent {spec!r}: name the object after ':'")
    try:
        target = getattr(module, attr)
    except AttributeError as exc:
        raise AgentLoadError(f"agent {spec!r}: {module.__name__} has no {attr!r}") from exc
    return as_factory(target, spec)


def as_factory(target: Any, spec: str) -> AgentFactory:
    """Wrap a class, a factory or a ready agent so each conversation gets its own agent."""
    if not inspect.isclass(target) and _has_respond(target):
        raise AgentLoadError(
            f"agent {spec!r} is a ready-made object; give its class or a factory, "
            "so every conversation starts with a fresh agent"
        )
    if not callable(target):
        raise AgentLoadError(f"agent {spec!r} is neither a class nor a factory")
    takes_context = _accepts_argument(target)

    def build(context: AgentContext) -> Agent:
        agent = target(context) if takes_context else target()
        if not _has_respond(agent):
            raise AgentLoadError(f"agent {spec!r} built an object without a respond() method")
        return cast(Agent, agent)

    return build


def _has_respond(obj: Any) -> bool:
    return callable(getattr(obj, "respond", None))


def _accepts_argument(target: Any) -> bool:
    try:
        params = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return any(p.kind in positional or p.kind is inspect.Parameter.VAR_POSITIONAL for p in params)
