"""The public API of polygon_voice.tools is pinned: changing it is a deliberate act."""

from __future__ import annotations

import polygon_voice.tools as tools


def test_public_names() -> None:
    assert tools.__all__ == [
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
    for name in tools.__all__:
        assert getattr(tools, name) is not None


def test_usage_and_config_errors_are_exceptions_the_engine_can_catch() -> None:
    assert issubclass(tools.ToolUsageError, Exception)
    assert issubclass(tools.ToolConfigError, ValueError)
