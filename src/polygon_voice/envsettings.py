"""Settings read from environment variables outside the LLM config (timeouts of the probe
and the lint): one parser, one wording of its error. Standard library only, so the lint's
and the probe's fast paths import nothing heavy for it."""

from __future__ import annotations

import math
from collections.abc import Mapping


def seconds_from_env(env: Mapping[str, str], name: str, default: float) -> float:
    """The positive number of seconds `name` holds, `default` when unset or blank; a
    ValueError naming the variable and its value otherwise."""
    given = env.get(name, "").strip()
    if not given:
        return default
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < math.inf:
        raise ValueError(f"{name} must be a positive number of seconds, not {given!r}")
    return seconds
