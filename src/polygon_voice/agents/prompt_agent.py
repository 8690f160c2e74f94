"""An agent defined by a YAML file: model, system prompt, sampling profile; Polygon runs it.

The suite's stub tools are offered to the model as function-calling schemas. The model's
text becomes `Say`, its tool calls `PrepareToolCall` + `SendToolCall`; a tool's answer goes
back as a `tool` message and the model is asked again. Two control functions, `end_call` and
`transfer_call`, let the model hang up or hand over (see docs/agents.md).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from polygon_voice.agents.base import AgentContext
from polygon_voice.llm import LLMClient, LLMConfigError, RoleConfig, load_llm_config
from polygon_voice.llm.errors import LLMError, LLMRequestError, ModelUnavailable
from polygon_voice.llm.reply import ChatReply
from polygon_voice.llm.usage import RequestActivity
from polygon_voice.model import (
    Action,
    BargeIn,
    CallerSaid,
    CallStarted,
    EndCall,
    Event,
    PrepareToolCall,
    Say,
    SendToolCall,
    Silence,
    TimerFired,
    ToolError,
    ToolResult,
    ToolSpec,
    Transfer,
)
from polygon_voice.scenario.errors import SuiteError
from polygon_voice.scenario.parsing import read_data
from polygon_voice.scenario.validation import validation_error
from polygon_voice.seeding import content_hash

END_CALL = "end_call"
TRANSFER_CALL = "transfer_call"
# Answers that will not change within a run (a refused key, an unknown model): after the
# first, the other calls fail at once rather than each asking the endpoint again.
_FINAL_STATUSES = frozenset({401, 403, 404})
_CONTROL_TOOLS: dict[str, dict[str, Any]] = {
    END_CALL: {
        "description": "Hang up the call once the caller's request is handled or they say bye.",
        "parameters": {"type": "object", "properties": {"reason": {"type": "string"}}},
    },
    TRANSFER_CALL: {
        "description": "Transfer the caller to a human or another line.",
        "parameters": {"type": "object", "properties": {"target": {"type": "string"}}},
    },
}


class PromptAgentError(Exception):
    """A prompt-agent configuration that cannot be loaded."""


class PromptAgentConfig(BaseModel):
    """The YAML file's content. Paths are relative to the file's folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: str = Field(description="file holding the system prompt (Markdown or text)")
    llm_config: str | None = Field(
        default=None, description="a Polygon config file whose llm.agent role is used"
    )
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="sampling profile: temperature, top_p, max_tokens, ... sent as given",
    )
    seed: bool = Field(default=True, description="send the call's derived seed to the model")
    control_tools: bool = Field(default=True, description="offer end_call and transfer_call")
    max_rounds: int = Field(default=4, ge=1, description="model calls per event at most")


def _read_config(path: Path) -> PromptAgentConfig:
    """The agent file through the safe reader; errors name its line and field (did you mean)."""
    file = str(path)
    try:
        data, root = read_data(path, file)
        if not isinstance(data, dict):
            raise SuiteError(file, "an agent file is a mapping with at least 'system_prompt'")
        try:
            return PromptAgentConfig.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc, root, PromptAgentConfig, file) from None
    except SuiteError as exc:
        raise PromptAgentError(str(exc)) from None


