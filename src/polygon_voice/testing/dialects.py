"""How the fake server imitates real servers' request handling (`FakeLLMServer(dialect=...)`).

Only the *shape* of requests is imitated: what a server refuses, with its status and error
body, and what it silently ignores. Answers still come from the script's rules. Each
behaviour below names its source; docs/llm.md ("Server kinds") lists them per server.
"""

from __future__ import annotations

import json
from typing import Any, Literal, get_args

from polygon_voice.testing.answers import Answer
from polygon_voice.testing.script import Rule

Dialect = Literal["openai", "llamacpp", "vllm", "ollama"]
DIALECTS: tuple[Dialect, ...] = get_args(Dialect)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
# A generation without a limit ends when the server stops, or the client gives up first.
UNLIMITED_SECONDS = 3600.0


def refusal(dialect: Dialect, body: dict[str, Any]) -> Answer | None:
    """The error answer `dialect`'s server gives this request, or None when it takes it."""
    if dialect == "llamacpp":
        return _llamacpp_refusal(body)
    if dialect == "vllm":
        return _vllm_refusal(body)
    if dialect == "ollama":
        return _ollama_refusal(body)
    return None


def adjusted(dialect: Dialect, body: dict[str, Any], rule: Rule | None) -> Rule | None:
    """The rule as `dialect`'s server would carry it out for this request."""
    if dialect == "llamacpp" and rule is not None and rule.tool_calls and "tool_choice" not in body:
        # Seen against llama-cpp-python's server: tools offered without tool_choice are not
        # called, the model answers in text.
        return rule.model_copy(update={"tool_calls": None, "text": rule.text or ""})
    return rule


def unlimited(dialect: Dialect, body: dict[str, Any]) -> bool:
    """Whether the server would generate without a limit (llama.cpp reads max_tokens 0 so)."""
    return dialect == "llamacpp" and body.get("max_tokens") == 0


def _llamacpp_refusal(body: dict[str, Any]) -> Answer | None:
    kind = _format_type(body)
    if kind not in (None, "text", "json_object"):
        # The llama.cpp server's words before it took json_schema (ggml-org/llama.cpp PR
        # 9527), as ik_llama.cpp issue 778 quotes them; llama-cpp-python refuses it with 500 too.
        message = f'response_format type must be one of "text" or "json_object", but got: {kind}'
        return _llamacpp_error(message)
    for message in body.get("messages") or ():
        if _assistant_without_content(message):
            # llama-cpp-python's chat templates add the content to a string: HTTP 500.
            return _llamacpp_error('can only concatenate str (not "NoneType") to str')
    return None


def _vllm_refusal(body: dict[str, Any]) -> Answer | None:
    # vLLM's request model bounds seed to torch.long and SamplingParams wants max_tokens >= 1;
    # its errors are {"object": "error", "message", "type": "BadRequestError", "code": 400}.
    seed = body.get("seed")
    if isinstance(seed, int) and not INT64_MIN <= seed <= INT64_MAX:
        return _vllm_error(
            "[{'type': 'less_than_equal', 'loc': ('body', 'seed'), "
            f"'msg': 'Input should be less than or equal to {INT64_MAX}', 'input': {seed}}}]"
        )
    if body.get("max_tokens") == 0:
        return _vllm_error("max_tokens must be at least 1, got 0.")
    kind = _format_type(body)
    if kind not in (None, "text", "json_object", "json_schema", "structural_tag"):
        return _vllm_error(f"response_format type {kind!r} is not supported")
    return None


def _ollama_refusal(body: dict[str, Any]) -> Answer | None:
    # Ollama is written in Go: a seed past int64 fails to decode into the request struct.
    seed = body.get("seed")
    if isinstance(seed, int) and not INT64_MIN <= seed <= INT64_MAX:
        message = (
            f"json: cannot unmarshal number {seed} into Go struct field "
            "ChatCompletionRequest.seed of type int"
        )
        return _openai_style(400, message, "invalid_request_error")
    return None


def _assistant_without_content(message: object) -> bool:
    # `content: null` (a tool-call message as OpenAI's SDK writes it), not a missing key.
    return (
        isinstance(message, dict)
        and message.get("role") == "assistant"
        and "content" in message
        and message["content"] is None
    )


def _format_type(body: dict[str, Any]) -> str | None:
    given = body.get("response_format")
    return str(given.get("type")) if isinstance(given, dict) else None


def _llamacpp_error(message: str) -> Answer:
    error = {"error": {"code": 500, "message": message, "type": "server_error"}}
    return Answer(500, json.dumps(error).encode("utf-8"))


def _vllm_error(message: str) -> Answer:
    error = {"object": "error", "message": message, "type": "BadRequestError", "param": None,
             "code": 400}  # fmt: skip
    return Answer(400, json.dumps(error).encode("utf-8"))


def _openai_style(status: int, message: str, kind: str) -> Answer:
    error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Answer(status, json.dumps(error).encode("utf-8"))
