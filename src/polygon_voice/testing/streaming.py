"""A finished chat completion told as OpenAI's server-sent event stream (`stream: true`).

Frameworks such as LiveKit Agents and Pipecat always stream their model requests, so the fake
server must speak the stream too: the same answer, as `chat.completion.chunk` events — the
role, the text, each tool call (name and arguments in one delta), the finish reason, the usage
when `stream_options.include_usage` asks for it — then `data: [DONE]`.
"""

from __future__ import annotations

import json
from typing import Any

from polygon_voice.testing.answers import Answer

EVENT_STREAM = "text/event-stream"


def as_stream(answer: Answer, request: dict[str, Any]) -> Answer:
    """`answer` as an event stream when it is a successful chat completion; anything else
    (an error, a raw body, a hang) is sent as it is, as real servers send errors as JSON."""
    if answer.status != 200 or answer.body is None:
        return answer
    try:
        completion = json.loads(answer.body)
    except ValueError:
        return answer
    if not isinstance(completion, dict) or completion.get("object") != "chat.completion":
        return answer
    options = request.get("stream_options")
    usage = isinstance(options, dict) and bool(options.get("include_usage"))
    events = [f"data: {json.dumps(chunk)}\n\n" for chunk in _chunks(completion, usage)]
    events.append("data: [DONE]\n\n")
    headers = {**answer.headers, "Content-Type": EVENT_STREAM}
    return Answer(200, "".join(events).encode("utf-8"), answer.delay, headers)


def _chunks(completion: dict[str, Any], usage: bool) -> list[dict[str, Any]]:
    choice = completion["choices"][0]
    message = choice["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("content"):
        deltas.append({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or ()):
        deltas.append({"tool_calls": [{"index": index, **call}]})
    chunks = [_chunk(completion, delta, None) for delta in deltas]
    chunks.append(_chunk(completion, {}, choice.get("finish_reason") or "stop"))
    if usage:
        chunks.append({**_chunk(completion, {}, None), "choices": [], "usage": completion["usage"]})
    return chunks


def _chunk(completion: dict[str, Any], delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
