"""Virtual time: speech durations and a queue of timed events (no real sleeping)."""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

from polygon_voice.model import Event


def speech_seconds(text: str, words_per_second: float) -> float:
    """How long saying `text` takes at the given rate."""
    return len(text.split()) / words_per_second


@dataclass
class EventQueue:
    """Events waiting for the agent, in virtual-time order (ties keep arrival order)."""

    _heap: list[tuple[float, int, Event]] = field(default_factory=list)
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def push(self, time: float, event: Event) -> None:
        """Queue `event` for delivery at `time`."""
        heapq.heappush(self._heap, (time, next(self._counter), event))

    def pop(self) -> tuple[float, Event]:
        """The earliest event."""
        time, _, event = heapq.heappop(self._heap)
        return time, event

    def __bool__(self) -> bool:
        return bool(self._heap)


@dataclass
class Timers:
    """Timers the agent set, fired on the virtual clock."""

    _heap: list[tuple[float, int, str]] = field(default_factory=list)
    _counter: itertools.count[int] = field(default_factory=itertools.count)

    def set(self, due: float, name: str) -> None:
        """Arm a timer."""
        heapq.heappush(self._heap, (due, next(self._counter), name))

    def next_due(self) -> float | None:
        """When the next timer fires, if any."""
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[tuple[float, str]]:
        """Timers due by `now`, earliest first."""
        due: list[tuple[float, str]] = []
        while self._heap and self._heap[0][0] <= now:
            time, _, name = heapq.heappop(self._heap)
            due.append((time, name))
        return due
