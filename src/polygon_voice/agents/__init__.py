"""Adapters for the agent under test: the protocol, the registry, loading user agents."""

from polygon_voice.agents.base import Agent, AgentContext, AgentFactory
from polygon_voice.agents.registry import (
    AgentLoadError,
    as_factory,
    available_agents,
    describe_agent,
    register_agent,
    resolve_agent,
)

__all__ = [
    "Agent",
    "AgentContext",
    "AgentFactory",
    "AgentLoadError",
    "as_factory",
    "available_agents",
    "describe_agent",
    "register_agent",
    "resolve_agent",
]
