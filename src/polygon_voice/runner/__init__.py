"""Runs a suite: wires the stages together, stores each conversation as it finishes."""

from polygon_voice.runner.build import CallBuilder, failed_call, merged_records
from polygon_voice.runner.plan import PlannedCall, count_calls, plan_calls
from polygon_voice.runner.run import RunTally, SuiteRunner, run_one

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
