"""Polygon: a test harness for voice (phone) AI agents.

The public API (docs/api.md) is importable from here: `from polygon_voice import run_suite`.
Its names load on first use (PEP 562), so `import polygon_voice` imports nothing heavy.
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from polygon_voice.api.config import FailOn, RunOptions
    from polygon_voice.api.errors import (
        ExitCode,
        InfrastructureError,
        InputError,
        PolygonError,
        RunInterrupted,
        SetupError,
    )
    from polygon_voice.api.events import RequestCounts, RunObserver, RunStarted
    from polygon_voice.api.rejudge import RejudgeOptions, rejudge_run
    from polygon_voice.api.results import CallResult, ProbeSummary, RunResult
    from polygon_voice.api.run import open_store, run_suite, run_suite_async
    from polygon_voice.api.suites import builtin_suites, load_suite, select_scenarios
    from polygon_voice.model.suite import Suite
    from polygon_voice.runner.failures import RoleFailure
else:
    # The public names, each imported from its module when first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.api.config": ("FailOn", "RunOptions"),
            "polygon_voice.api.errors": (
                "ExitCode",
                "InfrastructureError",
                "InputError",
                "PolygonError",
                "RunInterrupted",
                "SetupError",
            ),
            "polygon_voice.api.events": ("RequestCounts", "RunObserver", "RunStarted"),
            "polygon_voice.api.rejudge": ("RejudgeOptions", "rejudge_run"),
            "polygon_voice.api.results": ("CallResult", "ProbeSummary", "RunResult"),
            "polygon_voice.api.run": ("open_store", "run_suite", "run_suite_async"),
            "polygon_voice.api.suites": ("builtin_suites", "load_suite", "select_scenarios"),
            "polygon_voice.model.suite": ("Suite",),
            "polygon_voice.runner.failures": ("RoleFailure",),
        },
    )

# The curated public names, pinned by tests/api/test_public_names.py; the rest is internal.
__all__ = [
    "CallResult",
    "ExitCode",
    "FailOn",
    "InfrastructureError",
    "InputError",
    "PolygonError",
    "ProbeSummary",
    "RejudgeOptions",
    "RequestCounts",
    "RoleFailure",
    "RunInterrupted",
    "RunObserver",
    "RunOptions",
    "RunResult",
    "RunStarted",
    "SetupError",
    "Suite",
    "__version__",
    "builtin_suites",
    "load_suite",
    "open_store",
    "rejudge_run",
    "run_suite",
    "run_suite_async",
    "select_scenarios",
]
