"""An event loop whose worker threads never keep a run from ending.

An agent that calls blocking code through `asyncio.to_thread` (a blocking HTTP library, a
database driver) and hangs there is cut off by the engine's `agent_turn_timeout`, but the
thread itself cannot be stopped. asyncio's default executor would then hold the run twice:
its few threads fill up with stuck work, so healthy calls wait for a free one, and
`asyncio.run` waits for every thread before it returns, so the process never exits.
`run_to_end` gives the loop an executor of daemon threads, one per task: nothing to
exhaust, and nothing the end of the run or of the process waits for.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

_P = ParamSpec("_P")
_T = TypeVar("_T")


class DaemonThreads(ThreadPoolExecutor):
    """Runs each task in a daemon thread of its own; shutting down never waits for them.

    A `ThreadPoolExecutor` only in name (asyncio accepts no other default executor): its
    pool is never used."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self._shut_down = False

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        """Start `fn(*args, **kwargs)` in a new daemon thread."""
        if self._shut_down:
            raise RuntimeError("cannot schedule new work after shutdown")
        future: Future[_T] = Future()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to whoever awaits the future
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=work, name="polygon-agent-thread", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new work; threads still running are left to end (or die with the process)."""
        self._shut_down = True


def run_to_end(main: Coroutine[Any, Any, _T]) -> _T:
    """`asyncio.run(main)`, with `DaemonThreads` as the loop's default executor."""
    with asyncio.Runner() as runner:
        runner.get_loop().set_default_executor(DaemonThreads())
        return runner.run(main)
