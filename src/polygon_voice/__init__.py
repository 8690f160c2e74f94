"""Polygon: a test harness for voice (phone) AI agents."""

__version__ = "0.1.0"
