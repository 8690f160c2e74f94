"""One concurrency limit per endpoint, shared by every client that talks to it."""

from __future__ import annotations

import asyncio
import logging
import weakref

log = logging.getLogger("polygon_voice.llm")


class EndpointLimits:
    """An `asyncio.Semaphore` per (event loop, base URL).

    The first client to use an endpoint in a loop sets its size; a later client asking for
    another size shares the existing one (and a debug line says so). Semaphores belong to one
    event loop, hence one table per loop, dropped with the loop.
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[str, tuple[asyncio.Semaphore, int]]
        ] = weakref.WeakKeyDictionary()

    def slot(self, base_url: str, limit: int) -> asyncio.Semaphore:
        """The semaphore guarding `base_url` in the running loop."""
        table = self._by_loop.setdefault(asyncio.get_running_loop(), {})
        key = base_url.rstrip("/")
        entry = table.get(key)
        if entry is None:
            entry = table[key] = (asyncio.Semaphore(limit), limit)
        elif entry[1] != limit:
            log.debug("endpoint %s keeps its limit %s (asked: %s)", key, entry[1], limit)
        return entry[0]


# The process-wide table that clients use unless given their own. Empty until first used.
SHARED_LIMITS = EndpointLimits()
