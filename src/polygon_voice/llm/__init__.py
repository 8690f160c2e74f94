"""One OpenAI-compatible LLM client for caller, judge and agent (see docs/llm.md).

Importing this package opens no connection and does not import the `openai` SDK: that
happens at a client's first call (`pip install 'polygon-voice[llm]'`).
"""

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
