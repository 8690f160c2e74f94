"""One OpenAI-compatible LLM client for caller, judge and agent (see docs/llm.md).

Importing this package opens no connection and does not import the HTTP stack (aiohttp):
that happens at a client's first call (`pip install 'polygon-voice[llm]'`).
"""

from typing import TYPE_CHECKING

from polygon_voice._lazy import lazy_exports

if TYPE_CHECKING:
    from polygon_voice.llm.cache import ResponseCache, request_key
    from polygon_voice.llm.client import LLMClient, make_client
    from polygon_voice.llm.config import (
        DEFAULT_BASE_URL,
        DEFAULT_CACHE_DIR,
        ROLES,
        LLMSettings,
        Role,
        RoleConfig,
        load_llm_config,
    )
    from polygon_voice.llm.errors import LLMConfigError, LLMError, LLMFormatError, LLMRequestError
    from polygon_voice.llm.limits import EndpointLimits
    from polygon_voice.llm.reply import ChatReply, ToolCall
    from polygon_voice.llm.retry import RetryPolicy, parse_retry_after
    from polygon_voice.llm.structured import ResponseSchema
    from polygon_voice.llm.usage import RoleUsage, Usage
else:
    # Each name's module is imported when the name is first read.
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "polygon_voice.llm.cache": ("ResponseCache", "request_key"),
            "polygon_voice.llm.client": ("LLMClient", "make_client"),
            "polygon_voice.llm.config": (
                "DEFAULT_BASE_URL",
                "DEFAULT_CACHE_DIR",
                "ROLES",
                "LLMSettings",
                "Role",
                "RoleConfig",
                "load_llm_config",
            ),
            "polygon_voice.llm.errors": (
                "LLMConfigError",
                "LLMError",
                "LLMFormatError",
                "LLMRequestError",
            ),
            "polygon_voice.llm.limits": ("EndpointLimits",),
            "polygon_voice.llm.reply": ("ChatReply", "ToolCall"),
            "polygon_voice.llm.retry": ("RetryPolicy", "parse_retry_after"),
            "polygon_voice.llm.structured": ("ResponseSchema",),
            "polygon_voice.llm.usage": ("RoleUsage", "Usage"),
        },
    )

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_CACHE_DIR",
    "ROLES",
    "ChatReply",
    "EndpointLimits",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMFormatError",
    "LLMRequestError",
    "LLMSettings",
    "ResponseCache",
    "ResponseSchema",
    "RetryPolicy",
    "Role",
    "RoleConfig",
    "RoleUsage",
    "ToolCall",
    "Usage",
    "load_llm_config",
    "make_client",
    "parse_retry_after",
    "request_key",
]