class PromptAgentFactory:
    """Builds one `PromptAgent` per call; `describe()` is what a run records about it."""

    def __init__(self, path: str | Path, env: Mapping[str, str] | None = None) -> None:
        self.path = Path(path)
        self.config = _read_config(self.path)
        base = self.path.parent
        prompt_path = base / self.config.system_prompt
        try:
            self.system_prompt = prompt_path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptAgentError(
                f"{self.path}: system_prompt {prompt_path}: cannot read: {exc.strerror}"
            ) from None
        except UnicodeDecodeError as exc:
            raise PromptAgentError(
                f"{self.path}: system_prompt {prompt_path}: not valid UTF-8 text "
                f"(byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"
            ) from None
        self.role_config = self._role_config(base, env)
        # One client for every call of the run: it holds the connection pool and the usage.
        self._client: LLMClient | None = None
        self._env = env
        self._given_up: ModelUnavailable | None = None
        # The model's requests as they happen (for progress bars), live before the first call.
        self.activity = RequestActivity()

    def _role_config(self, base: Path, env: Mapping[str, str] | None) -> RoleConfig:
        cfg = self.config
        llm_path = base / cfg.llm_config if cfg.llm_config is not None else None
        try:
            role = load_llm_config(llm_path, env).role("agent")
            overrides = {
                key: value
                for key, value in (
                    ("model", cfg.model),
                    ("base_url", cfg.base_url),
                    ("api_key_env", cfg.api_key_env),
                )
                if value is not None
            }
            # The file's own settings win over the config file and the environment.
            role = RoleConfig.model_validate({**role.model_dump(), **overrides})
        except (LLMConfigError, ValidationError) as exc:
            raise PromptAgentError(f"{self.path}: model settings: {exc}") from None
        if not role.configured:
            raise PromptAgentError(
                f"{self.path}: no model: give `model:`, an `llm_config:` with llm.agent.model, "
                "or POLYGON_AGENT_MODEL"
            )
        return role

    @property
    def prompt_version(self) -> str:
        """The system prompt file's content hash."""
        return content_hash(self.system_prompt)

    @property
    def profile_hash(self) -> str:
        """The sampling profile's content hash (key order does not matter)."""
        return content_hash(json.dumps(self.config.params, sort_keys=True, default=str))

    @property
    def config_hash(self) -> str:
        """One hash over everything that shapes the agent's answers (never the API key)."""
        parts = {
            "config": self.config.model_dump(mode="json"),
            "prompt": self.prompt_version,
            "model": self.role_config.model,
            "base_url": self.role_config.base_url,
        }
        return content_hash(json.dumps(parts, sort_keys=True))

    def describe(self) -> dict[str, object]:
        """What a run stores so its results can be traced to this exact agent."""
        return {
            "agent_kind": "prompt",
            "agent_model": self.role_config.model,
            "agent_prompt_version": self.prompt_version,
            "agent_profile_hash": self.profile_hash,
            "agent_config_hash": self.config_hash,
        }

    def client(self) -> LLMClient:
        """The shared client, opened at the first call."""
        if self._client is None:
            self._client = LLMClient(self.role_config, env=self._env, activity=self.activity)
        return self._client

    async def ask(self, messages: list[dict[str, Any]], **options: Any) -> ChatReply:
        """One model turn; any failure of the model is raised as ModelUnavailable.

        The engine ends the call with `agent raised ModelUnavailable: ...`, which the run
        counts as the agent's model failing (infrastructure), not as the agent's behaviour.
        """
        if self._given_up is not None:
            raise ModelUnavailable(str(self._given_up))
        try:
            return await self.client().chat(messages, **options)
        except LLMError as exc:
            failure = ModelUnavailable(str(exc))
            if _final(exc):
                self._given_up = failure
            raise failure from None

    def __call__(self, context: AgentContext) -> PromptAgent:
        return PromptAgent(self, context)

    async def aclose(self) -> None:
        """Close the shared client's connections (the runner calls this when a run ends)."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _final(exc: LLMError) -> bool:
    """Whether the failure would be the same for every call of the run."""
    if isinstance(exc, LLMConfigError):  # no key, no `llm` extra
        return True
    return isinstance(exc, LLMRequestError) and exc.status in _FINAL_STATUSES


def tool_schemas(tools: Mapping[str, ToolSpec], control: bool) -> list[dict[str, Any]]:
    """The suite's tools (plus the control functions) in the chat-completions `tools` shape."""
    functions: dict[str, dict[str, Any]] = {
        name: {"description": spec.description, "parameters": spec.parameters}
        for name, spec in tools.items()
    }
    if control:
        for name, schema in _CONTROL_TOOLS.items():
            # A suite tool of the same name is the real one: it is not shadowed.
            functions.setdefault(name, schema)
    return [
        {"type": "function", "function": {"name": name, **schema}}
        for name, schema in sorted(functions.items())
    ]


