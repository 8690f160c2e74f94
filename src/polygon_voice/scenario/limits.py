"""Upper bounds on what a file may ask for, so a mistake or a hostile file fails at load.

Every bound has a documented default (docs/suites.md, "Limits") and an environment variable
that raises or lowers it for one run, e.g. ``POLYGON_MAX_REPEAT=5000``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields

from polygon_voice.scenario.errors import SuiteError

ENV_PREFIX = "POLYGON_"


@dataclass(frozen=True)
class Limits:
    """The bounds applied while reading and validating files (names match their variables)."""

    max_file_bytes: int = 16 * 1024 * 1024
    max_text_chars: int = 100_000  # one string value of a file
    max_depth: int = 64  # nesting of mappings and lists, aliases followed
    max_alias_nodes: int = 100_000  # values that YAML aliases add when expanded
    max_int_digits: int = 4300  # Python's own limit for reading integers from text
    max_repeat: int = 1000
    max_scenarios: int = 10_000
    max_calls: int = 100_000  # scenarios x repeat

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Limits:
        """The defaults, each overridden by `POLYGON_<NAME>` when that is a positive integer."""
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for item in fields(cls):
            variable = ENV_PREFIX + item.name.upper()
            raw = env.get(variable)
            if raw is None:
                continue
            try:
                value = int(raw.strip().replace("_", ""))
            except ValueError:
                value = 0
            if value < 1:
                # Named like a file error, so every command already reports it in one line.
                raise SuiteError(variable, f"must be a positive integer (got {raw!r})")
            values[item.name] = value
        limits = cls(**values)
        # Reading past Python's own integer limit needs the interpreter's limit raised too.
        if limits.max_int_digits > sys.get_int_max_str_digits() > 0:
            sys.set_int_max_str_digits(limits.max_int_digits)
        return limits
