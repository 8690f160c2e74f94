"""Errors of the tools stage: agent protocol misuse, and stub configuration a suite got wrong."""

from __future__ import annotations


class ToolUsageError(Exception):
    """The agent broke the tool-call protocol: unknown tool or call id, a reused id, a bad send."""


class ToolConfigError(ValueError):
    """A tool of the suite is configured wrongly; raised before any call runs."""
