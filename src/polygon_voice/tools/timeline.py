"""When a sent call's effects land and its events reach the agent (TOOL-2, TOOL-3).

A call sent at ``t`` with latency ``L`` and timeout ``T``. "Runs" means the stub executes at
that time: it writes if the write lands, and otherwise runs dry to know what it would answer.

* no fault, ``L <= T``: runs at ``t+L``, its answer (result, or a stub error such as
  NOT_FOUND) is due at ``t+L``.
* no fault, ``L > T``: TIMEOUT at ``t+T``; the stub never runs, so nothing is written.
* invalid arguments: INVALID_ARGUMENTS at ``t+L`` (TIMEOUT at ``t+T`` if ``L > T``); the stub
  never runs and no fault applies.
* With a fault, the fault decides whether the write lands (`FaultSpec.lands`) and what the agent
  gets; a slow call still times out: every answer that would come after ``t+T`` becomes TIMEOUT
  at ``t+T`` (except the late result of late_success, which comes anyway).
  - timeout: TIMEOUT at ``t+T``; runs at ``t+L`` only if the write lands.
  - empty_result: runs at ``t+L``; a result of the empty value of the answer's type at ``t+L``.
  - wrong_record: runs at ``t+L``; another record as the result at ``t+L``.
  - http_500: HTTP_500 at ``t+L``; runs at ``t+L`` only if the write lands.
  - late_success: runs at ``t+L``; the answer is due at ``t+L+delay``. If that is after
    ``t+T``, TIMEOUT at ``t+T`` first and the answer follows as a late result (a stub error is
    not a success: then nothing follows the TIMEOUT).
  - duplicate_write: runs at ``t+L`` and, if the write lands and the stub writes, runs again at
    ``t+L+DUPLICATE_DELAY`` (the transport delivered the request twice); the agent hears only
    the first answer, at ``t+L``.

Steps at the same time keep the order given here (a run comes before the answer it produces).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from polygon_voice.model.tools import FaultKind, FaultSpec

DUPLICATE_DELAY = 0.05
"""Seconds between the two deliveries of a duplicated request (duplicate_write)."""


class Reply(StrEnum):
    """What the agent is told."""

    ANSWER = "answer"
    EMPTY = "empty"
    WRONG_RECORD = "wrong_record"
    HTTP_500 = "http_500"
    TIMEOUT = "timeout"
    INVALID_ARGUMENTS = "invalid_arguments"


@dataclass(frozen=True, slots=True)
class Run:
    """The stub executes: for real if `commit`, else as a dry run."""

    at: float
    commit: bool


@dataclass(frozen=True, slots=True)
class Deliver:
    """An event reaches the agent. `late` marks an answer after the call timed out."""

    at: float
    reply: Reply
    late: bool = False


Step = Run | Deliver

_REPLY_AT_LATENCY = {
    FaultKind.EMPTY_RESULT: Reply.EMPTY,
    FaultKind.WRONG_RECORD: Reply.WRONG_RECORD,
    FaultKind.HTTP_500: Reply.HTTP_500,
    FaultKind.DUPLICATE_WRITE: Reply.ANSWER,
}


def plan_call(
    sent_at: float,
    latency: float,
    timeout: float,
    fault: FaultSpec | None,
    *,
    args_valid: bool = True,
    writes: bool = False,
) -> list[Step]:
    """The steps of one sent call, in scheduling order."""
    done, deadline = sent_at + latency, sent_at + timeout
    if not args_valid:
        return [_reply_by(done, deadline, Reply.INVALID_ARGUMENTS)]
    if fault is None:
        if latency > timeout:
            return [Deliver(deadline, Reply.TIMEOUT)]
        return [Run(done, commit=True), Deliver(done, Reply.ANSWER)]
    lands = fault.lands()
    if fault.kind is FaultKind.TIMEOUT:
        return [
            *_runs(done, lands, writes, twice=False, needed=False),
            Deliver(deadline, Reply.TIMEOUT),
        ]
    if fault.kind is FaultKind.LATE_SUCCESS:
        return [Run(done, commit=lands), *_late(done + fault.delay, deadline)]
    reply = _REPLY_AT_LATENCY[fault.kind]
    twice = fault.kind is FaultKind.DUPLICATE_WRITE
    needed = reply is not Reply.HTTP_500
    return [
        *_runs(done, lands, writes, twice=twice, needed=needed),
        _reply_by(done, deadline, reply),
    ]


def _reply_by(at: float, deadline: float, reply: Reply) -> Deliver:
    return Deliver(deadline, Reply.TIMEOUT) if at > deadline else Deliver(at, reply)


def _runs(done: float, lands: bool, writes: bool, *, twice: bool, needed: bool) -> list[Run]:
    # A run is needed when its write lands or when the reply is built from the stub's answer.
    if lands:
        if twice and writes:
            return [Run(done, commit=True), Run(done + DUPLICATE_DELAY, commit=True)]
        return [Run(done, commit=True)]
    return [Run(done, commit=False)] if needed else []


def _late(due: float, deadline: float) -> list[Deliver]:
    if due <= deadline:
        return [Deliver(due, Reply.ANSWER)]
    return [Deliver(deadline, Reply.TIMEOUT), Deliver(due, Reply.ANSWER, late=True)]
