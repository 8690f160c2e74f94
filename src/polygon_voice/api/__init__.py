"""Polygon's public Python API: load a suite, run it, read typed results (docs/api.md).

Names are imported on first use (PEP 562), so `import polygon_voice.api` stays cheap.
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

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
    from polygon_voice.api.read import read_conversation, root_causes
    from polygon_voice.api.rejudge import RejudgeOptions, rejudge_run
    from polygon_voice.api.replay import ReplayOptions, ReplayResult, replay_run
    from polygon_voice.api.results import CallResult, ProbeSummary, RunResult
    from polygon_voice.api.run import open_store, run_suite, run_suite_async
    from polygon_voice.api.suites import (
        build_suite,
        builtin_suites,
        load_suite,
        select_scenarios,
    )
    from polygon_voice.runner.failures import RoleFailure

# Public name -> the module that defines it, imported when the name is first read; the
# package `polygon_voice` re-exports the same table.
EXPORTS: dict[str, tuple[str, ...]] = {
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
    "polygon_voice.api.read": ("read_conversation", "root_causes"),
    "polygon_voice.api.rejudge": ("RejudgeOptions", "rejudge_run"),
    "polygon_voice.api.replay": ("ReplayOptions", "ReplayResult", "replay_run"),
    "polygon_voice.api.results": ("CallResult", "ProbeSummary", "RunResult"),
    "polygon_voice.api.run": ("open_store", "run_suite", "run_suite_async"),
    "polygon_voice.api.suites": (
        "build_suite",
        "builtin_suites",
        "load_suite",
        "select_scenarios",
    ),
    "polygon_voice.runner.failures": ("RoleFailure",),
}
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

__all__ = [
    "CallResult",
    "ExitCode",
    "FailOn",
    "InfrastructureError",
    "InputError",
    "PolygonError",
    "ProbeSummary",
    "RejudgeOptions",
    "ReplayOptions",
    "ReplayResult",
    "RequestCounts",
    "RoleFailure",
    "RunInterrupted",
    "RunObserver",
    "RunOptions",
    "RunResult",
    "RunStarted",
    "SetupError",
    "build_suite",
    "builtin_suites",
    "load_suite",
    "open_store",
    "read_conversation",
    "rejudge_run",
    "replay_run",
    "root_causes",
    "run_suite",
    "run_suite_async",
    "select_scenarios",
]
