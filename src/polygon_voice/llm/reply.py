"""Reading a chat-completions response body into a `ChatReply`."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from polygon_voice.llm.errors import LLMFormatError


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function the model asked to call, with its arguments parsed (and as sent)."""

    id: str
    name: str
    arguments: dict[str, Any]
    arguments_json: str


@dataclass(frozen=True, slots=True)
class ChatReply:
    """One answer: text and/or tool calls, the parsed JSON for schema requests, token counts."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    parsed: Any = None
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = False
    finish_reason: str | None = None
    model: str | None = None

    def with_parsed(self, parsed: Any) -> ChatReply:
        """The same reply carrying the structured answer."""
        return replace(self, parsed=parsed)


def parse_completion(raw: bytes, *, cached: bool = False) -> ChatReply:
    """The first choice of a chat completion; LLMFormatError when the body is not one."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = json.loads(raw)
        choice = body["choices"][0]
        message = choice["message"]
        usage = body.get("usage") or {}
        return ChatReply(
            text=_content(message.get("content")),
            tool_calls=tuple(_tool_call(call) for call in message.get("tool_calls") or ()),
            tokens_in=int(usage.get("prompt_tokens") or 0),
            tokens_out=int(usage.get("completion_tokens") or 0),
            cached=cached,
            finish_reason=choice.get("finish_reason"),
            model=body.get("model"),
        )
    except LLMFormatError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise LLMFormatError(
            f"the endpoint's answer is not a chat completion ({type(exc).__name__}: {exc})",
            raw=text,
        ) from None


def _content(content: object) -> str | None:
    # Some servers answer with a list of content parts instead of one string.
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    if content is None or isinstance(content, str):
        return content
    raise TypeError(f"message content is a {type(content).__name__}")


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = call["function"]
    arguments_json = function.get("arguments") or ""
    if not isinstance(arguments_json, str):
        # A few servers send the arguments as an object rather than a JSON string.
        arguments_json = json.dumps(arguments_json)
    try:
        arguments = json.loads(arguments_json) if arguments_json.strip() else {}
    except ValueError as exc:
        raise LLMFormatError(
            f"the arguments of tool call {function.get('name')!r} are not JSON: {exc}",
            raw=arguments_json,
        ) from None
    if not isinstance(arguments, dict):
        raise LLMFormatError(
            f"the arguments of tool call {function.get('name')!r} are not a JSON object",
            raw=arguments_json,
        )
    return ToolCall(
        id=str(call.get("id") or ""),
        name=str(function["name"]),
        arguments=arguments,
        arguments_json=arguments_json,
    )
