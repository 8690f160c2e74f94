"""The reference agents of the three-layer harness: `reference:flawed`, `reference:robust`."""

from polygon_voice.agents.reference.flawed import FlawedAgent
from polygon_voice.agents.reference.robust import RobustAgent

__all__ = ["FlawedAgent", "RobustAgent"]
