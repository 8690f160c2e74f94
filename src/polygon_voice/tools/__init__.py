"""Stub tools over a versioned in-memory backend, with virtual latency and faults (TOOL-1..4).

Stand-ins for an agent's real tools (calendar, CRM, transfer)::

    toolset = ToolSet(suite.tools)                        # once per suite
    backend = Backend(records)                            # once per conversation
    rt = toolset.open(backend, seed_parts=(run_seed, conversation_id))
    call = rt.prepare(action, now)                        # PrepareToolCall -> ToolCall
    rt.send(call.call_id, now)
    events = rt.advance(rt.next_due())                    # [(time, ToolResult | ToolError)]

Time is virtual (float seconds); nothing sleeps, and the same seed parts give the same
latencies, faults and timeline. The semantics are written down where they are implemented:

* `polygon_voice.tools.stubs` — what fixed, template, rules and stateful stubs answer,
  idempotency keys;
* `polygon_voice.tools.templates` — ``{name}`` placeholders;
* `polygon_voice.tools.backend` — versions, the write log, the final state;
* `polygon_voice.tools.latency` and `polygon_voice.tools.faults` — seeded draws;
* `polygon_voice.tools.timeline` — when writes land and events arrive, per fault kind;
* `polygon_voice.tools.runtime` — call statuses, cancelling, protocol errors;
* `polygon_voice.tools.toolset` — configuration checks.
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.tools.backend import Backend, WriteContext
    from polygon_voice.tools.errors import ToolConfigError, ToolUsageError
    from polygon_voice.tools.faults import empty_like, pick_fault
    from polygon_voice.tools.latency import sample_latency
    from polygon_voice.tools.runtime import CompiledTool, ToolRuntime
    from polygon_voice.tools.templates import render
    from polygon_voice.tools.timeline import DUPLICATE_DELAY
    from polygon_voice.tools.toolset import ToolSet
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.tools.backend": ("Backend", "WriteContext"),
            "polygon_voice.tools.errors": ("ToolConfigError", "ToolUsageError"),
            "polygon_voice.tools.faults": ("empty_like", "pick_fault"),
            "polygon_voice.tools.latency": ("sample_latency",),
            "polygon_voice.tools.runtime": ("CompiledTool", "ToolRuntime"),
            "polygon_voice.tools.templates": ("render",),
            "polygon_voice.tools.timeline": ("DUPLICATE_DELAY",),
            "polygon_voice.tools.toolset": ("ToolSet",),
        },
    )

__all__ = [
    "DUPLICATE_DELAY",
    "Backend",
    "CompiledTool",
    "ToolConfigError",
    "ToolRuntime",
    "ToolSet",
    "ToolUsageError",
    "WriteContext",
    "empty_like",
    "pick_fault",
    "render",
    "sample_latency",
]
