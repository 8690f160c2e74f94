"""The stub tools of a replay: the recorded call's own results, and nothing invented.

A replayed call gets one stub per tool the run's recorded calls used. A stub answers a call
of the new agent with the recorded outcome (its result, or its recorded failure) of the
recorded call to the same tool with the same arguments: equal after JSON normalisation
(object keys in any order, `5` equal to `5.0` and to `"5"`, as everywhere in `expect:`).
When the recorded call made the same call several times, the recorded outcomes are served
in order. Anything else — other arguments, a tool the recorded call never used, or one call
more than the recorded call made — is answered with a tool error, `no recorded result for
these arguments`, and a `replay_note` in the trace: inventing a backend answer would make
the replay say what the real backend never said.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from polygon_voice.model import CallStatus, ToolCall
from polygon_voice.model.events import ToolErrorKind
from polygon_voice.tools.backend import Backend, WriteContext
from polygon_voice.tools.stubs import Outcome

NO_RECORD = "no recorded result for these arguments"
NOTE_KIND = "replay_note"
# What a note quotes of the arguments: enough to recognise them, never a whole record.
_ARGS_SHOWN = 300

Note = Callable[[str, dict[str, Any]], None]


def normal_form(value: Any) -> Any:
    """A hashable canonical form of a JSON value: key order, 5 / 5.0 / "5" do not matter."""
    if isinstance(value, Mapping):
        return ("{}", tuple(sorted((str(k), normal_form(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("[]", tuple(normal_form(v) for v in value))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, str):
        parsed = _parsed_number(value.strip())
        return value if parsed is None else parsed
    return repr(value)


def _number(value: float) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if float(value).is_integer() and abs(value) < 2**53:
        return f"#{int(value)}"
    return f"#{float(value)!r}"


def _parsed_number(text: str) -> str | None:
    # Only plain decimal numbers: "0012" is an id, not twelve, and stays text.
    if not text or (len(text) > 1 and text[0] == "0" and text[1] != "."):
        return None
    try:
        number = float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return None
    return _number(number)


def args_key(tool: str, args: Mapping[str, Any]) -> tuple[str, Any]:
    """What two calls must share to get the same recorded answer."""
    return tool, normal_form(dict(args))


def short_args(args: Mapping[str, Any]) -> str:
    """The arguments as a note shows them (JSON, cut to a few hundred characters)."""
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= _ARGS_SHOWN else text[: _ARGS_SHOWN - 1] + "…"


def replayable(call: ToolCall) -> bool:
    """A recorded call with an outcome to serve: completed, or failed with its error."""
    return call.status in (CallStatus.COMPLETED, CallStatus.FAILED)


def recorded_outcome(call: ToolCall) -> Outcome:
    """The outcome a recorded call had, as a stub answers it."""
    if call.status is CallStatus.FAILED:
        message = call.error_message or "the recorded call failed"
        return Outcome(error=call.error or ToolErrorKind.HTTP_500, message=message)
    return Outcome(call.result)


@dataclass
class RecordedAnswers:
    """The recorded outcomes of one call, by tool and normalised arguments, in order."""

    queues: dict[tuple[str, Any], deque[Outcome]] = field(default_factory=dict)
    tools: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, calls: Iterable[ToolCall]) -> RecordedAnswers:
        answers = cls()
        for call in calls:
            if replayable(call):
                key = args_key(call.tool, call.args)
                answers.queues.setdefault(key, deque()).append(recorded_outcome(call))
                answers.tools.add(call.tool)
        return answers

    def take(self, tool: str, args: Mapping[str, Any]) -> Outcome | None:
        """The next recorded outcome of this call, or None when there is none (left)."""
        queue = self.queues.get(args_key(tool, args))
        return queue.popleft() if queue else None


@dataclass
class ReplayStub:
    """The stub of one tool in one replayed call (the `Stub` protocol of tools/stubs.py)."""

    tool: str
    answers: RecordedAnswers
    note: Note
    writes: bool = False  # nothing is written: the answers are the record's, not a backend's

    def run(
        self, args: Mapping[str, Any], backend: Backend, ctx: WriteContext, commit: bool
    ) -> Outcome:
        """The recorded outcome of the same call, else the clear error (and a note)."""
        outcome = self.answers.take(self.tool, args)
        if outcome is not None:
            self.note(NOTE_KIND, {"call_id": ctx.call_id, "tool": self.tool, "served": "recorded"})
            return outcome
        why = (
            "the recorded call never used this tool"
            if self.tool not in self.answers.tools
            else "the recorded call made no call (or no further call) with these arguments"
        )
        self.note(
            NOTE_KIND,
            {
                "call_id": ctx.call_id,
                "tool": self.tool,
                "served": "error",
                "args": short_args(args),
                "reason": why,
            },
        )
        return Outcome(error=ToolErrorKind.NOT_FOUND, message=f"{NO_RECORD} ({why})")
