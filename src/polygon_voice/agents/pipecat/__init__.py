"""Pipecat bots under test, unchanged: `--agent pipecat:bot.py:run_bot` (docs/pipecat.md).

Nothing here imports Pipecat: the framework is imported when a bot is loaded, so the adapter
costs nothing unless it is used.
"""

from polygon_voice.agents.pipecat.factory import (
    INSTALL_HINT,
    PIPECAT_PREFIX,
    PipecatAgentFactory,
    load_pipecat_agent,
)

__all__ = ["INSTALL_HINT", "PIPECAT_PREFIX", "PipecatAgentFactory", "load_pipecat_agent"]
