"""What a run consists of: one planned conversation per scenario and repeat."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from polygon_voice.model import Scenario, Suite


@dataclass(frozen=True)
class PlannedCall:
    """One conversation to run: its stable id, its position in the run and its scenario."""

    index: int
    conversation_id: str
    scenario: Scenario


def plan_calls(suite: Suite) -> Iterator[PlannedCall]:
    """Every conversation of the suite in a fixed order (scenario order, then repeat)."""
    index = 0
    for scenario in suite.scenarios:
        for repeat in range(1, suite.repeat + 1):
            conversation_id = scenario.id if suite.repeat == 1 else f"{scenario.id}#{repeat}"
            yield PlannedCall(index, conversation_id, scenario)
            index += 1


def count_calls(suite: Suite) -> int:
    """How many conversations the suite plans."""
    return len(suite.scenarios) * suite.repeat


def planned_call(suite: Suite, index: int) -> PlannedCall:
    """The `index`-th call of `plan_calls(suite)`, without walking the plan to it."""
    if not 0 <= index < count_calls(suite):
        raise IndexError(f"call {index} is not in a plan of {count_calls(suite)} calls")
    scenario = suite.scenarios[index // suite.repeat]
    repeat = index % suite.repeat + 1
    conversation_id = scenario.id if suite.repeat == 1 else f"{scenario.id}#{repeat}"
    return PlannedCall(index, conversation_id, scenario)
