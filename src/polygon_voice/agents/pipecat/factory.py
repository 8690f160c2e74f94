"""Loading `pipecat:TARGET:FUNCTION`: the user's pipeline function, one bot per call."""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from polygon_voice.agents.base import AgentContext
from polygon_voice.agents.lookup import (
    AgentCodeError,
    AgentLoadError,
    Places,
    import_module_target,
    load_file_target,
)

if TYPE_CHECKING:
    from polygon_voice.agents.pipecat.bridge import PipecatAgent

PIPECAT_PREFIX = "pipecat:"
INSTALL_HINT = "pip install 'polygon-voice[pipecat]'"
# The releases the adapter is tested against (docs/pipecat.md, "Versions").
SUPPORTED = ((1, 14), (1, 15))


class PipecatAgentFactory:
    """Builds one `PipecatAgent` per call from the user's `run_bot(transport, runner_args)`.

    It keeps the bots it started, so the end of the run (`aclose`, called by the runner)
    stops any pipeline still running: the engine has no end-of-call event to stop one with.
    """

    def __init__(self, spec: str, run_bot: Callable[..., Any], takes_runner_args: bool) -> None:
        self.spec = spec
        self.run_bot = run_bot
        self.takes_runner_args = takes_runner_args
        self._agents: list[PipecatAgent] = []

    def __call__(self, context: AgentContext) -> PipecatAgent:
        from polygon_voice.agents.pipecat.bridge import PipecatAgent

        agent = PipecatAgent(self, context)
        self._agents.append(agent)
        return agent

    async def aclose(self) -> None:
        """Stop every bot pipeline still running."""
        agents, self._agents = self._agents, []
        for agent in agents:
            await agent.aclose()


def load_pipecat_agent(spec: str, places: Places) -> PipecatAgentFactory:
    """The factory for `pipecat:bot.py:run_bot` or `pipecat:package.module:run_bot`."""
    target, _, attr = spec.removeprefix(PIPECAT_PREFIX).rpartition(":")
    if not target or not attr:
        raise AgentLoadError(
            f"agent {spec!r}: name the bot's pipeline function after a colon, "
            "as in 'pipecat:bot.py:run_bot' or 'pipecat:mypkg.bot:run_bot'"
        )
    require_pipecat(spec)
    loader = load_file_target if target.endswith(".py") else import_module_target
    try:
        function = loader(target, attr, places)
    except AgentCodeError as exc:
        raise AgentLoadError(f"agent {spec!r}: {exc}") from exc
    return PipecatAgentFactory(spec, function, _check_signature(spec, function))


def require_pipecat(spec: str) -> None:
    """Pipecat installed in a tested release, else one line with the install command."""
    if importlib.util.find_spec("pipecat") is None:
        raise AgentLoadError(f"agent {spec!r}: Pipecat is not installed: {INSTALL_HINT}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("pipecat-ai")
    except PackageNotFoundError:
        return  # a source checkout: no metadata to compare
    parts = tuple(int(p) for p in found.split(".")[:2] if p.isdigit())
    low, high = SUPPORTED
    if not low <= parts < high:
        raise AgentLoadError(
            f"agent {spec!r}: pipecat-ai {found} is installed; the adapter works with "
            f"{low[0]}.{low[1]} up to {high[0]}.{high[1]} (not included): {INSTALL_HINT}"
        )
    # Pipecat logs every frame at DEBUG to stderr, which would bury the run's own output.
    from loguru import logger

    logger.disable("pipecat")


def _check_signature(spec: str, function: Any) -> bool:
    """Whether the function takes `runner_args` beside the transport; errors say what fits."""
    if not callable(function) or not inspect.iscoroutinefunction(function):
        raise AgentLoadError(
            f"agent {spec!r}: not an async function; name the one that builds the pipeline "
            "on a transport, `async def run_bot(transport, runner_args)` in Pipecat's templates"
        )
    params = [
        p
        for p in inspect.signature(function).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    names = [p.name for p in params]
    if not params or names[0] == "runner_args" or len(params) > 2:
        raise AgentLoadError(
            f"agent {spec!r}: takes ({', '.join(names)}); Polygon hands the bot its transport, "
            "so name the function that takes it: `run_bot(transport, runner_args)` "
            "(or `run_bot(transport)`), not the runner's entry point `bot(runner_args)`"
        )
    return len(params) == 2