class PromptAgent:
    """One call's conversation with the model; the message history lives here."""

    def __init__(self, factory: PromptAgentFactory, context: AgentContext) -> None:
        self._factory = factory
        self._context = context
        self._tools = tool_schemas(context.tools, factory.config.control_tools)
        self._messages: list[dict[str, Any]] = [
            {"role": "system", "content": factory.system_prompt}
        ]
        # Calls the last assistant message made that still wait for their tool message.
        self._pending: list[str] = []

    async def respond(self, event: Event) -> AsyncIterator[Action]:
        """Add the event to the history, then ask the model until it waits for something."""
        if not self._record_event(event):
            return
        cfg = self._factory.config
        for _ in range(cfg.max_rounds):
            reply = await self._factory.ask(
                self._messages,
                tools=self._tools or None,
                seed=self._context.seed if cfg.seed else None,
                params=cfg.params,
            )
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if reply.tool_calls:
                message["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments_json},
                    }
                    for call in reply.tool_calls
                ]
            self._messages.append(message)
            if reply.text:
                yield Say(text=reply.text)
            ask_again = False
            for index, call in enumerate(reply.tool_calls):
                # Servers that send no id still need a unique one per call.
                call_id = call.id or f"call-{len(self._messages)}-{index}"
                if call.name not in self._context.tools:
                    if call.name == END_CALL and cfg.control_tools:
                        yield EndCall(reason=str(call.arguments.get("reason", "")))
                        return
                    if call.name == TRANSFER_CALL and cfg.control_tools:
                        yield Transfer(target=str(call.arguments.get("target") or "human"))
                        return
                    # Told to the model instead of sent: an unknown tool would end the call
                    # as a protocol error, which is the harness's mapping, not the model's.
                    self._tool_message(call_id, {"error": f"no tool named {call.name!r}"})
                    ask_again = True
                    continue
                self._pending.append(call_id)
                yield PrepareToolCall(call_id=call_id, tool=call.name, args=call.arguments)
                yield SendToolCall(call_id=call_id)
            if self._pending or not ask_again:
                return

    def _record_event(self, event: Event) -> bool:
        """Append the event to the history; True when the model should answer now."""
        if isinstance(event, ToolResult | ToolError):
            content: dict[str, Any] = (
                {"result": event.result}
                if isinstance(event, ToolResult)
                else {"error": event.error.value, "message": event.message}
            )
            if event.call_id in self._pending:
                self._pending.remove(event.call_id)
                self._tool_message(event.call_id, content)
                # With parallel calls the model answers once all of them are back.
                return not self._pending
            self._note(f"[late answer of tool call {event.call_id}: {json.dumps(content)}]")
            return True
        text = _event_text(event)
        if text is None:
            return False
        self._note(text)
        return True

    def _note(self, text: str) -> None:
        # Chat APIs reject a user message between tool calls and their answers, so calls
        # still out get a placeholder; their real answer arrives later as a note.
        for call_id in self._pending:
            self._tool_message(call_id, {"status": "pending: the answer will follow"})
        self._pending.clear()
        self._messages.append({"role": "user", "content": text})

    def _tool_message(self, call_id: str, content: object) -> None:
        self._messages.append(
            {"role": "tool", "tool_call_id": call_id, "content": json.dumps(content, default=str)}
        )


def _event_text(event: Event) -> str | None:
    if isinstance(event, CallStarted):
        return "[the call has connected]"
    if isinstance(event, CallerSaid):
        return event.text
    if isinstance(event, BargeIn):
        # Background noise is not something the model should answer.
        return f"[the caller interrupts] {event.text}" if event.text else None
    if isinstance(event, Silence):
        return f"[the caller has been silent for {event.seconds:g} seconds]"
    if isinstance(event, TimerFired):
        return f"[timer {event.name} fired]"
    return None


def load_prompt_agent(path: str | Path, base_dir: Path | None = None) -> PromptAgentFactory:
    """The factory for `prompt:path/to/agent.yaml` (relative to `base_dir` when given)."""
    file = Path(path)
    if not file.is_absolute() and base_dir is not None and not file.exists():
        file = base_dir / file
    return PromptAgentFactory(file)
