"""`--agent livekit:module:AgentClass`: a LiveKit Agents `Agent`, unchanged, in text mode.

LiveKit Agents is an extra (`pip install 'polygon-voice[livekit]'`); nothing here imports it
until such an agent is asked for. See docs/livekit.md.
"""

from __future__ import annotations

import inspect
import itertools
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from polygon_voice.agents.base import AgentContext
from polygon_voice.agents.livekit.session import LiveKitAgent, LiveKitModelError
from polygon_voice.agents.lookup import (
    AgentCodeError,
    AgentLoadError,
    Places,
    import_module_target,
    load_file_target,
)

__all__ = [
    "INSTALL",
    "LIVEKIT_PREFIX",
    "LiveKitAgent",
    "LiveKitAgentFactory",
    "LiveKitModelError",
    "describe_livekit",
    "load_livekit_agent",
]

LIVEKIT_PREFIX = "livekit:"
INSTALL = "pip install 'polygon-voice[livekit]'"
# The releases the adapter is tested against (docs/livekit.md): it relies on how they run
# tools and speeches, so others are refused rather than half working.
OLDEST = (1, 8, 9)
BEYOND = (1, 9, 0)
SUPPORTED_RANGE = ">=1.8.9,<1.9"


class LiveKitAgentFactory:
    """Builds one `LiveKitAgent` (one `AgentSession`) per call from the user's class."""

    def __init__(self, spec: str, target: Any, llm_config: Path | None = None) -> None:
        self.spec = spec
        self._target = target
        self._llm_config = llm_config
        self._open: list[LiveKitAgent] = []
        probe = self.build_agent()  # fails now, before any call, if it cannot work
        self._needs_llm = _has_no_llm(probe)
        if self._needs_llm:
            self._role_llm()  # the same check, for an agent whose session gives the model

    def build_agent(self) -> Any:
        """A fresh instance of the user's agent (LiveKit agents take no arguments)."""
        from livekit.agents import Agent

        try:
            agent = self._target()
        except Exception as exc:
            raise AgentLoadError(
                f"agent {self.spec!r}: building it failed: {type(exc).__name__}: {exc}"
            ) from exc
        if not isinstance(agent, Agent):
            raise AgentLoadError(
                f"agent {self.spec!r}: built a {type(agent).__name__}, not a livekit.agents.Agent"
            )
        return agent

    def _role_llm(self) -> Any:
        """The model for an agent that names none (LiveKit apps often give it to the
        AgentSession instead): Polygon's agent role, through LiveKit's OpenAI plugin."""
        from polygon_voice.llm import LLMConfigError, load_llm_config

        try:
            role = load_llm_config(self._llm_config).role("agent")
        except LLMConfigError as exc:
            raise AgentLoadError(f"agent {self.spec!r}: {exc}") from None
        if not role.configured:
            raise AgentLoadError(
                f"agent {self.spec!r}: the agent has no llm of its own; give it one "
                "(Agent(..., llm=openai.LLM(...))) or name the model for its session with "
                "POLYGON_AGENT_MODEL (or llm.agent in --llm-config)"
            )
        try:
            from livekit.plugins import openai
        except ImportError:
            raise AgentLoadError(
                f"agent {self.spec!r}: its session's model needs LiveKit's OpenAI plugin: {INSTALL}"
            ) from None
        key = os.environ.get(role.api_key_env) if role.api_key_env else None
        return openai.LLM(model=role.model or "", base_url=role.base_url, api_key=key or "none")

    def __call__(self, context: AgentContext) -> LiveKitAgent:
        default = self._role_llm if self._needs_llm else _no_llm
        agent = LiveKitAgent(self.build_agent, context, default)
        self._open.append(agent)
        return agent

    async def aclose(self) -> None:
        """Close every call's session (the runner calls this when the run ends)."""
        open_agents, self._open = self._open, []
        for agent in open_agents:
            await agent.aclose()


def describe_livekit() -> dict[str, object]:
    """What a run records about a LiveKit agent: the kind and the framework's release."""
    try:
        return {"agent_kind": "livekit", "livekit_agents_version": version("livekit-agents")}
    except PackageNotFoundError:
        return {}  # resolving the agent says why it cannot run


def _no_llm() -> None:
    return None


def _has_no_llm(agent: Any) -> bool:
    from livekit.agents import llm
    from livekit.agents.utils import is_given

    model = agent.llm
    if not is_given(model) or model is None:
        return True
    if isinstance(model, llm.RealtimeModel):
        raise AgentLoadError(
            "a realtime (speech-to-speech) model cannot be driven in text mode; give the agent "
            "a text LLM for testing"
        )
    return False


def load_livekit_agent(
    spec: str, places: Places, llm_config: Path | None = None
) -> LiveKitAgentFactory:
    """The factory for `livekit:module:Class` or `livekit:file.py:Class`."""
    _check_installed(spec)
    rest = spec.removeprefix(LIVEKIT_PREFIX)
    if ":" not in rest:
        raise AgentLoadError(
            f"agent {spec!r}: name the agent class after a colon: "
            "'livekit:package.module:Assistant' or 'livekit:agent.py:Assistant'"
        )
    target, _, attr = rest.rpartition(":")
    loader = load_file_target if target.endswith(".py") else import_module_target
    try:
        found = loader(target, attr, places)
    except AgentCodeError as exc:
        raise AgentLoadError(f"agent {spec!r}: {exc}") from exc
    if inspect.isclass(found) or callable(found):
        return LiveKitAgentFactory(spec, found, llm_config)
    raise AgentLoadError(f"agent {spec!r}: {attr} is neither an Agent class nor a factory")


def _check_installed(spec: str) -> None:
    try:
        installed = version("livekit-agents")
    except PackageNotFoundError:
        raise AgentLoadError(
            f"agent {spec!r}: LiveKit Agents is not installed: {INSTALL}"
        ) from None
    if not OLDEST <= _release(installed) < BEYOND:
        raise AgentLoadError(
            f"agent {spec!r}: livekit-agents {installed} is installed; the adapter supports "
            f"{SUPPORTED_RANGE} (pip install 'livekit-agents{SUPPORTED_RANGE}')"
        )


def _release(installed: str) -> tuple[int, ...]:
    """(1, 8, 9) of '1.8.9' or '1.8.9rc1'."""
    parts = []
    for part in installed.split(".")[:3]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        parts.append(int(digits or 0))
    return tuple(parts)
