"""Polygon: a test harness for voice (phone) AI agents.

The public API (docs/api.md) is importable from here: `from polygon_voice import run_suite`.
Its names load on first use (PEP 562), so `import polygon_voice` imports nothing heavy.
"""

from typing import TYPE_CHECKING

from polygon_voice import api as _api
from polygon_voice._lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from polygon_voice.api import *  # noqa: F403  (the same names, for type checkers)
    from polygon_voice.model.suite import Scenario as Scenario
    from polygon_voice.model.suite import Suite as Suite
else:
    # The API's names, and `Suite` and `Scenario` for suites built in code, each imported
    # when first read.
    __getattr__, __dir__ = lazy_exports(
        __name__, {**_api.EXPORTS, "polygon_voice.model.suite": ("Scenario", "Suite")}
    )

# The curated public names, pinned by tests/api/test_public_names.py; the rest is internal.
__all__ = sorted([*_api.__all__, "Scenario", "Suite", "__version__"])
