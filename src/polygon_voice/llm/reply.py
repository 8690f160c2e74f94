"""Reading a chat-completions response body into a `ChatReply`."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from polygon_voice.llm.errors import LLMFormatError
from polygon_voice.textsafe import storable


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
    # How many invalid code points (bad UTF-8, lone surrogates, NUL) became U+FFFD (textsafe).
    sanitised: int = 0

    def with_parsed(self, parsed: Any) -> ChatReply:
        """The same reply carrying the structured answer."""
        return replace(self, parsed=parsed)


def parse_completion(raw: bytes, *, cached: bool = False) -> ChatReply:
    """The first choice of a chat completion; LLMFormatError when the body is not one."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body, sanitised = _storable_body(raw, text)
        choice = body["choices"][0]
        message = choice["message"]
        usage = body.get("usage") or {}
        calls = [_tool_call(call) for call in message.get("tool_calls") or ()]
        return ChatReply(
            text=_content(message.get("content")),
            tool_calls=tuple(call for call, _ in calls),
            sanitised=sanitised + sum(count for _, count in calls),
            tokens_in=_token_count(usage.get("prompt_tokens")),
            tokens_out=_token_count(usage.get("completion_tokens")),
            cached=cached,
            finish_reason=choice.get("finish_reason"),
            model=body.get("model"),
        )
    except LLMFormatError:
        raise
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as exc:
        # RecursionError: JSON nested deeper than the parser goes is an unreadable answer too.
        raise LLMFormatError(
            f"the endpoint's answer is not a chat completion ({type(exc).__name__}: {exc})",
            raw=text,
        ) from None


def reported_tokens(raw: bytes) -> tuple[int, int]:
    """The (input, output) tokens a body reports, whatever else is wrong with it; (0, 0) when
    it reports none readably."""
    try:
        usage = json.loads(raw).get("usage") or {}
        return _token_count(usage.get("prompt_tokens")), _token_count(
            usage.get("completion_tokens")
        )
    except (ValueError, TypeError, AttributeError, RecursionError):
        return 0, 0


def _token_count(value: object) -> int:
    # A count the server reports: a non-negative whole number, else 0 (`Infinity`, -3, "a lot"
    # and a list are no counts, and must not fail an answer that is otherwise fine).
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return 0
    try:
        return max(0, int(value))
    except (ValueError, OverflowError):
        return 0


def storable_body(raw: bytes) -> bytes:
    """`raw` as a body that reads back exactly as `parse_completion` read it: the cache
    keeps this, never a body with code points no store can hold."""
    body, sanitised = _storable_body(raw, raw.decode("utf-8", errors="replace"))
    return raw if not sanitised else json.dumps(body, ensure_ascii=False).encode()


def _storable_body(raw: bytes, text: str) -> tuple[Any, int]:
    # Bytes that are not UTF-8 (decoded into `text` with replacement) and JSON escapes of
    # lone surrogates ("\ud800") become U+FFFD, counted, rather than failing the answer or,
    # later, the store.
    body, count = json.loads(text), 0
    if b"\\u" in raw:
        # Only a `\u` escape gives a lone surrogate or a NUL (the parser refuses raw control
        # characters in strings): without one, the walk over the whole answer is skipped.
        body, count = storable(body)
    return body, count + (text.encode() != raw)


def _content(content: object) -> str | None:
    # Some servers answer with a list of content parts instead of one string.
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    if content is None or isinstance(content, str):
        return content
    raise TypeError(f"message content is a {type(content).__name__}")


def _tool_call(call: dict[str, Any]) -> tuple[ToolCall, int]:
    function = call["function"]
    arguments_json = function.get("arguments") or ""
    if not isinstance(arguments_json, str):
        # A few servers send the arguments as an object rather than a JSON string.
        arguments_json = json.dumps(arguments_json)
    try:
        # strict=False: llama.cpp's JSON grammar lets a model write a raw line break inside a
        # string (recorded from llama-cpp-python 0.3.36); the value is still JSON as meant.
        arguments = json.loads(arguments_json, strict=False) if arguments_json.strip() else {}
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
    # The arguments string may itself escape a lone surrogate: cleaned like the body.
    arguments, count = storable(arguments) if "\\u" in arguments_json else (arguments, 0)
    tool_call = ToolCall(
        id=str(call.get("id") or ""),
        name=str(function["name"]),
        arguments=arguments,
        arguments_json=arguments_json,
    )
    return tool_call, count
