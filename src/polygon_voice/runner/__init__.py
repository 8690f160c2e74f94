"""Runs a suite: wires the stages together, stores each conversation as it finishes."""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.runner.build import CallBuilder, failed_call, merged_records
    from polygon_voice.runner.plan import PlannedCall, count_calls, plan_calls
    from polygon_voice.runner.run import RunTally, SuiteRunner, run_one
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.runner.build": ("CallBuilder", "failed_call", "merged_records"),
            "polygon_voice.runner.plan": ("PlannedCall", "count_calls", "plan_calls"),
            "polygon_voice.runner.run": ("RunTally", "SuiteRunner", "run_one"),
        },
    )

__all__ = [
    "CallBuilder",
    "PlannedCall",
    "RunTally",
    "SuiteRunner",
    "count_calls",
    "failed_call",
    "merged_records",
    "plan_calls",
    "run_one",
]
