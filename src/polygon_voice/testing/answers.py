"""Turning a rule into an HTTP answer in the exact OpenAI chat-completions format."""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from polygon_voice.testing.script import Rule, ScriptedRequest

_ERROR_TYPES = {429: "rate_limit_exceeded", 400: "invalid_request_error"}


@dataclass(frozen=True)
class Answer:
    """What the server sends: `body` None means say nothing and close the connection (reset
    it, with `reset`)."""

    status: int
    body: bytes | None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    reset: bool = False


def answer_for(rule: Rule | None, request: ScriptedRequest, number: int, latency: float) -> Answer:
    """The answer to request `number` (from 1) under `rule`, or a 400 when no rule matched."""
    if rule is None:
        return error_answer(
            400,
            f"fake LLM server: no rule matches request {number} "
            f"(role {request.role}, call {request.call}, last user message "
            f"{request.last_user[:80]!r}); add a rule without conditions as a catch-all",
            delay=latency,
        )
    delay = rule.latency if rule.latency is not None else latency
    if rule.hang is not None:
        return Answer(status=0, body=None, delay=rule.hang)
    if rule.reset:
        return Answer(status=0, body=None, delay=delay, reset=True)
    if rule.error is not None:
        headers = {}
        if rule.retry_after is not None:
            headers["Retry-After"] = f"{rule.retry_after:g}"
        message = rule.message or f"fake LLM server: scripted error {rule.error}"
        return error_answer(rule.error, message, delay=delay, headers=headers)
    if rule.raw is not None:
        return Answer(status=200, body=rule.raw.encode("utf-8"), delay=delay)
    if rule.logprobs is not None:
        return Answer(
            status=200,
            body=_text_completion(rule.logprobs, request, number, rule.logprobs_shift),
            delay=delay,
        )
    return Answer(status=200, body=_completion(rule, request, number), delay=delay)


def error_answer(
    status: int, message: str, *, delay: float = 0.0, headers: dict[str, str] | None = None
) -> Answer:
    """An OpenAI-style error body: {"error": {"message", "type", "code"}}."""
    kind = _ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    body = {"error": {"message": message, "type": kind, "param": None, "code": kind}}
    return Answer(status, json.dumps(body).encode("utf-8"), delay, headers or {})


def _completion(rule: Rule, request: ScriptedRequest, number: int) -> bytes:
    content = rule.text
    if rule.json_ is not None:
        content = json.dumps(rule.json_)
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    calls = [
        _tool_call(spec.name, spec.arguments, spec.id, number, i)
        for i, spec in enumerate(rule.tool_calls or ())
    ]
    if calls:
        message["tool_calls"] = calls
    tokens_in = rule.tokens_in if rule.tokens_in is not None else _prompt_tokens(request.body)
    tokens_out = (
        rule.tokens_out
        if rule.tokens_out is not None
        else _words(content) + sum(_words(call["function"]["arguments"]) for call in calls)
    )
    completion = {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.body.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }
    return json.dumps(completion).encode("utf-8")


def _text_completion(
    logprobs: dict[str, float], request: ScriptedRequest, number: int, shift: int = 0
) -> bytes:
    # A legacy completion echoing the prompt with its log-probabilities, as vLLM and llama.cpp
    # give for `echo: true, logprobs: 1` (max_tokens 1). Tokens are words with their leading
    # space, so the test can name each token's log-probability by its word.
    prompt = request.body.get("prompt")
    text = prompt if isinstance(prompt, str) else ""
    tokens = re.findall(r"\s*[\w']+|\s*[^\w\s]+|\s+", text)
    default = logprobs.get("*", -1.0)
    values: list[float | None] = [logprobs.get(t.strip(), default) for t in tokens]
    if values:
        values[0] = None  # the first token has no context, as on a real server
    if shift:
        # Each value lands `shift` tokens late: the misalignment some servers' echo has.
        values = ([None] * shift + values)[: len(values)]
    offsets = list(itertools.accumulate((len(t) for t in tokens[:-1]), initial=0))
    completion = {
        "id": f"cmpl-fake-{number}",
        "object": "text_completion",
        "created": int(time.time()),
        "model": str(request.body.get("model", "fake")),
        "choices": [
            {
                "index": 0,
                "text": text,
                "logprobs": {
                    "tokens": tokens,
                    "token_logprobs": values,
                    "text_offset": offsets if tokens else [],
                    "top_logprobs": None,
                },
                "finish_reason": "length",
            }
        ],
        "usage": {"prompt_tokens": len(tokens), "completion_tokens": 0},
    }
    return json.dumps(completion).encode("utf-8")


def _tool_call(
    name: str, arguments: dict[str, Any] | str, given_id: str | None, number: int, index: int
) -> dict[str, Any]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": given_id or f"call_fake_{number}_{index}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def _prompt_tokens(body: dict[str, Any]) -> int:
    # A stand-in for a tokenizer: words, so counts are deterministic and easy to predict.
    messages = body.get("messages") or []
    return sum(_words(m.get("content")) for m in messages if isinstance(m, dict))


def _words(text: object) -> int:
    return len(text.split()) if isinstance(text, str) else 0
