"""How the fake server imitates real servers' request handling (`FakeLLMServer(dialect=...)`).

Only the *shape* of requests is imitated: what a server refuses, with its status and error
body, and what it silently ignores. Answers still come from the script's rules. Each
behaviour below names its source; docs/llm.md ("Server kinds") lists them per server.
"""

from __future__ import annotations

import itertools
import json
import re
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
        # llama-cpp-python 0.3.36's request validation, as recorded (tests/llm/recorded/):
        # HTTP 500 with pydantic's error, its traceback line left out.
        expected = "\"'text' or 'json_object'\""
        return _llamacpp_error(
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
            f"'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': {kind!r}, "
            f"'ctx': {{'expected': {expected}}}}}"
        )
    for index, message in enumerate(body.get("messages") or ()):
        if _assistant_without_content(message):
            # Recorded too: the assistant message's content must be a string, HTTP 500.
            return _llamacpp_error(
                "1 validation error:\n  {'type': 'string_type', 'loc': ('body', 'messages', "
                f"{index}, 'ChatCompletionRequestAssistantMessage', 'content'), "
                "'msg': 'Input should be a valid string', 'input': None}"
            )
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
    error = {"error": {"message": message, "type": "internal_server_error", "param": None,
                       "code": None}}  # fmt: skip
    return Answer(500, json.dumps(error).encode("utf-8"))


def _vllm_error(message: str) -> Answer:
    error = {"object": "error", "message": message, "type": "BadRequestError", "param": None,
             "code": 400}  # fmt: skip
    return Answer(400, json.dumps(error).encode("utf-8"))


def _openai_style(status: int, message: str, kind: str) -> Answer:
    error = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return Answer(status, json.dumps(error).encode("utf-8"))


# -- what each server tells about itself, and its answers to the capability probe ----------

# The context and slots the fake reports, as a server started with defaults might.
FAKE_CONTEXT = {"llamacpp": 4096, "vllm": 8192, "ollama": 2048}
FAKE_SLOTS = 1
# vLLM refuses tools when started without --enable-auto-tool-choice and a --tool-call-parser;
# a request without tool_choice defaults to "auto" there, so it is refused too.
VLLM_NO_AUTO_TOOLS = (
    '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
)


def tools_refusal(dialect: Dialect, body: dict[str, Any], tool_flags: bool) -> Answer | None:
    """vLLM's refusal of tools when it was started without its tool flags."""
    automatic = body.get("tool_choice") in (None, "auto")
    if dialect == "vllm" and not tool_flags and body.get("tools") and automatic:
        return _vllm_error(VLLM_NO_AUTO_TOOLS)
    return None


def models_answer(dialect: Dialect, model: str) -> Answer:
    """GET /v1/models as each server kind answers it."""
    entry: dict[str, Any] = {"id": model, "object": "model", "created": 0}
    if dialect == "vllm":
        entry.update(owned_by="vllm", max_model_len=FAKE_CONTEXT["vllm"], root=model)
    elif dialect == "llamacpp":
        # llama-server lists the model's training context in `meta`, not the server's n_ctx.
        entry.update(owned_by="llamacpp", meta={"n_ctx_train": 8192, "n_vocab": 49152})
    elif dialect == "ollama":
        entry.update(owned_by="library")
    else:
        entry.update(owned_by="system")
    return Answer(200, json.dumps({"object": "list", "data": [entry]}).encode())


def props_answer(dialect: Dialect) -> Answer | None:
    """GET /props: llama-server's settings (n_ctx, total_slots); other kinds have no route."""
    if dialect != "llamacpp":
        return None
    props = {
        "default_generation_settings": {"n_ctx": FAKE_CONTEXT["llamacpp"], "temperature": 0.8},
        "total_slots": FAKE_SLOTS,
        "chat_template": "",
    }
    return Answer(200, json.dumps(props).encode())


def show_answer(dialect: Dialect, body: dict[str, Any]) -> Answer | None:
    """POST /api/show: Ollama's model details, with `<arch>.context_length`."""
    if dialect != "ollama":
        return None
    info = {"general.architecture": "llama", "llama.context_length": FAKE_CONTEXT["ollama"]}
    return Answer(200, json.dumps({"model_info": info, "details": {"format": "gguf"}}).encode())


def probe_answer(dialect: Dialect, body: dict[str, Any], number: int) -> Answer:
    """The answer to a capability probe the dialect takes (refusals come first, as for any
    request): a one-token reply, a tool call where the server would make one, and the
    prompt's log-probabilities for an echo completion."""
    if "prompt" in body:
        return _probe_logprobs(dialect, body, number)
    message: dict[str, Any] = {"role": "assistant", "content": "OK"}
    calls_tools = body.get("tools") and (dialect != "llamacpp" or "tool_choice" in body)
    if calls_tools:
        name = body["tools"][0].get("function", {}).get("name", "tool")
        message = {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": f"call_probe_{number}", "type": "function",
                            "function": {"name": name, "arguments": "{}"}}],
        }  # fmt: skip
    completion = {
        "id": f"chatcmpl-probe-{number}",
        "object": "chat.completion",
        "created": 0,
        "model": str(body.get("model", "fake")),
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls_tools else "length"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    }  # fmt: skip
    return Answer(200, json.dumps(completion).encode())


def _probe_logprobs(dialect: Dialect, body: dict[str, Any], number: int) -> Answer:
    # The check word costs the most where the server reads the prompt right. llama-cpp-
    # python 0.3.36 scores each token by the distribution after it, which no shift of one
    # token repairs (its check sentence, measured: 9.9 bits a token on the nonsense word,
    # 12.4 on the others): here the values land two tokens late. Ollama's /v1/completions
    # returns no log-probabilities.
    prompt = str(body.get("prompt", ""))
    tokens = re.findall(r"\s*\S+", prompt)
    values: list[float | None] = [-12.0 if "zq" in t else -1.5 for t in tokens]
    if values:
        values[0] = None
    if dialect == "llamacpp":
        values = [None, None, *values[:-2]]
    offsets = list(itertools.accumulate((len(t) for t in tokens[:-1]), initial=0))
    logprobs = {"tokens": tokens, "token_logprobs": values, "text_offset": offsets,
                "top_logprobs": None}  # fmt: skip
    choice = {"index": 0, "text": prompt, "finish_reason": "length",
              "logprobs": None if dialect == "ollama" else logprobs}  # fmt: skip
    completion = {"id": f"cmpl-probe-{number}", "object": "text_completion", "created": 0,
                  "model": str(body.get("model", "fake")), "choices": [choice]}  # fmt: skip
    return Answer(200, json.dumps(completion).encode())
