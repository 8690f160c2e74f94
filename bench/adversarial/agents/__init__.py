"""One agent per module (files starting with `_` are helpers, not agents)."""
