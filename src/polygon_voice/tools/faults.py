"""Which fault hits a call, and what an empty answer looks like (TOOL-3).

A fault applies to call `number` of a tool if its ``on_call`` equals the number, or if it has a
``rate`` and ``rng_for(*seed_parts, "fault", tool, number, index).random() < rate``, where
``index`` is the fault's position in the tool's list. The first applicable fault in list order
wins, so at most one fault hits a call. Calls with invalid arguments are never faulted (the
request is refused before it reaches the backend), but they still use up their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from polygon_voice.model.tools import FaultSpec
from polygon_voice.seeding import rng_for


def pick_fault(
    faults: Sequence[FaultSpec], seed_parts: Sequence[object], tool: str, number: int
) -> FaultSpec | None:
    """The fault that hits call `number` (1-based) of `tool`, or None."""
    for index, fault in enumerate(faults):
        if _hits(fault, seed_parts, tool, number, index):
            return fault
    return None


def _hits(
    fault: FaultSpec, seed_parts: Sequence[object], tool: str, number: int, index: int
) -> bool:
    if fault.on_call is not None:
        return fault.on_call == number
    # FaultSpec guarantees a rate when on_call is absent; a draw only when needed saves time.
    rate = fault.rate or 0.0
    return rate > 0 and rng_for(*seed_parts, "fault", tool, number, index).random() < rate


def empty_like(value: Any) -> Any:
    """The empty value of an answer's type: {} for a dict, [] for a list, "" for text, else None."""
    if isinstance(value, dict):
        return {}
    if isinstance(value, list):
        return []
    if isinstance(value, str):
        return ""
    return None
