"""Agents by name: built-ins, entry points, `module:attr` and `file.py:attr`."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from polygon_voice.agents.base import Agent, AgentContext, AgentFactory
from polygon_voice.agents.lookup import (
    AgentCodeError,
    AgentLoadError,
    Places,
    import_module_target,
    load_file_target,
)
from polygon_voice.textsafe import visible

if TYPE_CHECKING:
    from polygon_voice.agents.prompt_agent import PromptAgentFactory

__all__ = [
    "ENTRY_POINT_GROUP",
    "PROMPT_PREFIX",
    "AgentLoadError",  # defined beside the lookup that raises it most
    "as_factory",
    "available_agents",
    "describe_agent",
    "register_agent",
    "resolve_agent",
]

ENTRY_POINT_GROUP = "polygon_voice.agents"
PROMPT_PREFIX = "prompt:"

# Names map to import paths, so nothing is imported until an agent is asked for.
_BUILTIN: dict[str, str] = {
    "reference:flawed": "polygon_voice.agents.reference:FlawedAgent",
    "reference:robust": "polygon_voice.agents.reference:RobustAgent",
}
_REGISTERED: dict[str, AgentFactory] = {}


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


def resolve_agent(
    spec: str,
    base_dir: Path | None = None,
    *,
    cwd: Path | None = None,
    llm_config: Path | None = None,
) -> AgentFactory:
    """Turn `name`, `package.module:attr` or `path/file.py:attr` into an agent factory.

    Relative names are looked for in `cwd` (the current folder when None), then in
    `base_dir` (the suite's folder; ignored for a built-in suite inside the package).
    `llm_config`, the run's LLM config file, gives a `prompt:` agent its model settings
    when its own file names none.
    """
    spec = spec.strip()
    places = Places.of(cwd, base_dir)
    if spec.startswith(PROMPT_PREFIX):
        return _load_prompt_agent(spec, places, llm_config)
    if spec.startswith("pipecat:"):
        from polygon_voice.agents.pipecat import load_pipecat_agent

        return load_pipecat_agent(spec, places)
    if spec.startswith("livekit:"):
        # Imported here: LiveKit Agents is an extra, loaded only for its own agents.
        from polygon_voice.agents.livekit import load_livekit_agent

        return load_livekit_agent(spec, places, llm_config)
    if spec.startswith(("http://", "https://")):
        # Imported here: the adapters stay out of the import of every other agent.
        from polygon_voice.agents.http_agent import HttpAgentFactory

        return HttpAgentFactory(spec)
    if spec in _REGISTERED:
        return _REGISTERED[spec]
    if spec in _BUILTIN:
        module_name, _, attr = _BUILTIN[spec].partition(":")
        return as_factory(getattr(importlib.import_module(module_name), attr), spec)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == spec:
            return as_factory(_entry_point_target(ep, spec), spec)
    if ":" not in spec:
        raise AgentLoadError(_unknown_name(spec))
    target, _, attr = spec.rpartition(":")
    loader = load_file_target if target.endswith(".py") else import_module_target
    return as_factory(_user_code(spec, loader, target, attr, places), spec)


def describe_agent(
    spec: str, base_dir: Path | None = None, *, cwd: Path | None = None
) -> dict[str, object]:
    """What a run records about the agent beyond its name (model, prompt version, ...).

    Only Polygon-run agents have more to say; anything else, or an agent that cannot be
    loaded (resolving it later reports why), gives an empty mapping.
    """
    if spec.strip().startswith("livekit:"):
        from polygon_voice.agents.livekit import describe_livekit

        return describe_livekit()
    if not spec.strip().startswith(PROMPT_PREFIX):
        return {}
    try:
        return _load_prompt_agent(spec.strip(), Places.of(cwd, base_dir)).describe()
    except AgentLoadError:
        return {}


def _user_code(
    spec: str, loader: Callable[[str, str, Places], Any], target: str, attr: str, places: Places
) -> Any:
    try:
        return loader(target, attr, places)
    except AgentCodeError as exc:
        raise AgentLoadError(f"agent {spec!r}: {exc}") from exc


def _entry_point_target(ep: EntryPoint, spec: str) -> Any:
    try:
        return ep.load()
    except (Exception, SystemExit) as exc:
        raise AgentLoadError(
            f"agent {spec!r}: the package that registers it ({ep.value}) failed to load: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def _unknown_name(spec: str) -> str:
    if spec.endswith(".py"):
        return (
            f"agent {spec!r}: name the class or factory after a colon: '{visible(spec)}:ClassName'"
        )
    known = ", ".join(available_agents()) or "none registered"
    return (
        f"unknown agent {spec!r}: give a registered name ({known}), "
        "'package.module:attr' or 'path/to/file.py:attr'"
    )


def _load_prompt_agent(
    spec: str, places: Places, llm_config: Path | None = None
) -> PromptAgentFactory:
    from polygon_voice.agents.prompt_agent import PromptAgentError, load_prompt_agent

    file = Path(spec.removeprefix(PROMPT_PREFIX))
    if not file.is_absolute() and places.cwd is not None and (places.cwd / file).exists():
        # Given a folder other than the process's own, the file is taken from there.
        file = file if places.cwd.resolve() == Path(".").resolve() else places.cwd / file
    try:
        return load_prompt_agent(file, places.suite_dir, run_llm_config=llm_config)
    except PromptAgentError as exc:
        raise AgentLoadError(f"agent {spec!r}: {exc}") from exc


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
